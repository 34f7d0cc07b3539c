/**
 * One job at a time per GPU: an evaluation and a gpu_bash command on the same GPU would disturb
 * each other's timings. Each slot's workers (one per queue) take this lock around their work.
 */
export interface SlotLock {
  run<T>(fn: () => Promise<T>): Promise<T>;
}

export function createSlotLock(): SlotLock {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(fn: () => Promise<T>): Promise<T> {
      const next = tail.then(fn, fn);
      // The chain continues whatever this job's fate; its error belongs to its caller only.
      tail = next.catch(() => undefined);
      return next;
    },
  };
}
