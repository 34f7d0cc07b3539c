import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { describeRun } from '../../src/agent/run-view.js';
import type { RunSummary } from '../../src/agent/index.js';
import { summaryLines } from '../../src/agent/terminal/terminal-reporter.js';
import { REPO_ROOT } from '../../src/config/index.js';
import type { Evaluation, Run } from '../../src/db/index.js';
import {
  buildEvidence,
  buildScenarioChartSpec,
  diffKernelFiles,
  evidenceProblems,
  judgeEvaluation,
  parseGitHubRemote,
  renderEvidenceMarkdown,
  renderScenarioChart,
  scenarioChartRows,
  scrubPaths,
  type ChosenEvaluation,
  type Evidence,
} from '../../src/export/index.js';
import { displayRepo } from '../../src/export/git.js';
import { checkRelativePath } from '../../src/export/kernel-files.js';
import type { EvalResult } from '../../src/harness/result.js';
import { findTask } from '../../src/harness/tasks.js';
import { renderRunSummary } from '../../src/slack/views/run-summary.js';
import { decodePng } from '../digest/png.js';
import { createTempDir } from '../support/db.js';
import { BASELINE, FAST, isolatedGit, loadResult } from './helpers.js';

// The pure parts of the way out, on the harness's real results: which result counts, what the
// chart plots, Markdown that hostile text cannot break, paths and remotes, and the summaries.
const task = await findTask(path.join(REPO_ROOT, 'kernels'), 'cpu_softmax');
const now = new Date('2026-12-06T10:00:00Z');

function runRow(over: Partial<Run> = {}): Run {
  return {
    id: 'ks-abcdefgh', task: 'cpu_softmax', owner: 'U1', origin: 'terminal', slackChannel: null, slackThreadTs: null, statusMessageTs: null, status: 'finished', endReason: 'budget_evals',
    arch: null, model: 'm', autonomous: false, target: 1, questionTimeoutSeconds: 60, budgetEvals: 10, budgetSteps: 10, budgetUsd: 1, budgetSeconds: 60,
    evalsUsed: 2, stepsUsed: 5, bestEvaluationId: 2, bestSpeedup: 4, bestSpeedupVsPeer: null, costUsd: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
    cacheWriteTokens: 0, state: {}, error: null, parentRunId: null, leaseOwner: null, leaseExpiresAt: null, createdAt: now, startedAt: now, updatedAt: now, finishedAt: now, ...over,
  };
}

function evaluationRow(result: EvalResult, over: Partial<Evaluation> = {}): Evaluation {
  return {
    id: 2, runId: 'ks-abcdefgh', seq: 2, task: 'cpu_softmax', jobId: 'eval:ks-abcdefgh:2', candidateHash: 'h', source: FAST, scenarios: 'all', status: result.status, correct: result.correct,
    speedupVsBaseline: result.summary.speedup_vs_baseline_geomean, speedupVsBestPeer: null, result: result as unknown as Record<string, unknown>, gpu: null, arch: null, worker: 'w',
    harnessSeconds: 1, queuedAt: now, startedAt: now, finishedAt: now, ...over,
  };
}

async function evidenceOf(result: EvalResult, over: Partial<Evaluation> = {}): Promise<Evidence> {
  const evaluation = evaluationRow(result, over);
  const chosen: ChosenEvaluation = { run: runRow(), evaluation, result, chosenAs: 'best', ...judgeEvaluation(evaluation, result, task.scenarios.length) };
  const candidate = [{ path: 'kernel.cpp', content: FAST }];
  const baseline = [{ path: 'kernel.cpp', content: BASELINE }];
  return buildEvidence({ chosen, task, taskDigest: null, candidate, baseline, diff: await diffKernelFiles(baseline, candidate), link: null, version: '0.1.0', now });
}

const full = (await loadResult('fast.all')) as unknown as EvalResult;
const quick = (await loadResult('fast.quick')) as unknown as EvalResult;
const wrong = (await loadResult('wrong.all')) as unknown as EvalResult;

