import { isPythonBaseline, kernelIncludes } from '../../harness/candidate.js';
import type { LoadedTask } from '../../harness/tasks.js';


/**
 * The system prompt: the goal and the harness's rules, nothing about how to optimise this operator
 * (no techniques, no hardware features, no faster implementation to imitate). It is identical for
 * every step of a run, so it stays in the cached prefix.
 */
export interface SystemPromptInput {
  task: LoadedTask;
  /** The workspace as the tools name it (/workspace in the sandbox). */
  workspaceDir: string;
  bashTimeoutSeconds: number;
  /** What the commands run in; `unavailable`: the run has no command tools. */
  sandbox: 'sandbox' | 'off' | 'unavailable';
  /** The sandbox's limits, in words (sandbox.ts describeLimits). */
  limits: string;
  workspaceMaxMb: number;
}

/** What the commands can reach, said as it is (docs/agent.md has the threat model). */
function commandsLine(input: SystemPromptInput, host: string): string[] {
  if (input.sandbox === 'unavailable') return ['- bash and gpu_bash are not available on this host (no sandbox to run them in).'];
  const common = `with a ${input.bashTimeoutSeconds}-second time limit, long output shortened to its head and tail`;
  if (input.sandbox === 'off') {
    return [
      `- bash: each command runs in a fresh shell in the workspace, ${common}. It is not sandboxed on this host.`,
      `- gpu_bash: run a command on ${host} against a snapshot of the workspace (files written there do not come back).`,
    ];
  }
  return [
    `- bash: each command runs in a fresh shell in a sandbox: the workspace (${input.workspaceDir}, read-write), its git history (${input.workspaceDir}/.git, read-only: use \`git log\`, \`git diff\`, \`git show best:<file> > <file>\`), a HOME of its own, a private /tmp, and the system's compilers, libraries and python (read-only). Nothing else of this host is there: no network, no services, no other runs, no data of the service. Every process a command starts is killed when the command returns. ${common[0]!.toUpperCase()}${common.slice(1)}; limits: ${input.limits}.`,
    `- gpu_bash: run a command on ${host} in the same kind of sandbox, against a snapshot of the workspace at /workspace (files written there do not come back), with the device available.`,
  ];
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  const { task } = input.task;
  const goalRef = task.goal.vs === 'best_peer' ? 'the fastest peer implementation' : 'the baseline kernel';
  const deviceWord = task.device === 'cuda' ? 'GPU' : 'CPU';
  return [
    `You are a performance engineer making one ${deviceWord} kernel faster. Your goal: a kernel that is correct on every scenario and at least ${task.goal.speedup}x as fast as ${goalRef} (geometric mean over the scenarios), then as much faster as you can.`,
    '',
    `Your workspace is the git repository ${input.workspaceDir}. ${candidateSentence(input.task)} You may create other files (notes, experiments); they are yours, the harness ignores them.`,
    '',
    'How the harness judges a candidate (you cannot change it):',
    `- ${buildSentence(input.task)}`,
    '- Correctness is checked on every scenario with several seeds: at least one fresh random input per scenario each evaluation, the others from a small pool of seeds kept on the harness host (inputs of other distributions too: scaled, shifted, with outliers and zeros); outputs are poisoned before each call; the error must stay within the tolerance set by the reference computed in the same low precision. NaN or Inf never passes.',
    "- Timing runs many rounds with caches flushed and inputs rotated, the candidate side by side with the baseline (and the peers, or their kept figures), each in a process of its own. On CUDA a call's time is the GPU's own record of it (CUPTI) and a scenario's time the mean of the middle 90 % of its rounds; on the CPU the median. A speedup is the median of paired per-round ratios with a 95 % interval: faster or slower only when the interval says so. Outputs are re-checked after timing.",
    `- A candidate counts only when it is correct on every scenario of the run. The libraries on the task's denylist (${task.denylist.join(', ') || 'none'}) are refused at link and load time; caching results between calls, doing work outside the call, or depending on the harness's internals is detected and fails the candidate. Implausible speedups are flagged.`,
    '- Each `evaluate` call uses one evaluation of the run\'s budget; every evaluated candidate is committed to the workspace\'s git history.',
    '',
    'Your tools:',
    ...commandsLine(input, task.device === 'cuda' ? 'a GPU host' : 'an evaluation host'),
    '- str_replace_based_edit_tool: view, create and edit files inside the workspace (paths outside it, symlinks and hard-linked files are refused).',
    `- evaluate: submit the kernel file to the harness; returns the outcome, the failing or slowest scenarios and the compile report. The workspace is then committed; one holding more than ${input.workspaceMaxMb} MB (or a file over 10 MB) is refused: keep data and build outputs out of it or in .gitignore.`,
    '',
    'Work on your own: form a hypothesis, change the kernel, evaluate, and keep going. From time to time a message will bring you a question, from a person or from a question bank. Take it seriously: think it through before you continue. If you end your turn without calling a tool, the run pauses until a question arrives.',
  ].join('\n');
}

const SOURCES = 'its sources and headers (.cu .cuh .cpp .h .hpp ...)';

