import { setTimeout as delay } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { App, LogLevel, SocketModeReceiver, type Receiver } from '@slack/bolt';
import { ConfigError } from '../core/errors.js';
import { toBoltLogger } from './bolt-logger.js';
import type { SlackDeps } from './deps.js';
import { createHealthRoute, startHealthServer, type HealthReport } from './health.js';
import { registerListeners } from './listeners/index.js';
import { EVENT_MEMORY_MS } from './listeners/middleware/dedupe-events.js';
import { createStoreReplayGuard } from './receiver/replay-guard.js';
import { SignedRequestReceiver } from './receiver/signed-receiver.js';
import { createRunPageRoute } from './run-page.js';

/** Bolt's default events path; the manifest's request URLs point here. */
export const EVENTS_PATH = '/slack/events';

export interface SlackAppOptions {
  /** What GET /healthz reports. */
  health: () => Promise<HealthReport>;
  /** HTTP port (0: any free port, for tests). Default: config PORT. */
  port?: number;
}

export interface RunningSlackApp {
  mode: 'http' | 'socket';
  /** The port serving /slack/events (HTTP mode) or /healthz (both). */
  port: number;
  stop(): Promise<void>;
}

/**
 * The Bolt app: Socket Mode when SLACK_APP_TOKEN is set (no public URL needed), otherwise the HTTP
 * receiver on PORT at /slack/events, which verifies Slack's request signatures. Both serve /healthz.
 * The listeners live in listeners/; this file only builds and starts.
 */
export async function startSlackApp(deps: SlackDeps, options: SlackAppOptions): Promise<RunningSlackApp> {
  const { slack } = deps;
  const problems: string[] = [];
  if (!slack.botToken) problems.push('SLACK_BOT_TOKEN: required to serve Slack (the bot token, xoxb-…)');
  if (!slack.appToken && !slack.signingSecret) problems.push('SLACK_SIGNING_SECRET: required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)');
  if (problems.length > 0) throw new ConfigError(problems);

  const logger = toBoltLogger(deps.logger);
  const port = options.port ?? slack.port;
  const healthRoute = createHealthRoute(options.health);
  const clientOptions = slack.apiUrl ? { slackApiUrl: slack.apiUrl } : {};
  const socket = Boolean(slack.appToken);
  // HTTP: our receiver, which refuses forged, oversized, out-of-window and replayed requests
  // before reading or acting on them (receiver/signed-receiver.ts says why Bolt's is not enough).
  const receiver: Receiver = socket
    ? new SocketModeReceiver({ appToken: slack.appToken!, logger, installerOptions: { clientOptions } })
    : new SignedRequestReceiver({
        signingSecret: slack.signingSecret!,
        path: EVENTS_PATH,
        // A run's public link redirects to its thread (and unfurls when pasted: link_shared).
        routes: [healthRoute, createRunPageRoute({ store: deps.store, directory: deps.directory, logger: deps.logger })],
        replay: createStoreReplayGuard(deps.store),
        logger: deps.logger.child({ component: 'slack-receiver' }),
      });

  const app = new App({ token: slack.botToken!, receiver, logger, logLevel: LogLevel.INFO, clientOptions, deferInitialization: true });
  // auth.test: a wrong token fails here, at start-up, with Slack's reason.
  await app.init();
  app.error(async (error) => {
    deps.logger.error({ err: error }, 'unhandled error in a Slack listener');
    // Rethrown so the receiver answers an event that failed with 500 and Slack delivers it again.
    throw error;
  });
  const pending = registerListeners(app, deps);
  // Remembered event ids are only needed while Slack may still retry; forget old ones hourly.
  const forget = setInterval(() => {
    deps.store.slackEvents.forgetBefore(new Date(Date.now() - EVENT_MEMORY_MS)).catch((error: unknown) => deps.logger.warn({ err: error }, 'could not forget old Slack event ids'));
  }, 3600 * 1000);
  forget.unref();
  // A stop lets commands already acknowledged finish (bounded), so none is lost half-done.
  const drain = () => Promise.race([pending.idle(), delay(10_000, undefined, { ref: false })]);

  if (socket) {
    // Socket Mode has no HTTP endpoint of its own: /healthz gets a small server on the port.
    const health = await startHealthServer(port, options.health);
    await (receiver as SocketModeReceiver).start();
    const stop = async () => {
      clearInterval(forget);
      await app.stop();
      await new Promise((r) => health.close(r));
      await drain();
    };
    return { mode: 'socket', port: (health.address() as AddressInfo).port, stop };
  }
  const server: Server = await (receiver as SignedRequestReceiver).start(port);
  const bound = (server.address() as AddressInfo).port;
  const stop = async () => {
    clearInterval(forget);
    await (receiver as SignedRequestReceiver).stop();
    await drain();
  };
  return { mode: 'http', port: bound, stop };
}