describe('which result counts (judgeEvaluation)', () => {
  it('verified: the full set, correct everywhere by the harness, nothing flagged', () => {
    expect(judgeEvaluation(evaluationRow(full), full, 11)).toMatchObject({ standing: 'verified', scenarioSet: { name: 'all', evaluated: 11, total: 11, full: true } });
  });

  it('not verified: the quick subset; an "all" of fewer scenarios than the task has now; a filter', () => {
    expect(judgeEvaluation(evaluationRow(quick, { scenarios: 'quick' }), quick, 11)).toMatchObject({ standing: 'subset', scenarioSet: { evaluated: 3, total: 11, full: false } });
    expect(judgeEvaluation(evaluationRow(full), full, 12).standing).toBe('subset');
    // The row says "all" but the result holds 3 scenarios: the result decides.
    expect(judgeEvaluation(evaluationRow(quick, { scenarios: 'all' }), quick, 11).standing).toBe('subset');
    expect(judgeEvaluation(evaluationRow(full, { scenarios: 'r64' }), full, 11).reason).toContain('the scenarios matching r64');
  });

  it('incorrect whenever any part says so: the status, the flag, the summary, or one scenario', () => {
    expect(judgeEvaluation(evaluationRow(wrong), wrong, 11).standing).toBe('incorrect');
    expect(judgeEvaluation(evaluationRow(full, { status: 'incorrect' }), full, 11).standing).toBe('incorrect');
    const oneBad = structuredClone(full);
    oneBad.scenarios[4] = { ...oneBad.scenarios[4]!, correct: false, reason: 'y: NaN' };
    expect(judgeEvaluation(evaluationRow(oneBad), oneBad, 11)).toMatchObject({ standing: 'incorrect', reason: expect.stringContaining('first failing r1024-c128: y: NaN') });
    const skipped = structuredClone(full);
    (skipped.scenarios[0] as Record<string, unknown>).status = 'skipped';
    expect(judgeEvaluation(evaluationRow(skipped), skipped, 11).standing).toBe('incorrect');
  });

  it('implausible: flagged by the harness, never verified', () => {
    const flagged = { ...full, flags: ['implausible'] } as EvalResult;
    expect(judgeEvaluation(evaluationRow(flagged), flagged, 11).standing).toBe('implausible');
  });
});

describe('the evidence', () => {
  it('validates against the published schema, and the schema refuses "verified" on a subset', async () => {
    const e = await evidenceOf(full);
    expect(evidenceProblems(e)).toEqual([]);
    expect(e.verified).toBe(true);
    expect(evidenceProblems({ ...e, scenario_set: { ...e.scenario_set, full: false } })).not.toEqual([]);
    expect(evidenceProblems({ ...e, standing: 'subset' })).not.toEqual([]);
    const q = await evidenceOf(quick, { scenarios: 'quick' });
    expect(q).toMatchObject({ verified: false, standing: 'subset' });
  });

  it('the chart plots the harness\'s speedups and intervals, each peer against the same baseline, and the goal', async () => {
    const e = await evidenceOf(full);
    const rows = scenarioChartRows(e);
    const candidate = rows.filter((r) => r.kind === 'candidate');
    expect(candidate.map((r) => [r.scenario, r.speedup, r.lo, r.hi])).toEqual(
      full.scenarios.map((s) => [s.id, (s as Record<string, unknown>).speedup_vs_baseline, s.speedup_vs_baseline_ci![0], s.speedup_vs_baseline_ci![1]]),
    );
    const peers = rows.filter((r) => r.kind === 'peer');
    expect(peers.map((r) => [r.series, r.speedup])).toEqual(full.scenarios.map((s) => ['torch', s.baseline_ms! / s.peer_ms!.torch!]));
    // goal: 1.0x the fastest peer, per scenario, in the baseline's units.
    const goal = rows.filter((r) => r.kind === 'goal');
    expect(goal.map((r) => r.speedup)).toEqual(peers.map((p) => p.speedup));
    expect(goal[0]!.series).toBe('goal (1x the fastest peer)');
    // A task whose goal is the baseline: a flat line at its target.
    const vsBaseline = scenarioChartRows({ ...e, task: { ...e.task, goal: { vs: 'baseline', speedup: 1.5 } } });
    expect(new Set(vsBaseline.filter((r) => r.kind === 'goal').map((r) => r.speedup))).toEqual(new Set([1.5]));
    const spec = JSON.stringify(buildScenarioChartSpec(e));
    expect(spec).toContain('"scale":{"type":"log"}');
    expect(spec).toContain(`"sort":${JSON.stringify(full.scenarios.map((s) => s.id))}`);
    const png = decodePng(await renderScenarioChart(e));
    // The plot is 720 x 360 CSS pixels (wider with more scenarios), at twice the density.
    expect(png.width).toBeGreaterThan(2 * 720);
    expect(png.height).toBeGreaterThan(2 * 360);
    expect(JSON.stringify(buildScenarioChartSpec(await evidenceOf(quick, { scenarios: 'quick' })))).toContain('3 of 11 scenarios, NOT VERIFIED');
  });

  it('Markdown that a hostile reason or note cannot break: one row per scenario, no markup, no HTML, no path', async () => {
    const hostile = structuredClone(wrong);
    hostile.scenarios[0]!.reason = 'y | bad\n## Heading <script>alert(1)</script> [click](https://evil.example) `code` /tmp/ks-worker-9/kernel.cpp';
    hostile.messages = ['note from /home/runner/.kernelseek/data: ![x](https://evil.example/x.png)'];
    const md = renderEvidenceMarkdown(await evidenceOf(hostile));
    const rows = md.split('\n').filter((l) => l.startsWith('| r64-c128 |'));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.split(/(?<!\\)\|/).length).toBe(11);
    // Escaped: shown as the characters they are, not as a heading, HTML, a link or an image.
    expect(md).not.toMatch(/(?<!\\)<script>|\n## Heading|(?<!\\)\]\(https:\/\/evil|(?<!\\)!(?<!\\)\[x|\/tmp\/ks-worker-9|\/home\/runner/);
    expect(md).toContain('\\<script\\>');
    expect(md).toContain('…/kernel.cpp');
  });

  it('a body cut to fit says how many scenarios it left out', async () => {
    const e = await evidenceOf(full);
    const budget = renderEvidenceMarkdown(e).length - 300;
    const md = renderEvidenceMarkdown(e, { maxChars: budget });
    expect(md.length).toBeLessThanOrEqual(budget);
    expect(md).toMatch(/\*\d+ more scenario\(s\) not shown here: the evidence JSON and the commit message hold them all\.\*/);
  });
});

