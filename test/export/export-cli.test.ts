import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type Env } from '../../src/config/index.js';
import { runKernelseek } from '../support/cli.js';
import { createTempDir, createTestDatabase, type TestDatabase } from '../support/db.js';
import { decodePng } from '../digest/png.js';
import { BASELINE, FAST, isolatedGit, loadResult, seedFinishedRun, WRONG } from './helpers.js';

// `kernelseek export` on finished runs in PostgreSQL (DATABASE_URL, as a served deployment): each format, the diff applied to
// the baseline with git apply, the JSON checked against the published schema (with an ajv of the
// test's own), the figures taken from the harness's result unchanged, and what a quick-only or an
// incorrect result is called.
let tmp: { dir: string; remove(): Promise<void> };
let db: TestDatabase;
let env: Env;
const runs: Record<'full' | 'quick' | 'none', string> = { full: '', quick: '', none: '' };

const schema = JSON.parse(await readFile(path.join(REPO_ROOT, 'docs/schema/kernelseek.evidence-1.schema.json'), 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);

beforeAll(async () => {
  tmp = await createTempDir('ks-export-cli-');
  db = await createTestDatabase('postgres');
  env = { DATABASE_URL: db.url, KERNELSEEK_DATA_DIR: path.join(tmp.dir, 'data'), KERNELSEEK_TASKS_DIR: path.join(REPO_ROOT, 'kernels'), LOG_LEVEL: 'silent', PATH: process.env.PATH };
  runs.full = (await seedFinishedRun(db.store, 'full')).id;
  runs.quick = (await seedFinishedRun(db.store, 'quick', { owner: 'bob' })).id;
  runs.none = (await seedFinishedRun(db.store, 'none')).id;
});
afterAll(async () => {
  await db?.dispose();
  await tmp?.remove();
});

describe('kernelseek export', () => {
  it('writes a folder: the kernel, a patch that git apply turns the baseline into, the evidence in JSON and Markdown, and the chart', async () => {
    const out = path.join(tmp.dir, 'out-dir');
    const r = await runKernelseek(['export', runs.full, '--out', out], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Exported ${runs.full} eval #2 (best)`);
    expect(r.stdout).toMatch(/Verified — correct on all 11 scenarios of the task \(the full set\)/);
    expect(r.stdout).toContain(`kernelseek pr ${runs.full}`);
    const names = (await readdir(out, { recursive: true })).sort();
    expect(names).toEqual(['evidence.json', 'evidence.md', 'kernel', 'kernel/kernel.cpp', `${runs.full}-eval2.patch`, 'speedups.png'].sort());
    expect(await readFile(path.join(out, 'kernel/kernel.cpp'), 'utf8')).toBe(FAST);

    // The patch turns the task's baseline into the kernel, with git apply, outside any repository too.
    const apply = path.join(tmp.dir, 'apply');
    await mkdir(apply, { recursive: true });
    await writeFile(path.join(apply, 'kernel.cpp'), BASELINE);
    const git = await execa('git', ['apply', '--verbose', path.join(out, `${runs.full}-eval2.patch`)], { cwd: apply, env: isolatedGit(apply), extendEnv: false, reject: false });
    expect(git.exitCode, git.stderr).toBe(0);
    expect(await readFile(path.join(apply, 'kernel.cpp'), 'utf8')).toBe(FAST);
    // ... and is refused on a file that is not the baseline (a diff against the baseline, not a copy).
    await writeFile(path.join(apply, 'kernel.cpp'), 'int some_other_kernel;\n');
    expect((await execa('git', ['apply', '--check', path.join(out, `${runs.full}-eval2.patch`)], { cwd: apply, env: isolatedGit(apply), extendEnv: false, reject: false })).exitCode).not.toBe(0);

    const e = JSON.parse(await readFile(path.join(out, 'evidence.json'), 'utf8')) as {
      verified: boolean; standing: string; scenario_set: unknown; run: { id: string; link: string | null; slack: unknown }; evaluation: { seq: number; candidate_sha256: string };
      task: { digest: string; digest_of: string[]; goal: unknown; peers: string[] }; environment: Record<string, unknown> & { not_recorded: string[] };
      correctness: { rule: string; factor: number; atol: number; seeds_per_scenario: number };
      summary: { vs_baseline: { value: number; ci: number[]; verdict: string }; vs_peer: Record<string, { value: number; ci: number[]; verdict: string }>; goal: unknown };
      scenarios: { id: string; time_ms: number; baseline_ms: number; peer_ms: Record<string, number>; max_abs_err: number; tolerance: number; vs_baseline: { value: number; ci: number[]; verdict: string }; vs_peer: Record<string, { value: number; ci: number[] }> }[];
      kernel: { files: { path: string; sha256: string }[] }; diff: { files_changed: number; insertions: number; deletions: number };
    };
    expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    expect(e).toMatchObject({ verified: true, standing: 'verified', scenario_set: { name: 'all', full: true, evaluated: 11, total: 11 }, run: { id: runs.full, link: null, slack: null }, evaluation: { seq: 2 } });
    const harness = await loadResult('fast.all');
    const hs = harness.summary as { speedup_vs_baseline_geomean: number; speedup_vs_baseline_ci: number[]; verdict_vs_baseline: string; speedup_vs_peer_geomean: Record<string, number>; goal: unknown };
    expect(e.summary.vs_baseline).toEqual({ value: hs.speedup_vs_baseline_geomean, ci: hs.speedup_vs_baseline_ci, verdict: hs.verdict_vs_baseline });
    expect(e.summary.vs_peer.torch!.value).toBe(hs.speedup_vs_peer_geomean.torch);
    expect(e.summary.goal).toEqual(hs.goal);
    expect(e.scenarios.map((s) => s.id)).toEqual(harness.scenarios.map((s) => s.id));
    for (const [i, s] of e.scenarios.entries()) {
      const h = harness.scenarios[i] as Record<string, unknown> & { peer_ms: Record<string, number>; speedup_vs_peer_ci: Record<string, number[]> };
      expect({ t: s.time_ms, b: s.baseline_ms, p: s.peer_ms.torch, err: s.max_abs_err, tol: s.tolerance }).toEqual({ t: h.time_ms, b: h.baseline_ms, p: h.peer_ms.torch, err: h.max_abs_err, tol: h.tolerance });
      expect(s.vs_baseline).toEqual({ value: h.speedup_vs_baseline, ci: h.speedup_vs_baseline_ci, verdict: h.verdict_vs_baseline });
      expect(s.vs_peer.torch!.ci).toEqual(h.speedup_vs_peer_ci.torch);
    }
    expect(e.task.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(e.task.digest_of).toEqual(['baseline.cpp', 'reference.py', 'task.yaml']);
    expect(e.task.peers).toEqual(['torch']);
    expect(e.correctness).toMatchObject({ rule: 'lowp_relative', factor: 2, atol: 1e-6, seeds_per_scenario: 2 });
    expect(e.environment).toMatchObject({ device: 'cpu', harness_version: harness.harness_version, torch: (harness.device_info as { torch: string }).torch, cpu: 'AMD EPYC, 2 cores' });
    // Honest about what this harness does not write into its result.
    expect(e.environment.not_recorded).toEqual(expect.arrayContaining(['harness_commit', 'compiler_version']));
    expect(e.environment.compiler).toMatch(/^…\/g\+\+ -O2/);
    expect(e.kernel.files).toEqual([{ path: 'kernel.cpp', sha256: e.evaluation.candidate_sha256, bytes: Buffer.byteLength(FAST) }]);
    expect(e.diff.files_changed).toBe(1);
    expect(e.diff.insertions).toBeGreaterThan(10);

    const png = decodePng(await readFile(path.join(out, 'speedups.png')));
    expect(png.width).toBeGreaterThan(1000);
    const md = await readFile(path.join(out, 'evidence.md'), 'utf8');
    expect(md.split('\n')[2]).toMatch(/^\*\*Verified\*\* — correct on all 11 scenarios/);
    for (const sc of harness.scenarios) expect(md).toContain(String(sc.id));
    expect(md).toMatch(/\| task digest \| `sha256:[0-9a-f]{64}`/);
    expect(md).toContain('Rule `lowp_relative` (factor 2, atol 0.000001)');
    expect(md).toMatch(/vs baseline: \d+\.\d\dx \[\d+\.\d\d, \d+\.\d\d\] faster/);
    // Worker paths in the harness's result never reach the evidence.
    for (const text of [md, await readFile(path.join(out, 'evidence.json'), 'utf8')]) expect(text).not.toContain('/tmp/exp');
  });

  it('patch goes to standard output, or to --out, which is never overwritten without --force', async () => {
    const patch = await runKernelseek(['export', runs.full, '--format', 'patch'], env);
    expect(patch.stdout).toMatch(/^diff --git a\/kernel\.cpp b\/kernel\.cpp\n/);
    const file = path.join(tmp.dir, 'p.patch');
    await writeFile(file, 'mine');
    const taken = await runKernelseek(['export', runs.full, '--format', 'patch', '--out', file], env);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already exists: give another --out, or --force/);
    expect(await readFile(file, 'utf8')).toBe('mine');
    expect((await runKernelseek(['export', runs.full, '--format', 'patch', '--out', file, '--force'], env)).code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(patch.stdout);
  });

  it('a result measured only on the quick subset is exported labelled NOT VERIFIED, everywhere it shows', async () => {
    const json = await runKernelseek(['export', runs.quick, '--format', 'json'], env);
    expect(json.code).toBe(0);
    const e = JSON.parse(json.stdout) as { verified: boolean; standing: string; scenario_set: unknown; standing_reason: string };
    expect(validate(e)).toBe(true);
    expect(e).toMatchObject({ verified: false, standing: 'subset', scenario_set: { name: 'quick', full: false, evaluated: 3, total: 11 } });
    expect(e.standing_reason).toBe("measured only on the quick subset (3 of the task's 11 scenarios): not verified");
    expect(json.stderr).toContain('NOT VERIFIED (quick subset)');
    const dir = await runKernelseek(['export', runs.quick, '--out', path.join(tmp.dir, 'quick')], env);
    expect(dir.stdout).toContain('NOT VERIFIED (quick subset)');
    expect(dir.stdout).not.toContain('kernelseek pr');
    const md = await readFile(path.join(tmp.dir, 'quick', 'evidence.md'), 'utf8');
    expect(md.split('\n')[2]).toMatch(/^\*\*NOT VERIFIED \(quick subset\)\*\* — measured only on the quick subset/);
    expect(md).toContain('| scenarios | subset (quick): 3 of 11, 3 correct |');
    // A published schema that cannot be fooled: "verified" with a subset is invalid.
    expect(validate({ ...e, verified: true })).toBe(false);
  });

  it('an incorrect evaluation (--eval) is exported with the harness\'s reason; a run without a best says how to pick one', async () => {
    const r = await runKernelseek(['export', runs.full, '--eval', '1', '--format', 'json'], env);
    expect(r.code).toBe(0);
    const e = JSON.parse(r.stdout) as { verified: boolean; standing: string; standing_reason: string; scenarios: { correct: boolean; reason: string }[]; kernel: { files: { sha256: string }[] } };
    expect(validate(e)).toBe(true);
    expect(e).toMatchObject({ verified: false, standing: 'incorrect' });
    expect(e.standing_reason).toMatch(/^not correct: the harness says incorrect, 0 of 11 scenarios correct; first failing r64-c128: /);
    expect(e.scenarios.every((s) => !s.correct)).toBe(true);
    expect(e.kernel.files[0]!.sha256).toBe(createHash('sha256').update(WRONG).digest('hex'));
    const none = await runKernelseek(['export', runs.none], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`Run ${runs.none} has no correct candidate to export (no best). \`kernelseek export ${runs.none} --eval N\``);
  });

  it('refuses bad input precisely and writes nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['export', 'ks-nosuchrun'], /There is no run 'ks-nosuchrun' in this database/],
      [['export', runs.full, '--eval', '9'], /has no evaluation #9; it has #1, #2/],
      [['export', runs.full, '--eval', 'two'], /--eval two: give an evaluation number/],
      [['export', runs.full, '--format', 'xml'], /--format xml: give one of dir, patch, json, md/],
      [['export', runs.full, '--best', '--eval', '2'], /Give --best or --eval N, not both/],
    ];
    for (const [args, message] of cases) {
      const r = await runKernelseek(args, env, { cwd: tmp.dir });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(message);
    }
    // An export folder already there is refused whole, before anything is written.
    const out = path.join(tmp.dir, 'taken');
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, 'evidence.md'), 'notes of mine');
    const taken = await runKernelseek(['export', runs.full, '--out', out], env);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already holds evidence\.md: give another --out folder, or --force/);
    expect(await readdir(out)).toEqual(['evidence.md']);
  });
});
