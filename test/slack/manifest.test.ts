import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO_ROOT } from '../../src/config/index.js';
import { EVENTS_PATH } from '../../src/slack/index.js';
import { SLASH_COMMAND } from '../../src/slack/listeners/commands/kernelseek.js';

interface Manifest {
  features: { slash_commands: { command: string; url: string }[]; app_home?: { home_tab_enabled?: boolean }; unfurl_domains?: string[] };
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { request_url: string; bot_events: string[] }; interactivity: { is_enabled: boolean; request_url: string }; socket_mode_enabled: boolean };
}

async function sources(dir: string): Promise<string> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
  return (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
}

// The manifest is how a workspace admin creates the app; an event or scope missing from it fails
// silently in production (Slack never sends the event, or refuses the call with missing_scope).
describe('slack/manifest.yaml', () => {
  it('subscribes to what the listeners handle, with the scopes the calls need, at the receiver’s path', async () => {
    const manifest = parse(await readFile(path.join(REPO_ROOT, 'slack', 'manifest.yaml'), 'utf8')) as Manifest;
    const code = await sources(path.join(REPO_ROOT, 'src', 'slack'));

    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual([SLASH_COMMAND]);
    for (const url of [manifest.features.slash_commands[0]!.url, manifest.settings.event_subscriptions.request_url, manifest.settings.interactivity.request_url]) {
      expect(new URL(url).pathname).toBe(EVENTS_PATH);
    }
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(typeof manifest.settings.socket_mode_enabled).toBe('boolean');

    // Events the code listens to ↔ events subscribed.
    const handled = new Set([...code.matchAll(/app\.event\('([a-z_]+)'/g)].map((m) => m[1]!));
    if (/app\.message\(/.test(code)) handled.add('message');
    const subscribed = new Set(manifest.settings.event_subscriptions.bot_events.map((e) => e.split('.')[0]!));
    expect([...handled].sort()).toEqual([...subscribed].sort());
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(expect.arrayContaining(['message.channels', 'message.groups']));

    // Scopes for every Web API method the code calls.
    const needs: Record<string, string> = {
      'chat.postMessage': 'chat:write',
      'chat.update': 'chat:write',
      'chat.postEphemeral': 'chat:write',
      filesUploadV2: 'files:write',
      'reactions.add': 'reactions:write',
      'assistant.threads.setStatus': 'chat:write',
      'users.info': 'users:read',
      'chat.unfurl': 'links:write',
      'entity.presentDetails': 'links:write',
      'files.upload': 'files:write',
    };
    // Methods that need no scope of their own.
    const unscoped = ['views.open', 'views.publish', 'auth.test', 'chat.getPermalink'];
    const scopes = manifest.oauth_config.scopes.bot;
    for (const [method, scope] of Object.entries(needs)) {
      if (code.includes(method)) expect(scopes, `${method} needs ${scope}`).toContain(scope);
    }
    expect(scopes).toEqual(expect.arrayContaining(['commands', 'reactions:read', 'channels:history', 'groups:history']));
    // Every call the code makes is one the scope table knows: a new method fails here until its scope is named.
    const called = new Set([...code.matchAll(/client\.([a-z]+(?:\.[a-zA-Z]+)+)\(/g)].map((m) => m[1]!).concat([...code.matchAll(/kind: '([a-z]+\.[a-zA-Z.]+)'/g)].map((m) => m[1]!)));
    for (const method of called) expect([...Object.keys(needs), ...unscoped], `${method} has a scope listed here`).toContain(method);
    // link_shared needs the app's domain, App Home needs its tab.
    if (handled.has('link_shared')) {
      expect(scopes).toEqual(expect.arrayContaining(['links:read', 'links:write']));
      expect(manifest.features.unfurl_domains?.length).toBeGreaterThan(0);
    }
    if (handled.has('app_home_opened')) expect(manifest.features.app_home?.home_tab_enabled).toBe(true);
  });
});
