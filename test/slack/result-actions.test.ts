import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import type { Run } from '../../src/db/index.js';
import type { RunSummary } from '../../src/slack/agent-port.js';
import { createTeamRepo, FAST, GITHUB_REMOTE, seedFinishedRun, showFile, tasksWithUpstream } from '../export/helpers.js';
import { createTempDir } from '../support/db.js';
import { useServiceFixture } from '../support/fixture.js';
import { startFakeGitHub, type FakeGitHub } from '../support/github/fake-github.js';
import { viewOf } from '../support/slack/runs.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// The final card of a run with a verified best: *Export* posts the evidence and the patch into the
// thread as files, *Open pull request* pushes a branch to the task's repository (real git, a bare
// repository behind the GitHub address) and opens the request on the scripted GitHub API, naming
// whoever pressed it; the link follows in the thread. Nothing Slack is sent ever names a path on
// the server. A quick-only result gets no buttons; a task without a repository, no pull request.
const fx = useServiceFixture<SlackStack>('postgres', 'ks-slack-results-');
const CHANNEL = 'CKERNELS1';
const ALICE = 'UALICE001';
const BOB = 'UBOB00001';
const TOKEN = 'ghp_SLACKTESTTOKEN0123456789abcdefABCDEF';

let tmp: { dir: string; remove(): Promise<void> };
let team: Awaited<ReturnType<typeof createTeamRepo>>;
let github: FakeGitHub;
let tasksDir: string;

beforeAll(async () => {
  tmp = await createTempDir('ks-slack-results-repo-');
  team = await createTeamRepo(tmp.dir);
  github = await startFakeGitHub({ repos: { 'acme/kernels': team.bare }, token: TOKEN });
  tasksDir = await tasksWithUpstream(tmp.dir, `upstream: {repo: "${GITHUB_REMOTE}", path: kernels/softmax.cpp}`);
});
afterAll(async () => {
  await github?.close();
  await tmp?.remove();
});

async function startStack(tasks: string): Promise<SlackStack> {
  fx.service = await startSlackStack({
    store: fx.db.store,
    dataDir: fx.dataDir,
    env: {
      KERNELSEEK_TASKS_DIR: tasks,
      KERNELSEEK_ALLOWED_USERS: `${ALICE},${BOB}`,
      GITHUB_TOKEN: TOKEN,
      GITHUB_API_URL: github.url,
      GIT_CONFIG_GLOBAL: team.gitconfig,
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: path.join(tmp.dir, 'home'),
    },
  });
  return fx.service;
}

/** A finished run of `kind` in a real thread of the fake Slack, and its final card posted by the reporter. */
async function finishInThread(stack: SlackStack, kind: 'full' | 'quick'): Promise<{ run: Run; rootTs: string; card: { ts: string; blocks: unknown[] } }> {
  const root = await stack.poster.postMessage({ channel: CHANNEL, text: 'status card' });
  if (!root.ok || !root.ts) throw new Error('no thread root');
  const run = await seedFinishedRun(fx.db.store, kind, { origin: 'slack', owner: ALICE, slackChannel: CHANNEL, slackThreadTs: root.ts });
  const best = (await fx.db.store.evaluations.forRun(run.id)).find((e) => e.id === run.bestEvaluationId)!;
  const summary: RunSummary = {
    status: 'finished',
    endReason: 'budget_evals',
    best: { evaluationSeq: best.seq!, speedupVsBaseline: best.speedupVsBaseline!, speedupVsBestPeer: best.speedupVsBestPeer, file: path.join(fx.dataDir, 'results', run.id, 'kernel.cpp'), commit: `eval-${best.seq}`, scenarioSet: kind === 'quick' ? { evaluated: 3, total: 11 } : null },
    evaluations: run.evalsUsed,
    steps: 4,
    costUsd: 0.12,
    questions: { human: 0, bank: 1 },
    elapsedSeconds: 60,
    workspace: path.join(fx.dataDir, 'workspaces', run.id),
    gitDir: path.join(fx.dataDir, 'git', run.id),
    exportCommand: `kernelseek export ${run.id}`,
    error: null,
  };
  await stack.reporter.runFinished({ run: viewOf(run), summary });
  await stack.fake.waitFor((f) => f.thread(CHANNEL, root.ts!).some((m) => /finished: best/.test(m.text)), 10_000, 'the final card');
  // The card's own files (the kernel, the chart) are on their way too.
  await stack.poster.idle();
  const card = stack.fake.thread(CHANNEL, root.ts).find((m) => /finished: best/.test(m.text))!;
  return { run, rootTs: root.ts, card: { ts: card.ts, blocks: card.blocks ?? [] } };
}

/** Every string a Slack call carried (messages, edits, private notes, file names, titles and contents). */
function everythingSent(stack: SlackStack): string {
  const parts: string[] = [];
  for (const c of stack.fake.calls) parts.push(JSON.stringify(c.args));
  for (const f of stack.fake.files) parts.push(f.filename, f.title ?? '', f.initialComment ?? '', f.content.toString('utf8'));
  for (const r of stack.fake.responses) parts.push(JSON.stringify(r.body));
  return parts.join('\n');
}

