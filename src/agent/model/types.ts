import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  ToolUnion,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';

export type { ContentBlockParam, Message, MessageParam, ToolUnion, Usage };

/** The request the engine sends for one model step (without `stream`: the client decides). */
export type ModelRequest = Omit<MessageCreateParamsBase, 'stream'>;

/** One model call. The real one streams through @anthropic-ai/sdk; tests use it against a fake server. */
export interface ModelClient {
  createMessage(request: ModelRequest, options: { signal?: AbortSignal }): Promise<Message>;
}
