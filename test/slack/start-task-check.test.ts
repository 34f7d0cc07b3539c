import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../src/config/index.js';
import { useServiceFixture } from '../support/fixture.js';
import { startSlackStack, type SlackStack } from '../support/slack/slack-stack.js';

// `/kernelseek start` runs the task check first: a task whose reference.py and baseline disagree with
// task.yaml is refused with every problem and its fix, and no run is created.
const fx = useServiceFixture<SlackStack>('pglite', 'ks-slack-check-');

describe('/kernelseek start on a task with mistakes', () => {
  it('answers with every problem and its fix, and starts nothing', async () => {
    const tasksDir = path.join(fx.dataDir, 'tasks');
    const dir = path.join(tasksDir, 'team_softmax');
    await cp(path.join(REPO_ROOT, 'kernels', 'cpu_softmax'), dir, { recursive: true });
    await writeFile(path.join(dir, 'task.yaml'), (await readFile(path.join(dir, 'task.yaml'), 'utf8')).replace('name: cpu_softmax', 'name: team_softmax'));
    await writeFile(path.join(dir, 'reference.py'), (await readFile(path.join(dir, 'reference.py'), 'utf8')).replace('def lowp(inputs, scenario):', 'def lowp(inputs):'));
    await writeFile(path.join(dir, 'baseline.cpp'), (await readFile(path.join(dir, 'baseline.cpp'), 'utf8')).replace('int64_t cols)', 'int cols)'));
    fx.service = await startSlackStack({ store: fx.db.store, dataDir: fx.dataDir, env: { KERNELSEEK_TASKS_DIR: tasksDir } });
    const id = 'cmd-check';
    await fx.service.sender.command({ text: 'start team_softmax', user: 'UALICE001', channel: 'CKERNELS1', responseUrl: fx.service.fake.responseUrl(id) });
    await fx.service.fake.waitFor((f) => f.responses.some((r) => r.id === id), 20_000, 'the reply');
    const text = String(fx.service.fake.responses.find((r) => r.id === id)!.body.text);
    expect(text).toMatch(/Could not start the run: Task 'team_softmax' has 2 problems to fix first/);
    expect(text).toMatch(/lowp\(\) takes 1 positional argument; the harness calls it with 2[\s\S]*fix: give it the signature def lowp\(inputs, scenario\):/);
    expect(text).toMatch(/parameter 4 of softmax_rows\(\) \(int cols\) is int, but the argument is int64[\s\S]*fix: /);
    // Server paths stay on the server.
    expect(text).not.toContain(fx.dataDir);
    expect(await fx.db.store.runs.list()).toHaveLength(0);
  }, 60_000);
});
