import type { SlackConfig } from '../config/index.js';

/**
 * Who may do what (DESIGN §4). Empty lists mean "everyone in the channels the bot is in":
 *
 * - use /kernelseek at all (beyond `help`): a user on KERNELSEEK_ALLOWED_USERS (admins count), in a
 *   channel on KERNELSEEK_ALLOWED_CHANNELS — reads are authorised like writes;
 * - see a run (its card, its line in `list`): from the run's own channel, whose members see its
 *   thread anyway; admins see every run from anywhere. A run of another channel is answered exactly
 *   like a run that does not exist, so its id, owner and progress do not leak;
 * - post the digest on demand (it covers the runs of every channel): an admin; any allowed user
 *   when no admins are configured;
 * - start a run: a user on KERNELSEEK_ALLOWED_USERS, in a channel on KERNELSEEK_ALLOWED_CHANNELS;
 * - ask a question in a run's thread (a reply, *Ask from the bank*): any allowed user, not only the
 *   run's owner — a team steers its runs together;
 * - stop, pause, resume, add budget: the run's owner (while still an allowed user) or a
 *   KERNELSEEK_ADMINS user (DESIGN §4: with no admins configured, the run's owner only — one
 *   person's run is not stopped by a passer-by);
 * - promote a question into the bank (shared by every run): an admin, or any allowed user when no
 *   admins are configured.
 */
export type AccessPolicy = Pick<SlackConfig, 'allowedUsers' | 'allowedChannels' | 'admins'>;

export type Decision = { ok: true } | { ok: false; reason: string };

const ALLOW: Decision = { ok: true };

function adminsHint(policy: AccessPolicy): string {
  return policy.admins.length > 0 ? ` Ask ${policy.admins.map((u) => `<@${u}>`).join(', ')}.` : '';
}

function isAllowedUser(policy: AccessPolicy, user: string): boolean {
  return policy.allowedUsers.length === 0 || policy.allowedUsers.includes(user) || policy.admins.includes(user);
}

export function isAdmin(policy: AccessPolicy, user: string): boolean {
  return policy.admins.includes(user);
}

const NOT_ALLOWED = 'You are not on KernelSeek\'s list of allowed users (KERNELSEEK_ALLOWED_USERS)';

/** Any /kernelseek command but `help`: an allowed user in an allowed channel (admins anywhere). */
export function canUse(policy: AccessPolicy, user: string, channel: string): Decision {
  if (!isAllowedUser(policy, user)) return { ok: false, reason: `${NOT_ALLOWED}, so you cannot use /kernelseek.${adminsHint(policy)}` };
  if (policy.allowedChannels.length > 0 && !policy.allowedChannels.includes(channel) && !isAdmin(policy, user)) {
    const where = policy.allowedChannels.map((c) => `<#${c}>`).join(', ');
    return { ok: false, reason: `KernelSeek is not used in this channel: runs cannot be started or seen here (KERNELSEEK_ALLOWED_CHANNELS). Use it in ${where}.` };
  }
  return ALLOW;
}

/** Whether `user`, asking in `channel`, may see a run started in `runChannel`: that channel's members, or an admin. */
export function canSee(policy: AccessPolicy, user: string, channel: string, runChannel: string | null | undefined): boolean {
  if (!isAllowedUser(policy, user)) return false;
  return isAdmin(policy, user) || (Boolean(runChannel) && runChannel === channel);
}

/** `/kernelseek digest` posts every channel's runs of the last 24 hours into this one. */
export function canPostDigest(policy: AccessPolicy, user: string): Decision {
  if (isAdmin(policy, user)) return ALLOW;
  if (policy.admins.length === 0 && isAllowedUser(policy, user)) return ALLOW;
  if (!isAllowedUser(policy, user)) return { ok: false, reason: `${NOT_ALLOWED}, so you cannot post the digest.${adminsHint(policy)}` };
  return { ok: false, reason: `Only KernelSeek admins can post the digest on demand: it covers the runs of every channel.${adminsHint(policy)}` };
}

export function canStart(policy: AccessPolicy, user: string, channel: string): Decision {
  if (!isAllowedUser(policy, user)) {
    return { ok: false, reason: `You are not on KernelSeek's list of allowed users (KERNELSEEK_ALLOWED_USERS), so you cannot start runs.${adminsHint(policy)}` };
  }
  if (policy.allowedChannels.length > 0 && !policy.allowedChannels.includes(channel)) {
    const where = policy.allowedChannels.map((c) => `<#${c}>`).join(', ');
    return { ok: false, reason: `Runs cannot be started in this channel (KERNELSEEK_ALLOWED_CHANNELS). Start it in ${where}.` };
  }
  return ALLOW;
}

export function canAsk(policy: AccessPolicy, user: string): Decision {
  if (!isAllowedUser(policy, user)) {
    return { ok: false, reason: `You are not on KernelSeek's list of allowed users (KERNELSEEK_ALLOWED_USERS), so your reply was not passed to the agent.${adminsHint(policy)}` };
  }
  return ALLOW;
}

export function canControl(policy: AccessPolicy, user: string, run: { owner: string; id: string }): Decision {
  if (policy.admins.includes(user)) return ALLOW;
  if (user === run.owner && isAllowedUser(policy, user)) return ALLOW;
  return { ok: false, reason: `Only the run's owner (<@${run.owner}>) or a KernelSeek admin can stop, pause, resume or add budget to ${run.id}.${adminsHint(policy)}` };
}

export function canPromote(policy: AccessPolicy, user: string): Decision {
  if (policy.admins.includes(user)) return ALLOW;
  if (policy.admins.length === 0 && isAllowedUser(policy, user)) return ALLOW;
  return { ok: false, reason: `Only KernelSeek admins can add questions to the bank.${adminsHint(policy)}` };
}
