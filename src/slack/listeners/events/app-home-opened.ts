import type { App } from '@slack/bolt';
import { describeRun } from '../../agent-port.js';
import { canAsk } from '../../auth.js';
import type { SlackDeps } from '../../deps.js';
import { renderAppHome, type HomeRun } from '../../views/app-home.js';
import { runLink } from '../../views/links.js';

/**
 * The App Home tab: a person's runs (newest first) and the team's best run per task, each linked to
 * its thread. Published when the person opens the tab, so it is as fresh as their last look.
 */
export function registerAppHomeOpened(app: App, deps: SlackDeps): void {
  app.event('app_home_opened', async ({ event }) => {
    if (event.tab !== 'home') return;
    const user = event.user;
    if (!canAsk(deps.slack, user).ok) {
      await deps.poster.publishHome({ user, view: { type: 'home', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'You are not on KernelSeek’s list of allowed users (KERNELSEEK_ALLOWED_USERS).' } }] } });
      return;
    }
    const [mine, bests] = await Promise.all([deps.store.runs.listByOwner(user, 15), deps.store.runs.bestPerTask(30)]);
    const linked = (rows: typeof mine) => Promise.all(rows.map(async (row): Promise<HomeRun> => {
      const run = describeRun(row);
      return { run, link: await runLink(deps.directory, run) };
    }));
    const view = renderAppHome({ user, mine: await linked(mine), bests: await linked(bests) });
    await deps.poster.publishHome({ user, view });
  });
}
