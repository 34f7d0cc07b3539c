import { afterAll, describe, expect, it } from 'vitest';
import { UserInputError } from '../../src/core/errors.js';
import { createBullmqDispatcher } from '../../src/queue/bullmq-dispatcher.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { queueNameFor } from '../../src/queue/catalog.js';
import { HARNESS, newPrefix, REDIS_URL, removePrefix, TEST_RESULT_KEY } from './support.js';

const EVAL_SM90 = queueNameFor('evaluate', 'sm_90', HARNESS.id);

/** The producer side alone: no worker listens on these queues. */
describe('createBullmqDispatcher without a worker', () => {
  const prefix = newPrefix('dispatch');
  const dispatcher = createBullmqDispatcher({ connection: redisOptionsFromUrl(REDIS_URL), prefix, resultKey: TEST_RESULT_KEY, waitTimeoutSeconds: 2 });
  afterAll(async () => {
    await dispatcher.close();
    await removePrefix(prefix);
  });
  const request = { task: 'flash_attn_fwd', source: '__global__ void k() {}', fileName: 'kernel.cu', scenarios: 'quick', arch: 'sm_90', device: 'cuda' as const };

  it('takes a job that has not started out of the queue when the caller gives up', async () => {
    const controller = new AbortController();
    const pending = dispatcher.evaluate({ ...request, runId: 'ks-abort', seq: 1 }, {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'queued') controller.abort(new Error('the person pressed Ctrl-C'));
      },
    });
    await expect(pending).rejects.toThrow('the person pressed Ctrl-C');
    expect(await dispatcher.client.queue(EVAL_SM90).getJob('eval:ks-abort:1')).toBeUndefined();
  });

  it('gives up after the wait timeout, leaving the job queued for when a worker comes', async () => {
    await expect(dispatcher.evaluate({ ...request, runId: 'ks-wait', seq: 1 })).rejects.toThrow(new RegExp(`Job eval:ks-wait:1 on ${EVAL_SM90} failed: .*timed out before finishing`));
    expect(await (await dispatcher.client.queue(EVAL_SM90).getJob('eval:ks-wait:1'))?.getState()).toBe('waiting');
  });

  it('refuses an invalid request before it reaches Redis', async () => {
    await expect(dispatcher.evaluate({ ...request, fileName: 'kernel.exe' })).rejects.toThrow(UserInputError);
    await expect(dispatcher.evaluate({ ...request, arch: 'hopper' })).rejects.toThrow('arch must be cpu or a CUDA architecture such as sm_90');
  });
});
