import type { TaskCatalog } from '../harness/tasks.js';

/**
 * The task catalog, loaded at most once per `ttlMs` and shared by concurrent callers. Loading it
 * parses every task.yaml and expands every scenario grid (about 0.2 s of CPU for the shipped tasks),
 * work that would otherwise run for each slash command on the event loop that must ack the next one
 * within 3 seconds. A new task folder shows up within `ttlMs`; a stale catalog is served while the
 * fresh one loads.
 */
export function createTaskCatalogCache(load: () => Promise<TaskCatalog>, ttlMs = 30_000, now: () => number = Date.now): () => Promise<TaskCatalog> {
  let value: TaskCatalog | undefined;
  let loadedAt = 0;
  let inFlight: Promise<TaskCatalog> | undefined;
  const refresh = () => {
    inFlight ??= load()
      .then((catalog) => {
        value = catalog;
        loadedAt = now();
        return catalog;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
  return async () => {
    if (value === undefined) return refresh();
    if (now() - loadedAt > ttlMs) void refresh().catch(() => {});
    return value;
  };
}
