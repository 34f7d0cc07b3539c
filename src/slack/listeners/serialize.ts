/**
 * Runs tasks one after another per key (a thread), so two replies posted a second apart are handed
 * to the agent in the order they were written even though their events are handled concurrently.
 */
export function createKeyedSerializer() {
  const chains = new Map<string, Promise<void>>();
  return function run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = chains.get(key) ?? Promise.resolve();
    const next = previous.then(task, task).finally(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
    chains.set(key, next);
    return next;
  };
}
