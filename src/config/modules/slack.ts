import { z } from 'zod';
import { csv, optionalString, port, url } from '../fields.js';

const SLACK_USER = /^[UW][A-Z0-9]{2,}$/;
const SLACK_CHANNEL = /^[CGD][A-Z0-9]{2,}$/;

export const SlackEnvSchema = z.object({
  SLACK_BOT_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().startsWith('xoxb-', { message: 'must be a bot token starting with xoxb-' }).optional(),
  ),
  SLACK_SIGNING_SECRET: optionalString(),
  SLACK_APP_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().startsWith('xapp-', { message: 'must be an app-level token starting with xapp-' }).optional(),
  ),
  SLACK_API_URL: url('https://slack.com/api/', ['http:', 'https:']),
  PORT: port(3000),
  KERNELSEEK_ALLOWED_USERS: csv(SLACK_USER, 'Slack user ids', 'U012AB3CD,U045EF6GH'),
  KERNELSEEK_ALLOWED_CHANNELS: csv(SLACK_CHANNEL, 'Slack channel ids', 'C012AB3CD'),
  KERNELSEEK_ADMINS: csv(SLACK_USER, 'Slack user ids', 'U012AB3CD'),
  KERNELSEEK_PUBLIC_URL: url('https://kernelseek.example.com', ['https:', 'http:']),
});

export interface SlackConfig {
  botToken: string | undefined;
  signingSecret: string | undefined;
  /** Socket Mode when set; otherwise the HTTP receiver listens on `port`. */
  appToken: string | undefined;
  apiUrl: string | undefined;
  port: number;
  /** Empty = everyone in channels the bot is in. */
  allowedUsers: string[];
  /** Empty = every channel the bot is in. */
  allowedChannels: string[];
  /** May stop or steer any run; a run's owner may always steer their own. */
  admins: string[];
  /**
   * The app's public address (the manifest's unfurl domain): a run's link is `<publicUrl>/runs/<id>`,
   * which unfurls in any channel and redirects to the run's thread. Unset: runs link to their
   * thread only, and nothing unfurls.
   */
  publicUrl: string | undefined;
}
