import type { Writable } from 'node:stream';

/**
 * A line that says what the command waits for, with the seconds, redrawn every `tickMs` on a
 * terminal (opening the embedded database takes seconds); nothing at all when the output is not a
 * terminal. `stop()` erases it; calling it twice is harmless.
 */
export function startSpinner(out: Writable, text: string, options: { live: boolean; tickMs?: number }): { stop(): void } {
  if (!options.live) return { stop() {} };
  const started = Date.now();
  const frames = ['|', '/', '-', '\\'];
  let frame = 0;
  const draw = () => {
    frame = (frame + 1) % frames.length;
    out.write(`\r\x1b[2K${frames[frame]} ${text}… ${Math.floor((Date.now() - started) / 1000)} s`);
  };
  draw();
  const timer = setInterval(draw, options.tickMs ?? 250);
  timer.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      out.write('\r\x1b[2K');
    },
  };
}
