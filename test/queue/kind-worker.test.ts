import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../src/core/errors.js';
import type { DigestPayload } from '../../src/queue/payloads.js';
import { redisOptionsFromUrl } from '../../src/queue/connection.js';
import { createKindWorker } from '../../src/queue/kind-worker.js';
import { createQueueClient, type QueueClient } from '../../src/queue/producer.js';
import { newPrefix, REDIS_URL, removePrefix } from './support.js';

/** The seam the agent and digest modules plug into: validated payloads, final errors, no duplicates. */
describe('createKindWorker and createQueueClient (digest and agent-turn jobs)', () => {
  const prefix = newPrefix('kinds');
  const connection = redisOptionsFromUrl(REDIS_URL);
  let client: QueueClient;
  const workers: Worker[] = [];
  const seen: DigestPayload[] = [];

  beforeAll(async () => {
    client = createQueueClient({ connection, prefix });
    workers.push(
      createKindWorker(
        'digest',
        async (payload) => {
          seen.push(payload);
          if (payload.channel === 'CGONE') throw new NonRetryableError('channel_gone', 'The channel CGONE was archived.');
          return { posted: `${payload.channel}/${payload.day}` };
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

  it('hands the processor a validated payload and returns its result; a second enqueue of the same day is the same job', async () => {
    const events = await client.events('digest');
    const first = await client.enqueue('digest', { channel: 'C0123', day: '2026-03-14' });
    expect(first).toMatchObject({ created: true, queueName: 'digest' });
    expect(first.job.id).toBe('digest:C0123:2026-03-14');
    expect(await first.job.waitUntilFinished(events, 20_000)).toEqual({ posted: 'C0123/2026-03-14' });
    const second = await client.enqueue('digest', { channel: 'C0123', day: '2026-03-14' });
    expect(second.created).toBe(false);
    expect(await second.job.waitUntilFinished(events, 20_000)).toEqual({ posted: 'C0123/2026-03-14' });
    expect(seen.filter((p) => p.channel === 'C0123')).toHaveLength(1);
  });

  it('refuses a bad payload at the producer, and fails one that slipped past at once in the worker', async () => {
    await expect(client.enqueue('digest', { channel: 'C0123', day: 'yesterday' })).rejects.toThrow('Invalid digest job: day: day must be a date such as 2026-03-14');
    await expect(client.enqueue('agent-turn', { runId: 'ks-1', turn: -1 })).rejects.toThrow(/Invalid agent-turn job: turn/);
    const events = await client.events('digest');
    const raw = await client.queue('digest').add('digest', { channel: 'C0123' }, { jobId: 'digest:raw:1', attempts: 4 });
    await expect(raw.waitUntilFinished(events, 20_000)).rejects.toThrow('invalid digest payload: day: Invalid input: expected string, received undefined');
    expect((await client.queue('digest').getJob('digest:raw:1'))?.attemptsMade).toBe(1);
  });

  it('does not retry an error that retrying cannot fix', async () => {
    const events = await client.events('digest');
    const { job } = await client.enqueue('digest', { channel: 'CGONE', day: '2026-03-14' });
    await expect(job.waitUntilFinished(events, 20_000)).rejects.toThrow('The channel CGONE was archived.');
    const failed = await client.queue('digest').getJob(job.id!);
    expect(failed?.attemptsMade).toBe(1);
    expect(seen.filter((p) => p.channel === 'CGONE')).toHaveLength(1);
    // A failed job produced nothing: enqueueing it again runs it again.
    const again = await client.enqueue('digest', { channel: 'CGONE', day: '2026-03-14' });
    expect(again.created).toBe(true);
    await expect(again.job.waitUntilFinished(events, 20_000)).rejects.toThrow('archived');
    expect(seen.filter((p) => p.channel === 'CGONE')).toHaveLength(2);
  });
});
