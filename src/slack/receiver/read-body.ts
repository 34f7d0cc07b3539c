import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body is over the ${limit}-byte limit`);
  }
}

/** Too many bodies are being read at once: the request is refused (503) rather than held. */
export class BodyBudgetError extends Error {
  constructor() {
    super('too many request bodies are being read at once');
  }
}

/** Bytes held by bodies being read right now, over every request of the process. */
export interface BodyBudget {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

export function createBodyBudget(maxBytes: number): BodyBudget {
  let held = 0;
  return {
    take(bytes) {
      if (held + bytes > maxBytes) return false;
      held += bytes;
      return true;
    },
    give(bytes) {
      held = Math.max(0, held - bytes);
    },
  };
}

/**
 * Reads a request's body, counting as it streams: past `limit` bytes (or past what the process may
 * hold in all) it stops reading and rejects, so a body never sits in memory beyond the limit.
 * `release` gives the bytes back to the budget once the caller is done with the body.
 */
export function readBoundedBody(req: IncomingMessage, limit: number, budget: BodyBudget): Promise<{ body: Buffer; release: () => void }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | undefined) => {
      if (done) return;
      done = true;
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (error) {
        budget.give(size);
        chunks.length = 0;
        req.pause();
        return reject(error);
      }
      let given = false;
      resolve({ body: Buffer.concat(chunks, size), release: () => void (given || ((given = true), budget.give(size))) });
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) return finish(new BodyTooLargeError(limit));
      if (!budget.take(chunk.length)) return finish(new BodyBudgetError());
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined);
    const onError = (error: Error) => finish(error);
    const onAborted = () => finish(new Error('the client aborted the request'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}
