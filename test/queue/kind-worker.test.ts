import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../src/core/errors.js';
import type { AgentTurnPayload } from '../../src/queue/payloads.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { createKindWorker } from '../../src/queue/kind-worker.js';
import { createQueueClient, type QueueClient } from '../../src/queue/producer.js';
import { newPrefix, REDIS_URL, removePrefix } from './support.js';

/** The seam the agent and digest modules plug into: validated payloads, final errors, no duplicates. */
describe('createKindWorker and createQueueClient (agent-turn jobs)', () => {
  const prefix = newPrefix('kinds');
  const connection = redisOptionsFromUrl(REDIS_URL);
  let client: QueueClient;
  const workers: Worker[] = [];
  const seen: AgentTurnPayload[] = [];

  beforeAll(async () => {
    client = createQueueClient({ connection, prefix });
    workers.push(
      createKindWorker(
        'agent-turn',
        async (payload) => {
          seen.push(payload);
          if (payload.runId === 'ks-gone') throw new NonRetryableError('run_gone', 'The run ks-gone was deleted.');
          return { done: `${payload.runId}/${payload.turn}` };
        },
        { connection, prefix, lockSeconds: 5, stalledCheckSeconds: 5 },
      ),
    );
    await Promise.all(workers.map((w) => w.waitUntilReady()));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await client.close();
    await removePrefix(prefix);
  });

  it('hands the processor a validated payload and returns its result; a second enqueue of the same turn is the same job', async () => {
    const events = await client.events('agent-turn');
    const first = await client.enqueue('agent-turn', { runId: 'ks-1', turn: 3 });
    expect(first).toMatchObject({ created: true, queueName: 'agent-turn' });
    expect(first.job.id).toBe('turn:ks-1:3');
    expect(await first.job.waitUntilFinished(events, 20_000)).toEqual({ done: 'ks-1/3' });
    const second = await client.enqueue('agent-turn', { runId: 'ks-1', turn: 3 });
    expect(second.created).toBe(false);
    expect(await second.job.waitUntilFinished(events, 20_000)).toEqual({ done: 'ks-1/3' });
    expect(seen.filter((p) => p.runId === 'ks-1')).toHaveLength(1);
  });

  it('refuses a bad payload at the producer, and fails one that slipped past at once in the worker', async () => {
    await expect(client.enqueue('digest', { channel: 'general' })).rejects.toThrow('Invalid digest job: channel: channel must be a Slack channel id such as C012AB3CD');
    await expect(client.enqueue('agent-turn', { runId: 'ks-1', turn: -1 })).rejects.toThrow(/Invalid agent-turn job: turn/);
    const events = await client.events('agent-turn');
    const raw = await client.queue('agent-turn').add('agent-turn', { runId: 'ks-1' }, { jobId: 'turn:raw:1', attempts: 4 });
    await expect(raw.waitUntilFinished(events, 20_000)).rejects.toThrow('invalid agent-turn payload: turn: Invalid input: expected number, received undefined');
    expect((await client.queue('agent-turn').getJob('turn:raw:1'))?.attemptsMade).toBe(1);
  });

  it('does not retry an error that retrying cannot fix', async () => {
    const events = await client.events('agent-turn');
    const { job } = await client.enqueue('agent-turn', { runId: 'ks-gone', turn: 0 });
    await expect(job.waitUntilFinished(events, 20_000)).rejects.toThrow('The run ks-gone was deleted.');
    const failed = await client.queue('agent-turn').getJob(job.id!);
    expect(failed?.attemptsMade).toBe(1);
    expect(seen.filter((p) => p.runId === 'ks-gone')).toHaveLength(1);
    // A failed job produced nothing: enqueueing it again runs it again.
    const again = await client.enqueue('agent-turn', { runId: 'ks-gone', turn: 0 });
    expect(again.created).toBe(true);
    await expect(again.job.waitUntilFinished(events, 20_000)).rejects.toThrow('deleted');
    expect(seen.filter((p) => p.runId === 'ks-gone')).toHaveLength(2);
  });
});
