import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgentEngine } from '../../src/agent/engine.js';
import { buildSystemPrompt, buildTaskBrief } from '../../src/agent/prompt/system-prompt.js';
import { toolDefinitions } from '../../src/agent/tools/definitions.js';
import { createLocalTurnScheduler } from '../../src/agent/scheduler.js';
import { createBankQuestionSource } from '../../src/agent/decisions/bank-source.js';
import { REPO_ROOT } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { decodeCandidate } from '../../src/harness/candidate.js';
import { loadTask } from '../../src/harness/tasks.js';
import type { Dispatcher, EvaluationRequest } from '../../src/queue/dispatcher.js';
import { createInProcessDispatcher } from '../../src/queue/in-process-dispatcher.js';
import { endTurn, reply, toolResultTexts, toolUse } from '../support/anthropic/script.js';
import { startFakeAnthropic } from '../support/anthropic/server.js';
import { useServiceFixture } from '../support/fixture.js';
import { LOCAL_TEST_AGENT, testConfig } from './test-config.js';
import { waitFor } from './helpers.js';

/**
 * A task whose kernel is a folder (a .cpp and a header): the agent's workspace holds every file, the
 * agent edits any of them, and `evaluate` sends them all as the job's files map; a link the agent
 * plants in the folder is not sent. The dispatcher is the real in-process one, watched: what the
 * harness receives is what is asserted (the harness of this checkout may not take folders yet).
 */

const HEADER = `#pragma once
#include <cstdint>

namespace team {
inline float row_max(const float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}
}  // namespace team
`;

/** cpu_softmax with its baseline split in two files, in a folder. */
async function folderTask(tasksDir: string): Promise<string> {
  const dir = path.join(tasksDir, 'folder_softmax');
  await cp(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), dir, { recursive: true });
  const yaml = (await readFile(path.join(dir, 'task.yaml'), 'utf8')).replace('name: cpu_softmax', 'name: folder_softmax').replace('file: kernel.cpp', 'file: kernel/').replace('baseline: baseline.cpp', 'baseline: baseline/');
  await writeFile(path.join(dir, 'task.yaml'), yaml);
  const source = (await readFile(path.join(dir, 'baseline.cpp'), 'utf8')).replace('#include <cstdint>', '#include <cstdint>\n#include "rowops.h"');
  await mkdir(path.join(dir, 'baseline'));
  await writeFile(path.join(dir, 'baseline', 'softmax.cpp'), source);
  await writeFile(path.join(dir, 'baseline', 'rowops.h'), HEADER);
  return dir;
}

const fx = useServiceFixture<{ close(): Promise<void> }>('pglite', 'ks-folder-');

