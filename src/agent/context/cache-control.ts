import type { MessageParam, ToolUnion } from '../model/types.js';

const EPHEMERAL = { type: 'ephemeral' as const };

/**
 * Prompt-cache breakpoints (at most 4): the last tool and the system prompt (the stable prefix of
 * every step), the last block of the latest user message (what the next step will read back), and
 * the last block of the user message before it (where the previous step wrote, so this step reads
 * the longest cached prefix even when the new messages hold many blocks). Returns new objects.
 */
export function withCacheBreakpoints(input: { tools: ToolUnion[]; system: string; messages: MessageParam[] }): {
  tools: ToolUnion[];
  system: { type: 'text'; text: string; cache_control: typeof EPHEMERAL }[];
  messages: MessageParam[];
  breakpoints: number;
} {
  const tools = input.tools.map((t, i) => (i === input.tools.length - 1 ? { ...t, cache_control: EPHEMERAL } : t)) as ToolUnion[];
  const system = [{ type: 'text' as const, text: input.system, cache_control: EPHEMERAL }];
  const messages = input.messages.map((m) => ({ ...m, content: Array.isArray(m.content) ? m.content.map((b) => ({ ...b })) : m.content })) as MessageParam[];
  const userIdx = messages.map((m, i) => (m.role === 'user' ? i : -1)).filter((i) => i >= 0);
  let breakpoints = (tools.length > 0 ? 1 : 0) + 1;
  for (const idx of userIdx.slice(-2)) {
    const content = messages[idx]!.content;
    if (Array.isArray(content) && content.length > 0) {
      (content[content.length - 1] as { cache_control?: unknown }).cache_control = EPHEMERAL;
      breakpoints++;
    }
  }
  return { tools, system, messages, breakpoints };
}
