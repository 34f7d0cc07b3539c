import { AppError } from '../../core/errors.js';
import type { Usage } from './types.js';

/**
 * A streaming response that stops sending is aborted after `idleMs` without a byte (the API's own
 * `ping` events count, so a long think is not idle), instead of holding the turn until a worker's
 * lock or a person gives up on it. Any byte of the response resets the clock: the headers, every
 * event. The request is then retried like an overload (model-retry.ts), a few times at most.
 */
export class StreamStalledError extends AppError {
  readonly idleMs: number;
  /** What the response had reported before it stalled (input tokens, output so far): billed all the same. */
  readonly usage: Usage | undefined;
  constructor(idleMs: number, usage: Usage | undefined) {
    super('model_stream_stalled', `the response stream stalled: no data for ${formatSeconds(idleMs)}`);
    this.idleMs = idleMs;
    this.usage = usage;
  }
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

export interface IdleWatch {
  /** Aborted when nothing arrived for the idle time. */
  signal: AbortSignal;
  /** The clock starts again (a byte arrived). */
  touch(): void;
  /** True once the watch fired. */
  fired(): boolean;
  stop(): void;
}

export function watchIdle(idleMs: number): IdleWatch {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new StreamStalledError(idleMs, undefined)), idleMs);
    timer.unref();
  };
  arm();
  return {
    signal: controller.signal,
    touch: () => {
      if (!controller.signal.aborted) arm();
    },
    fired: () => controller.signal.aborted,
    stop: () => {
      if (timer) clearTimeout(timer);
    },
  };
}

/** Statuses whose response may not carry a body (a Response built with one throws). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/** `fetch` that touches `watch` on the response's headers and on every chunk of its body. */
export function watchedFetch(base: typeof fetch, watch: Pick<IdleWatch, 'touch'>): typeof fetch {
  return async (input, init) => {
    watch.touch();
    const response = await base(input, init);
    watch.touch();
    if (!response.body || NO_BODY.has(response.status)) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          watch.touch();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