describe('a kernel is a set of files', () => {
  it('the diff adds, changes and removes files, under a folder of the team\'s repository, and git apply makes the baseline the candidate', async () => {
    const baseline = [{ path: 'attn.cu', content: 'int a;\n' }, { path: 'old.cuh', content: 'int old;\n' }];
    const candidate = [{ path: 'attn.cu', content: 'int a;\nint b;\n' }, { path: 'inc/tile.cuh', content: 'int tile;\n' }];
    const diff = await diffKernelFiles(baseline, candidate, { prefix: 'kernels/attn' });
    expect(diff).toMatchObject({ filesChanged: 3, insertions: 2, deletions: 1 });
    const tmp = await createTempDir('ks-diff-');
    try {
      await mkdir(path.join(tmp.dir, 'kernels/attn'), { recursive: true });
      for (const f of baseline) await writeFile(path.join(tmp.dir, 'kernels/attn', f.path), f.content);
      await writeFile(path.join(tmp.dir, 'change.patch'), diff.patch);
      const applied = await execa('git', ['apply', 'change.patch'], { cwd: tmp.dir, env: isolatedGit(tmp.dir), extendEnv: false, reject: false });
      expect(applied.exitCode, applied.stderr).toBe(0);
      expect((await readdir(path.join(tmp.dir, 'kernels/attn'), { recursive: true })).sort()).toEqual(['attn.cu', 'inc', 'inc/tile.cuh']);
      expect(await readFile(path.join(tmp.dir, 'kernels/attn/inc/tile.cuh'), 'utf8')).toBe('int tile;\n');
      expect(await readFile(path.join(tmp.dir, 'kernels/attn/attn.cu'), 'utf8')).toBe('int a;\nint b;\n');
    } finally {
      await tmp.remove();
    }
    await expect(diffKernelFiles(baseline, [{ path: '../escape.cu', content: 'x' }])).rejects.toThrow(/relative path inside the repository/);
  });
});

