import type { SlackPoster } from '../poster/poster.js';

/**
 * The thread's status line (`assistant.threads.setStatus`, "KernelSeek is timing 4/11…") while a
 * run works: what it does between the messages of its thread. Slack clears the line after two
 * minutes without a message, and whenever the app posts in the thread, so it is sent again before
 * the two minutes are up (every `refreshMs`) and after every thread message; it is cleared when the
 * run waits for people, pauses or ends.
 *
 * Calls stay within Slack's limits: the poster paces `setStatus` calls on a lane of their own and
 * keeps only the latest pending status of a thread, and an unchanged status is not sent again
 * before its refresh is due.
 */

/** Slack clears a status after this long without a message. */
export const SLACK_STATUS_LIFETIME_MS = 120_000;
/** Default refresh: well inside the lifetime, with room for the poster's pacing under load. */
export const STATUS_REFRESH_MS = 90_000;

export interface StatusClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: StatusClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface ThreadRef {
  channel: string;
  threadTs: string;
}

export interface LiveStatus {
  /** Shows `status` in the thread (sent now if it changed, else kept alive by the refresh). */
  set(thread: ThreadRef, status: string, loadingMessages?: string[]): void;
  /** Clears the thread's status line and stops refreshing it. */
  clear(thread: ThreadRef): void;
  /** A message was posted in the thread: Slack cleared the line, so it is shown again. */
  posted(thread: ThreadRef): void;
  /** Stops every refresh (the process is shutting down). */
  close(): void;
}

interface ThreadState {
  thread: ThreadRef;
  status: string;
  loadingMessages: string[] | undefined;
  sentAt: number;
  timer: unknown;
}

export function createLiveStatus(options: { poster: Pick<SlackPoster, 'setThreadStatus'>; refreshMs?: number; clock?: StatusClock }): LiveStatus {
  const { poster } = options;
  const clock = options.clock ?? realClock;
  const refreshMs = Math.min(options.refreshMs ?? STATUS_REFRESH_MS, SLACK_STATUS_LIFETIME_MS - 1000);
  const threads = new Map<string, ThreadState>();
  const keyOf = (t: ThreadRef) => `${t.channel}/${t.threadTs}`;

  function send(state: ThreadState): void {
    state.sentAt = clock.now();
    void poster.setThreadStatus({
      channel: state.thread.channel,
      threadTs: state.thread.threadTs,
      status: state.status,
      ...(state.loadingMessages ? { loadingMessages: state.loadingMessages } : {}),
    });
    if (state.timer !== undefined) clock.clearTimeout(state.timer);
    state.timer = clock.setTimeout(() => {
      state.timer = undefined;
      if (threads.get(keyOf(state.thread)) === state) send(state);
    }, refreshMs);
  }

  return {
    set(thread, status, loadingMessages) {
      const key = keyOf(thread);
      const existing = threads.get(key);
      if (existing && existing.status === status) return;
      const state: ThreadState = existing ?? { thread, status, loadingMessages, sentAt: 0, timer: undefined };
      state.status = status;
      state.loadingMessages = loadingMessages;
      threads.set(key, state);
      send(state);
    },
    clear(thread) {
      const key = keyOf(thread);
      const state = threads.get(key);
      if (!state) return;
      if (state.timer !== undefined) clock.clearTimeout(state.timer);
      threads.delete(key);
      void poster.setThreadStatus({ channel: thread.channel, threadTs: thread.threadTs, status: '' });
    },
    posted(thread) {
      const state = threads.get(keyOf(thread));
      if (state) send(state);
    },
    close() {
      for (const state of threads.values()) if (state.timer !== undefined) clock.clearTimeout(state.timer);
      threads.clear();
    },
  };
}

/** The status line for a harness progress event (`i` counts from 0), or undefined to keep the current one. */
export function statusForProgress(progress: { phase: string; i?: number | undefined; n?: number | undefined; status?: string | undefined }): string | undefined {
  const of = progress.n ? ` ${Math.min((progress.i ?? 0) + 1, progress.n)}/${progress.n}` : '';
  switch (progress.phase) {
    case 'compile':
      return progress.status === 'compile_error' ? undefined : 'is checking correctness…';
    case 'correctness':
      return `is checking correctness${of}…`;
    case 'timing':
      return `is timing${of}…`;
    default:
      return undefined;
  }
}

/** The status line while a tool runs. */
export function statusForTool(name: string): string {
  switch (name) {
    case 'evaluate':
      return 'is compiling the candidate…';
    case 'gpu_bash':
      return 'is running a command on a GPU host…';
    case 'bash':
      return 'is running a command…';
    case 'str_replace_based_edit_tool':
      return 'is editing the kernel…';
    default:
      return 'is working…';
  }
}

export const THINKING = 'is thinking…';
/** Rotated while the model thinks (Slack shows at most 10). */
export const THINKING_MESSAGES = ['is thinking…', 'is reading the last result…', 'is weighing the next experiment…'];

/** What the status card says the run does while a tool runs (changes once per tool call). */
export function stageOfTool(name: string): string {
  switch (name) {
    case 'evaluate':
      return 'evaluating: compiling the candidate';
    case 'gpu_bash':
      return 'running a command on a GPU host';
    case 'bash':
      return 'running a command';
    case 'str_replace_based_edit_tool':
      return 'editing';
    default:
      return `running ${name}`;
  }
}

/**
 * The status card's stage for a harness progress event: one value per stage (compiled, checking
 * correctness, timing), so the card is edited once per stage and not once per scenario; undefined
 * for events inside a stage.
 */
export function stageOfProgress(seq: number, progress: { phase: string; n?: number | undefined; status?: string | undefined }): string | undefined {
  const of = progress.n ? ` ${progress.n} scenarios` : '';
  switch (progress.phase) {
    case 'queued':
      return `eval #${seq}: queued for a worker`;
    case 'compile':
      return progress.status === 'compile_error' ? `eval #${seq}: compile failed` : `eval #${seq}: compiled`;
    case 'correctness':
      return `eval #${seq}: checking correctness on${of || ' every scenario'}`;
    case 'timing':
      return `eval #${seq}: timing${of}`;
    default:
      return undefined;
  }
}
