import type { ToolUnion } from '../model/types.js';
import type { KernelLayout } from '../../harness/candidate.js';
import { VIEW_MAX_CHARACTERS } from './text-editor-tool.js';

const LANGUAGE_WORDS: Record<KernelLayout['language'], string> = { cuda: 'CUDA C++, built with nvcc', cpp: 'C++, built with g++', triton: 'Python with @triton.jit kernels' };

export const TOOL_NAMES = ['bash', 'str_replace_based_edit_tool', 'evaluate', 'gpu_bash'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * The tools of every run, in a fixed order (they head the cached prefix: any change to them
 * invalidates every run's cache). bash and the text editor are Anthropic-defined tools Claude is
 * trained on; evaluate and gpu_bash are ours.
 */
export function toolDefinitions(device: 'cpu' | 'cuda', kernel?: KernelLayout): ToolUnion[] {
  const host = device === 'cuda' ? 'a GPU host (one GPU of the task\'s architecture)' : 'an evaluation host';
  // One C++ or CUDA file: the words every run had (the system prompt names the file and compiler).
  const what = !kernel || (!kernel.folder && kernel.language !== 'triton') ? "the workspace's kernel file" : kernel.folder ? `every source and header of the workspace's kernel folder ${kernel.name}/ (${LANGUAGE_WORDS[kernel.language]})` : `the workspace's kernel file ${kernel.name} (${LANGUAGE_WORDS[kernel.language]})`;
  return [
    { type: 'bash_20250124', name: 'bash' },
    { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: VIEW_MAX_CHARACTERS },
    {
      name: 'evaluate',
      description:
        `Submit ${what} to the harness: it is ${kernel?.language === 'triton' ? 'loaded' : 'compiled'}, checked for correctness on every scenario against a higher-precision reference (several seeds per scenario: at least one fresh random input each evaluation, the others from the host's pool of seeds), and timed side by side with the baseline and the peers. Returns the status, the number of correct scenarios, geometric-mean speedups, the failing scenarios with their reasons, the slowest scenarios against the strongest peer and the compile report. Each call uses one evaluation of the run's budget; the candidate is committed to the workspace's git history.`,
      input_schema: {
        type: 'object',
        properties: {
          scenarios: {
            type: 'string',
            enum: ['quick', 'all'],
            description: "Which scenarios to run: 'quick' (a small subset, for fast iteration) or 'all'. Default: the run's scenario set. Only an evaluation on the run's scenario set can become the run's best.",
          },
        },
        additionalProperties: false,
      },
    },
    {
      name: 'gpu_bash',
      description: `Run a shell command on ${host} against a snapshot of the workspace (a copy: files written there do not come back). Use it to compile and run experiments or profilers on the target device. Returns the combined output (head and tail when long) and the exit status.`,
      input_schema: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The bash command, run from the snapshot\'s root.' },
          timeout_seconds: { type: 'integer', minimum: 1, maximum: 600, description: 'Time limit (default 120).' },
        },
        required: ['command'],
        additionalProperties: false,
      },
    },
  ];
}