describe('a folder candidate in the agent', () => {
  it('shows every file, lets the agent edit a header, and evaluates them all; a planted link is not sent', async () => {
    const tasksDir = path.join(fx.dataDir, 'tasks');
    await folderTask(tasksDir);
    const server = await startFakeAnthropic({
      script: [
        (req) => {
          // The prompt and the tools know the candidate is a folder of C++.
          expect(JSON.stringify(req.body.system)).toMatch(/The harness evaluates the folder kernel\/ in it: its sources and headers/);
          const evaluate = (req.body.tools as { name?: string; description?: string }[]).find((t) => t.name === 'evaluate');
          expect(evaluate?.description).toMatch(/every source and header of the workspace's kernel folder kernel\/ \(C\+\+, built with g\+\+\)/);
          return reply(toolUse('bash', { command: 'ls kernel' }));
        },
        (req) => {
          expect(toolResultTexts(req)[0]).toMatch(/rowops\.h\s+softmax\.cpp/);
          return reply(toolUse('str_replace_based_edit_tool', { command: 'str_replace', path: 'kernel/rowops.h', old_str: 'float m = x[0];', new_str: 'float m = x[0];  // the first element' }));
        },
        () => reply(toolUse('bash', { command: 'ln -s /etc/hostname kernel/planted.h && echo "// notes" > kernel/README.md && ls kernel' })),
        () => reply(toolUse('evaluate', { scenarios: 'quick' })),
        () => endTurn('Done.'),
        () => endTurn('Done.'),
      ],
    });
    const config = testConfig(fx.dataDir, server.url, { KERNELSEEK_TASKS_DIR: tasksDir });
    const inner = createInProcessDispatcher(config, { env: LOCAL_TEST_AGENT.dispatcherEnv });
    const sent: EvaluationRequest[] = [];
    const dispatcher: Dispatcher = { ...inner, evaluate: (request, options) => (sent.push(request), inner.evaluate(request, options)) };
    const scheduler = createLocalTurnScheduler({ logger: silentLogger, ...LOCAL_TEST_AGENT.turnRetries });
    const engine = createAgentEngine({ config, store: fx.db.store, dispatcher, scheduler, questions: createBankQuestionSource({ store: fx.db.store }), logger: silentLogger, retryPolicy: LOCAL_TEST_AGENT.retryPolicy });
    scheduler.attach(engine);
    fx.service = {
      async close() {
        scheduler.close();
        await engine.close();
        await inner.close();
        await server.close();
      },
    };
    const run = await engine.startRun({ task: 'folder_softmax', owner: 'tester', origin: 'api', autonomous: false, budgets: { steps: 5 } });
    await waitFor('the evaluation', () => fx.db.store.evaluations.forRun(run.id), (e) => e.length === 1 && e[0]!.status !== 'pending', 120_000);

    expect(sent).toHaveLength(1);
    const request = sent[0]!;
    expect(request).toMatchObject({ task: 'folder_softmax', fileName: 'kernel/', scenarios: 'quick' });
    expect(request.source).toBeUndefined();
    // Both files, the header as the agent edited it; the link and the README are not candidate files.
    expect(Object.keys(request.files!).sort()).toEqual(['rowops.h', 'softmax.cpp']);
    expect(request.files!['rowops.h']).toContain('float m = x[0];  // the first element');
    expect(JSON.stringify(request.files)).not.toContain(await readFile('/etc/hostname', 'utf8').then((t) => t.trim()));
    // The store keeps the files as one document, which reads back to the same map.
    const [evaluation] = await fx.db.store.evaluations.forRun(run.id);
    const loaded = (await loadTask(path.join(tasksDir, 'folder_softmax', 'task.yaml'))).task!;
    expect(decodeCandidate(evaluation!.source, loaded.layout)).toEqual(request.files);
  }, 180_000);
});

describe('the prompt and the tools know the kernel language', () => {
  it('a Triton task: the entry function and its arguments, the module imported in a process of its own', async () => {
    const dir = path.join(fx.dataDir, 'triton', 'tri_softmax');
    await cp(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), dir, { recursive: true });
    const yaml = (await readFile(path.join(dir, 'task.yaml'), 'utf8'))
      .replace('name: cpu_softmax', 'name: tri_softmax')
      .replace('language: cpp', 'language: triton')
      .replace('file: kernel.cpp', 'file: kernel.py')
      .replace('baseline: baseline.cpp', 'baseline: baseline.py');
    await writeFile(path.join(dir, 'task.yaml'), yaml);
    await writeFile(path.join(dir, 'baseline.py'), 'import triton\n\n\ndef softmax_rows(x, y, rows, cols):\n    y.copy_(x.softmax(-1))\n');
    const { task, problems } = await loadTask(path.join(dir, 'task.yaml'));
    expect(problems).toEqual([]);
    const system = buildSystemPrompt({ task: task!, workspaceDir: '/workspace', bashTimeoutSeconds: 60, sandbox: 'sandbox', limits: 'x', workspaceMaxMb: 50 });
    expect(system).toMatch(/The harness evaluates exactly one file in it, kernel\.py/);
    expect(system).toMatch(/kernel\.py is a Python module with @triton\.jit kernels; the harness imports it in a process of its own and calls softmax_rows\(\) with torch tensors/);
    expect(system).not.toMatch(/g\+\+|nvcc/);
    const brief = buildTaskBrief({ task: task!, scenarios: 'quick', target: 1, arch: null, budgetEvals: 10 });
    expect(brief).toMatch(/Kernel file: kernel\.py \(Triton\)\. Entry point:\n\s+def softmax_rows\(\n\s+x {2}# torch\.Tensor, float32, input\n\s+y {2}# torch\.Tensor, float32, output\n\s+rows {2}# int = rows/);
    expect(brief).not.toMatch(/extern "C"/);
    const evaluate = toolDefinitions('cpu', task!.layout).find((t) => 'name' in t && t.name === 'evaluate') as { description: string };
    expect(evaluate.description).toMatch(/the workspace's kernel file kernel\.py \(Python with @triton\.jit kernels\) to the harness: it is loaded/);
  });
});