describe('the final card of a verified run: Export and Open pull request', () => {
  it('posts the evidence and the patch into the thread, and opens a pull request naming who pressed it, with no server path anywhere', async () => {
    const stack = await startStack(tasksDir);
    const { fake, sender } = stack;
    const { run, rootTs, card } = await finishInThread(stack, 'full');
    const cardJson = JSON.stringify(card.blocks);
    expect(cardJson).toContain('"action_id":"ks_export_result"');
    expect(cardJson).toContain('"action_id":"ks_open_pull_request"');
    // The history is named by what it is, and the export command given, but not where it is on the server.
    expect(cardJson).toContain(`\`kernelseek export ${run.id}\``);
    expect(cardJson).toContain("commit in the run's git repository on the KernelSeek server (this one: tag `eval-2`)");

    // Export: two files in the thread, the first with a note naming who asked.
    const filesBefore = fake.files.length;
    await sender.action({ actionId: 'ks_export_result', value: run.id, user: BOB, channel: CHANNEL, messageTs: card.ts, threadTs: rootTs, responseUrl: fake.responseUrl('export') });
    await fake.waitFor((f) => f.files.length === filesBefore + 2, 20_000, 'the evidence and the patch');
    const [evidence, patch] = fake.files.slice(filesBefore);
    expect(evidence).toMatchObject({ filename: `${run.id}-eval2-evidence.md`, channel: CHANNEL, threadTs: rootTs });
    expect(evidence!.initialComment).toMatch(new RegExp(`^:package: <@${BOB}> exported ${run.id} eval #2: .*\\*Verified\\* — correct on all 11 scenarios`));
    const md = evidence!.content.toString('utf8');
    expect(md).toContain('**Verified**');
    expect(md).toContain(`https://kernelseek-test.slack.com/archives/${CHANNEL}/p${rootTs.replace('.', '')}`);
    expect(patch).toMatchObject({ filename: `${run.id}-eval2.patch`, threadTs: rootTs });
    expect(patch!.content.toString('utf8')).toMatch(/^diff --git a\/kernel\.cpp b\/kernel\.cpp\n/);

    // Open pull request: the branch, the request naming Bob by his name, the link in the thread.
    await sender.action({ actionId: 'ks_open_pull_request', value: run.id, user: BOB, channel: CHANNEL, messageTs: card.ts, threadTs: rootTs, responseUrl: fake.responseUrl('pr') });
    await fake.waitFor((f) => f.thread(CHANNEL, rootTs).some((m) => m.text.includes('opened a pull request')), 30_000, 'the pull request link');
    const link = fake.thread(CHANNEL, rootTs).find((m) => m.text.includes('opened a pull request'))!;
    expect(link.text).toBe(`:twisted_rightwards_arrows: <@${BOB}> opened a pull request: <https://github.com/acme/kernels/pull/1|acme/kernels#1> (branch \`kernelseek/${run.id}-eval2\` into \`main\`).`);
    expect(await showFile(team.bare, `kernelseek/${run.id}-eval2`, 'kernels/softmax.cpp', team.env)).toBe(FAST);
    expect(github.pulls).toHaveLength(1);
    expect(github.pulls[0]!.body).toContain(`Requested by **Bob Example (Slack ${BOB})** through KernelSeek`);
    expect(fake.callsOf('chat.postEphemeral').some((c) => c.args.user === BOB && String(c.args.text).includes('Opening a pull request'))).toBe(true);

    // A second press: the branch exists; Bob is told privately, nothing is pushed or opened.
    await sender.action({ actionId: 'ks_open_pull_request', value: run.id, user: BOB, channel: CHANNEL, messageTs: card.ts, threadTs: rootTs, responseUrl: fake.responseUrl('pr2') });
    await fake.waitFor((f) => f.callsOf('chat.postEphemeral').some((c) => String(c.args.text).includes('already exists')), 30_000, 'the refusal');
    expect(github.pulls).toHaveLength(1);

    // Someone who may not use KernelSeek gets nothing.
    await sender.action({ actionId: 'ks_export_result', value: run.id, user: 'UMALLORY1', channel: CHANNEL, messageTs: card.ts, threadTs: rootTs, responseUrl: fake.responseUrl('mallory') });
    await fake.waitFor((f) => f.callsOf('chat.postEphemeral').some((c) => c.args.user === 'UMALLORY1'), 10_000, 'the refusal to Mallory');
    expect(fake.files).toHaveLength(filesBefore + 2);

    await stack.poster.idle();
    const sent = everythingSent(stack);
    for (const serverPath of [fx.dataDir, tmp.dir, tasksDir, REPO_ROOT, os.tmpdir(), '/tmp/', os.homedir()]) expect(sent, serverPath).not.toContain(serverPath);
    expect(sent).not.toContain(TOKEN);
  }, 120_000);

  it('offers nothing for a result measured only on the quick subset, and no pull request when the task names no repository', async () => {
    const stack = await startStack(path.join(REPO_ROOT, 'kernels'));
    const pulls = github.pulls.length;
    const quick = await finishInThread(stack, 'quick');
    expect(JSON.stringify(quick.card.blocks)).not.toContain('ks_export_result');
    // A press on a stale button is answered, not obeyed: the result is not verified.
    const full = await finishInThread(stack, 'full');
    const blocks = JSON.stringify(full.card.blocks);
    expect(blocks).toContain('ks_export_result');
    expect(blocks).not.toContain('ks_open_pull_request');
    await stack.sender.action({ actionId: 'ks_open_pull_request', value: full.run.id, user: ALICE, channel: CHANNEL, messageTs: full.card.ts, threadTs: full.rootTs, responseUrl: stack.fake.responseUrl('pr') });
    await stack.fake.waitFor((f) => f.callsOf('chat.postEphemeral').some((c) => String(c.args.text).includes('Where does the kernel go?')), 20_000, 'the refusal');
    expect(github.pulls).toHaveLength(pulls);
  }, 60_000);
});
