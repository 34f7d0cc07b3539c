import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Run } from '../../db/index.js';
import { decodeCandidate, isPythonBaseline, readCandidateFolder, starterFiles } from '../../harness/candidate.js';
import { findTask, type LoadedTask } from '../../harness/tasks.js';
import { toolDefinitions } from '../tools/definitions.js';
import { bashLimitsSentence, sandboxUnavailable } from '../tools/agent-sandbox.js';
import { SANDBOX_WORKSPACE } from '../tools/sandbox.js';
import type { ToolUnion } from '../model/types.js';
import { buildSystemPrompt } from '../prompt/system-prompt.js';
import { parseRunState, type RunState } from '../run-state.js';
import { describeRun } from '../run-view.js';
import { ensureWorkspace, type Workspace } from '../workspace/workspace.js';
import type { EngineServices } from './services.js';

/** Everything one turn works with. `run` and `state` are refreshed between steps. */
export interface TurnContext extends EngineServices {
  run: Run;
  state: RunState;
  task: LoadedTask;
  workspace: Workspace;
  system: string;
  tools: ToolUnion[];
  signal: AbortSignal;
}

export function pathEnvOf(services: EngineServices): string {
  return services.config.agent.bash.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
}

export async function openWorkspaceFor(services: EngineServices, run: Run, task: LoadedTask): Promise<Workspace> {
  const { workspace, created } = await ensureWorkspace(
    { dataDir: services.config.core.dataDir, runId: run.id, kernelFile: task.task.kernel.file, pathEnv: pathEnvOf(services) },
    async () => {
      // One file's source, or a folder kernel's files (harness/candidate.ts).
      const stored = (source: string) => (task.layout.folder ? { files: decodeCandidate(source, task.layout) } : { source });
      const evaluations = await services.store.evaluations.forRun(run.id);
      const last = evaluations.filter((e) => e.status !== 'pending').at(-1);
      if (last) return { ...stored(last.source), message: `restored from evaluation #${last.seq} (the workspace was not on this host)` };
      // A continuation starts from its parent's best kernel, not the baseline.
      const parent = run.parentRunId ? await services.store.runs.get(run.parentRunId) : undefined;
      const best = parent?.bestEvaluationId != null ? await services.store.evaluations.get(parent.bestEvaluationId) : undefined;
      if (parent && best) return { ...stored(best.source), message: `best kernel of ${parent.id} (eval #${best.seq})` };
      const baseline = task.task.kernel.baseline;
      // A baseline that is a Python callable has no source to start from: the entry point, to write.
      if (isPythonBaseline(baseline)) {
        const files = starterFiles(task.task);
        return { ...(task.layout.folder ? { files } : { source: Object.values(files)[0]! }), message: `starting point for ${task.task.name} (its baseline is ${baseline})` };
      }
      if (task.layout.folder) return { files: await readCandidateFolder(path.join(task.dir, baseline)), message: `baseline of ${task.task.name}` };
      return { source: await readFile(path.join(task.dir, baseline), 'utf8'), message: `baseline of ${task.task.name}` };
    },
  );
  if (created && run.evalsUsed > 0) {
    services.logger.warn({ runId: run.id }, 'workspace recreated on this host from the last evaluated candidate; unevaluated edits were lost');
  }
  return workspace;
}

const warnedRuns = new Set<string>();

/**
 * What the agent's commands run in: `sandbox` (bubblewrap), `off` (KERNELSEEK_SANDBOX=off, said in
 * the log and the run's thread once per run and process), or `unavailable` (no command tools).
 */
async function sandboxState(services: EngineServices, run: Run): Promise<{ state: 'sandbox' | 'off' | 'unavailable'; why?: string }> {
  const mode = services.config.agent.sandbox.mode;
  const why = sandboxUnavailable(services.config);
  const state = mode === 'off' ? 'off' : why ? 'unavailable' : 'sandbox';
  if (state !== 'sandbox' && !warnedRuns.has(run.id)) {
    warnedRuns.add(run.id);
    const message =
      state === 'off'
        ? "KERNELSEEK_SANDBOX=off: the agent's commands run unconfined, as this service's user, with its network and files."
        : `The agent gets no command tools (bash, gpu_bash): the sandbox is unavailable (${why}). Install bubblewrap (scripts/setup.sh) or set KERNELSEEK_SANDBOX=off.`;
    services.logger.warn({ runId: run.id, why }, message);
    await Promise.resolve(services.reporter.error({ run: describeRun(run), message, fatal: false })).catch(() => undefined);
  }
  return { state, why: why ?? undefined };
}

export async function loadTurnContext(services: EngineServices, run: Run, signal: AbortSignal): Promise<TurnContext> {
  const task = await findTask(services.config.core.tasksDir, run.task);
  const workspace = await openWorkspaceFor(services, run, task);
  const sandbox = await sandboxState(services, run);
  const tools = toolDefinitions(task.task.device, task.layout).filter((t) => sandbox.state !== 'unavailable' || !('name' in t) || (t.name !== 'bash' && t.name !== 'gpu_bash'));
  return {
    ...services,
    run,
    state: parseRunState(run.state),
    task,
    workspace,
    system: buildSystemPrompt({
      task,
      workspaceDir: sandbox.state === 'sandbox' ? SANDBOX_WORKSPACE : workspace.dir,
      bashTimeoutSeconds: services.config.agent.bash.timeoutSeconds,
      sandbox: sandbox.state,
      limits: bashLimitsSentence(services.config),
      workspaceMaxMb: services.config.agent.sandbox.workspaceMaxMb,
    }),
    tools,
    signal,
  };
}

/** Re-reads the run (another process may have stopped it, added budget, asked for the bank). */
export async function refreshRun(ctx: TurnContext): Promise<void> {
  const run = await ctx.store.runs.get(ctx.run.id);
  if (!run) throw new Error(`run ${ctx.run.id} disappeared`);
  ctx.run = run;
  ctx.state = parseRunState(run.state);
}

export async function patchState(ctx: TurnContext, patch: Partial<RunState>): Promise<void> {
  const run = await ctx.store.agentRuns.patchState(ctx.run.id, patch as Record<string, unknown>);
  if (run) {
    ctx.run = run;
    ctx.state = parseRunState(run.state);
  }
}