describe('paths and remotes', () => {
  it('cuts absolute paths to their last part, leaving URLs and relative paths', () => {
    expect(scrubPaths('$ /usr/bin/g++ -O2 -I/opt/cuda/include -c kernel.cpp')).toBe('$ …/g++ -O2 -I…/include -c kernel.cpp');
    expect(scrubPaths("see https://github.com/a/b, '/root/.kernelseek/x/k.cu' and kernels/x/task.yaml; 1/2")).toBe("see https://github.com/a/b, '…/k.cu' and kernels/x/task.yaml; 1/2");
  });

  it('takes only relative paths that stay inside the repository', () => {
    expect(checkRelativePath('kernels/softmax/', 'p')).toBe('kernels/softmax');
    for (const bad of ['', '/abs', '../x', 'a/../../x', 'a/./b', 'a//b', '.git/config', 'x/.Git/hooks', 'a\\b', 'a\u0000b', 'a\nb']) expect(() => checkRelativePath(bad, 'p'), JSON.stringify(bad)).toThrow(/relative path inside the repository/);
  });

  it('shows a repository without a password or a token in its address', () => {
    expect(displayRepo('https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/acme/kernels.git')).toBe('https://x-access-token@github.com/acme/kernels.git');
    expect(displayRepo('https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/acme/kernels.git')).toBe('https://github.com/acme/kernels.git');
    for (const plain of ['https://github.com/acme/kernels.git', 'ssh://git@github.com/acme/kernels.git', 'git@github.com:acme/kernels.git', '/srv/git/kernels.git']) expect(displayRepo(plain)).toBe(plain);
  });

  it('knows a GitHub remote in every spelling, and an Enterprise host from GITHUB_API_URL', () => {
    const api = 'https://api.github.com';
    for (const r of ['https://github.com/acme/kernels.git', 'https://github.com/acme/kernels', 'git@github.com:acme/kernels.git', 'ssh://git@github.com/acme/kernels.git', 'https://www.github.com/acme/kernels/']) {
      expect(parseGitHubRemote(r, api), r).toEqual({ host: 'github.com', owner: 'acme', name: 'kernels' });
    }
    expect(parseGitHubRemote('https://ghe.acme.com/ml/kernels.git', 'https://ghe.acme.com/api/v3')).toEqual({ host: 'ghe.acme.com', owner: 'ml', name: 'kernels' });
    for (const r of ['https://gitlab.com/acme/kernels.git', '/srv/git/kernels.git', 'file:///srv/git/kernels.git', 'https://github.com/acme', 'https://github.com/acme/kernels/tree/main', 'https://github.com.evil.example/acme/kernels', 'ext::github.com:acme/kernels']) {
      expect(parseGitHubRemote(r, api), r).toBeNull();
    }
  });
});

describe('the summaries name the run\'s history and the export command', () => {
  const summary: RunSummary = {
    status: 'finished', endReason: 'budget_evals', evaluations: 2, steps: 5, costUsd: 0, questions: { human: 0, bank: 0 }, elapsedSeconds: 10,
    workspace: '/srv/ks/workspaces/ks-abcdefgh', gitDir: '/srv/ks/git/ks-abcdefgh', exportCommand: 'kernelseek export ks-abcdefgh', error: null,
    best: { evaluationSeq: 2, speedupVsBaseline: 4.02, speedupVsBestPeer: 1.55, file: '/srv/ks/results/ks-abcdefgh/kernel.cpp', commit: 'eval-2' },
  };

  it('the terminal: the git directory where the history really is, and the command', () => {
    const lines = summaryLines('ks-abcdefgh', summary).join('\n');
    expect(lines).toContain('history: git --git-dir=/srv/ks/git/ks-abcdefgh log --oneline eval-2');
    expect(lines).toContain('Export it with its diff against the baseline and its evidence: kernelseek export ks-abcdefgh');
    expect(lines).not.toContain('/srv/ks/workspaces/ks-abcdefgh)');
  });

  it('Slack: the command and what the history is, never a path; buttons only as offered', () => {
    const view = describeRun(runRow({ origin: 'slack', slackChannel: 'C1', slackThreadTs: '1.1' }));
    const plain = JSON.stringify(renderRunSummary(view, summary, 'torch').blocks);
    expect(plain).toContain('`kernelseek export ks-abcdefgh`');
    expect(plain).not.toContain('/srv/ks');
    expect(plain).not.toContain('ks_export_result');
    const offered = JSON.stringify(renderRunSummary(view, summary, 'torch', { runId: 'ks-abcdefgh', export: true, pullRequest: false }).blocks);
    expect(offered).toContain('"action_id":"ks_export_result"');
    expect(offered).not.toContain('ks_open_pull_request');
  });
});
