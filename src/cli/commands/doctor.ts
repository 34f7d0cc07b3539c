import type { Command } from 'commander';
import { UserInputError } from '../../core/errors.js';
import { DOCTOR_ROLES, formatReport, PARTS_OF_ROLE, runChecks, type DoctorRole } from '../../doctor/index.js';
import { writeLine, type CliContext } from '../context.js';

interface DoctorOpts {
  role: string;
  arch?: string;
  gpus?: string;
  checkModel?: boolean;
  json?: boolean;
}

function parseRole(value: string): DoctorRole {
  if ((DOCTOR_ROLES as readonly string[]).includes(value)) return value as DoctorRole;
  throw new UserInputError(`Unknown role '${value}'. Use one of: ${DOCTOR_ROLES.join(', ')} (serve: the Slack app, agents and scheduler; gpu-worker: a GPU host; agent: serve --role agent).`);
}

export function parseGpuList(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  const gpus = list.map(Number);
  if (list.length === 0 || gpus.some((g) => !Number.isInteger(g) || g < 0)) {
    throw new UserInputError(`--gpus ${text}: give GPU indices as nvidia-smi numbers them, e.g. --gpus 0,1.`);
  }
  return [...new Set(gpus)];
}

export function registerDoctor(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description("Check this host for a role: every setting, the store, Redis, Slack, the model key, the GPU, CUDA, Python and the sandbox, each ok / warn / fail with its fix")
    .option('--role <role>', `what this host runs: ${DOCTOR_ROLES.join(' | ')}`, 'serve')
    .option('--arch <arch>', 'gpu-worker: the architecture it will serve (as gpu-worker --arch)')
    .option('--gpus <list>', 'gpu-worker: the GPUs it will use (as gpu-worker --gpus)')
    .option('--check-model', 'also ask the model API whether the key and KERNELSEEK_MODEL work (one free request)')
    .option('--json', 'print the findings as JSON')
    .addHelpText('after', '\nExit status: 0 when nothing failed (warnings allowed), 78 when something did.\n`serve` and `gpu-worker` make the same checks when they start and refuse with the whole list.')
    .action(async (opts: DoctorOpts) => {
      const role = parseRole(opts.role);
      const report = await runChecks({
        env: ctx.env,
        cwd: ctx.cwd,
        parts: PARTS_OF_ROLE[role],
        ...(opts.arch !== undefined ? { arch: opts.arch } : {}),
        ...(opts.gpus !== undefined ? { gpus: parseGpuList(opts.gpus)! } : {}),
        checkModel: Boolean(opts.checkModel),
      });
      if (opts.json) writeLine(ctx.stdout, JSON.stringify({ role, ok: !report.failed, checks: report.lines }, null, 2));
      else {
        writeLine(ctx.stdout, `kernelseek doctor --role ${role}`);
        writeLine(ctx.stdout, formatReport(report.lines));
      }
      ctx.exitCode = report.failed ? 78 : 0;
    });
}
