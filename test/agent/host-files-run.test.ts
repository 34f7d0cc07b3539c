import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { reply, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import { useServiceFixture } from '../support/fixture.js';
import { startEngine, waitFor, type EngineHarness } from './helpers.js';

// Issue 39 through a whole run on PostgreSQL: the agent turns its kernel file into a symlink to the
// host's secrets, a FIFO, a file with a NUL byte; each evaluate is a clear error to the model, the
// run goes on and ends as it should (never left `running`), and no byte of the targets is stored.
// When it ends, its HOME (what its commands left there) is removed unless a setting keeps it.
const fx = useServiceFixture<EngineHarness>('postgres', 'ks-host-files-run-');

/** The engine's own environment and /etc/shadow, as strings that must never leave the host. */
function hostSecrets(): string[] {
  const environ = readFileSync('/proc/self/environ', 'latin1').split('\0').filter((e) => e.length >= 12);
  const shadow = readFileSync('/etc/shadow', 'utf8').split('\n').filter((l) => l.length >= 8);
  return [...environ, ...shadow];
}

async function storedText(runId: string): Promise<string> {
  const client = new pg.Client({ connectionString: fx.db.url });
  await client.connect();
  try {
    const rows = await Promise.all(
      ['select content::text as t from run_messages where run_id = $1', 'select input::text || coalesce(result::text, \'\') as t from tool_calls where run_id = $1', 'select source || coalesce(result::text, \'\') as t from evaluations where run_id = $1'].map(
        (q) => client.query<{ t: string }>(q, [runId]),
      ),
    );
    return rows.flatMap((r) => r.rows.map((row) => row.t)).join('\n');
  } finally {
    await client.end();
  }
}

describe('a run whose agent makes its kernel file hostile', () => {
  it('gets clear errors, goes on, ends finished, stores none of the targets; its HOME is removed at the end', { timeout: 180_000 }, async () => {
    const results: string[] = [];
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      server: {
        script: [
          reply(toolUse('bash', { command: 'head -c 100000 /dev/zero > ~/cache.bin; rm kernel.cpp && ln -s /proc/self/environ kernel.cpp && echo linked' }), toolUse('evaluate', {})),
          (req) => {
            results.push(...toolResultTexts(req));
            return reply(toolUse('bash', { command: 'rm kernel.cpp && ln -s /etc/shadow kernel.cpp' }), toolUse('evaluate', {}), toolUse('str_replace_based_edit_tool', { command: 'view', path: 'kernel.cpp' }));
          },
          (req) => {
            results.push(...toolResultTexts(req));
            return reply(toolUse('bash', { command: 'rm kernel.cpp && mkfifo kernel.cpp' }), toolUse('evaluate', {}));
          },
          (req) => {
            results.push(...toolResultTexts(req));
            return reply(toolUse('bash', { command: "rm kernel.cpp && printf 'int main() { return 0; }\\0\\n' > kernel.cpp" }), toolUse('evaluate', {}));
          },
          (req) => {
            results.push(...toolResultTexts(req));
            return reply(toolUse('bash', { command: 'echo last' }));
          },
        ],
      },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 5 } });
    const done = await waitFor('the end', fx.runOf(run.id), (r) => ['finished', 'stopped', 'failed'].includes(r?.status ?? ''), 150_000);
    expect(done).toMatchObject({ status: 'finished', endReason: 'budget_steps' });
    expect(fx.service.server.requests).toHaveLength(5);

    const [linked, environ, , shadow, view, , fifo, , nul] = results;
    expect(linked).toContain('linked');
    expect(environ).toMatch(/kernel\.cpp is a symlink/);
    expect(shadow).toMatch(/kernel\.cpp is a symlink/);
    expect(view).toMatch(/symlink/);
    expect(fifo).toMatch(/kernel\.cpp is a FIFO/);
    expect(nul).toMatch(/kernel\.cpp contains a NUL byte \(line 1/);

    const secrets = hostSecrets();
    const sent = fx.service.server.requests.map((r) => JSON.stringify(r.body)).join('\n');
    const stored = await storedText(run.id);
    for (const s of secrets) {
      expect(sent.includes(s), 'a host secret reached the model').toBe(false);
      expect(stored.includes(s), 'a host secret reached the store').toBe(false);
    }
    expect(await fx.db.store.evaluations.forRun(run.id)).toEqual([]);
    // Removed as the run ends, right after its status moves (src/agent/turn/finish.ts).
    await waitFor('the HOME removed', async () => existsSync(path.join(fx.dataDir, 'homes', run.id)), (present) => !present, 10_000);
    expect(existsSync(path.join(fx.dataDir, 'workspaces', run.id, 'kernel.cpp'))).toBe(true);
  });

  it('keeps the HOME when KERNELSEEK_KEEP_HOMES asks', { timeout: 120_000 }, async () => {
    fx.service = await startEngine({
      store: fx.db.store,
      dataDir: fx.dataDir,
      env: { KERNELSEEK_KEEP_HOMES: 'on' },
      server: {
        script: [
          reply(toolUse('bash', { command: 'echo kept > ~/notes.txt && echo wrote' })),
          (req) => {
            expect(toolResultTexts(req)[0]).toContain('wrote');
            return reply(toolUse('bash', { command: 'echo last' }));
          },
        ],
      },
    });
    const run = await fx.service.engine.startRun({ task: 'cpu_softmax', owner: 't', origin: 'api', autonomous: true, budgets: { steps: 2 } });
    await waitFor('the end', fx.runOf(run.id), (r) => r?.status === 'finished', 100_000);
    expect(fx.service.server.requests).toHaveLength(2);
    expect(readFileSync(path.join(fx.dataDir, 'homes', run.id, 'notes.txt'), 'utf8')).toBe('kept\n');
  });
});