/** What the harness evaluates: one file, or every source and header of a folder. */
function candidateSentence(loaded: LoadedTask): string {
  const { layout, task } = loaded;
  const start = isPythonBaseline(task.kernel.baseline) ? `it starts as a stub of the entry point (the task's baseline, ${task.kernel.baseline.replace(/^python:/, '')}, is a Python function you cannot edit)` : "it starts as the task's baseline";
  if (layout.folder) return `The harness evaluates the folder ${layout.name}/ in it: ${SOURCES}, all of them together; ${start}. You may edit, add or remove any file in it.`;
  return `The harness evaluates exactly one file in it, ${task.kernel.file}: ${start}.`;
}

/** How the candidate is built and called, in its language. */
function buildSentence(loaded: LoadedTask): string {
  const { layout, task } = loaded;
  const { headers, includeDirs } = kernelIncludes(task);
  const includes = [
    ...(headers.includes('cutlass') ? ['the CUTLASS and CuTe headers of the version the hosts have installed (#include <cutlass/...>, <cute/tensor.hpp>)'] : []),
    ...(includeDirs.length ? [`the task's include folders (${includeDirs.join(', ')}, read-only)`] : []),
  ];
  const onPath = includes.length ? ` The include path has ${includes.join(' and ')}.` : '';
  if (layout.language === 'triton') {
    return `${task.kernel.file} is a Python module with @triton.jit kernels; the harness imports it in a process of its own and calls ${task.kernel.entry}() with torch tensors it owns (on the task's device) and Python numbers, in the order of the signature below. Everything that decides the verdict (inputs, reference, timing, comparison) lives outside that process.`;
  }
  const compiler = layout.language === 'cuda' ? 'nvcc' : 'g++';
  const what = layout.folder ? `every source in ${layout.name}/` : task.kernel.file;
  return `It compiles ${what} on its own (${compiler}) into a shared library and calls the entry point through a C ABI with buffers it owns.${onPath}`;
}

function signature(task: LoadedTask['task']): string {
  const ctype: Record<string, string> = { float32: 'float', float16: 'half', bfloat16: 'bfloat16', float64: 'double', int32: 'int32_t', int64: 'int64_t', int8: 'int8_t', uint8: 'uint8_t' };
  const args = task.kernel.args.map((a) => {
    if (a.kind === 'tensor') return `${a.role === 'input' ? 'const ' : ''}${ctype[a.dtype] ?? a.dtype}* ${a.name}`;
    if (a.kind === 'stream') return `cudaStream_t ${a.name}`;
    const t = a.kind === 'float32' ? 'float' : a.kind === 'int32' ? 'int32_t' : 'int64_t';
    return `${t} ${a.name} /* = ${a.value} */`;
  });
  if (task.kernel.language === 'triton') {
    const params = task.kernel.args.filter((a) => a.kind !== 'stream').map((a) => (a.kind === 'tensor' ? `${a.name}  # torch.Tensor, ${a.dtype}, ${a.role}` : `${a.name}  # ${a.kind === 'float32' ? 'float' : 'int'} = ${a.value}`));
    return `def ${task.kernel.entry}(\n      ${params.join('\n      ')}\n  )`;
  }
  return `extern "C" int ${task.kernel.entry}(${args.join(', ')})`;
}

/** The first user message: the task itself (the same for every run of the task on one host). */
export function buildTaskBrief(input: { task: LoadedTask; scenarios: 'quick' | 'all'; target: number; arch: string | null; budgetEvals: number }): string {
  const { task, scenarios, quick, layout } = input.task;
  const t = task;
  const set = input.scenarios === 'quick' ? quick : scenarios;
  const ids = set.map((s) => s.id);
  const shown = ids.length > 40 ? `${ids.slice(0, 40).join(', ')}, … (${ids.length} in all)` : ids.join(', ');
  return [
    `Task: ${t.name} — ${t.summary}`,
    `Device: ${t.device}${input.arch ? ` (${input.arch})` : ''}.`,
    `Kernel ${layout.folder ? `folder: ${layout.name}/` : `file: ${t.kernel.file}`} (${layout.language === 'triton' ? 'Triton' : t.kernel.language}). Entry point${layout.language === 'triton' ? '' : ', which returns 0 on success'}:`,
    `  ${signature(t)}`,
    t.device === 'cuda' && layout.language !== 'triton' ? '  The entry point is a host function that launches its kernels on `stream` and returns; the harness synchronises.' : '',
    layout.language === 'triton' ? '  It launches its @triton.jit kernels and returns; it writes every output tensor in place.' : '',
    `Scenarios (${set.length}, parameters ${t.scenarios.params.join(', ')}): ${shown}.`,
    `Quick subset: ${quick.map((s) => s.id).join(', ') || '(none)'}.`,
    `Tolerance: max |candidate − reference| ≤ ${t.tolerance.factor} × max |low-precision reference − reference| + ${t.tolerance.atol}.`,
    `Peers timed alongside: ${t.peers.map((p) => p.name).join(', ') || 'none'}.`,
    `Target: ${input.target}x vs ${t.goal.vs === 'best_peer' ? 'the strongest peer' : 'the baseline'} (geometric mean).`,
    `Evaluation budget: ${input.budgetEvals}.`,
    '',
    isPythonBaseline(t.kernel.baseline)
      ? `The baseline is ${t.kernel.baseline.replace(/^python:/, '')} (timed, not editable); the workspace holds a stub of the entry point as ${t.kernel.file}. Write the kernel.`
      : `The workspace holds the baseline as ${t.kernel.file}. Start by reading it, then improve it.`,
  ]
    .filter((line) => line !== '')
    .join('\n');
}
