import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { configuredSecrets, redactString, redactValue, REDACTED } from '../../src/agent/trace/redact.js';

describe('trace redaction', () => {
  const config = loadConfig({
    ANTHROPIC_API_KEY: 'sk-ant-api03-abcdefghijklmnop',
    SLACK_BOT_TOKEN: 'xoxb-1111-2222-abcdefgh',
    SLACK_SIGNING_SECRET: 'signing-secret-value',
    DATABASE_URL: 'postgres://ks:dbpassw0rd@db:5432/ks',
    KERNELSEEK_SECRETS: 'my-custom-secret, x',
  });
  const secrets = configuredSecrets(config);

  it('collects the configured credentials (short values ignored)', () => {
    expect(secrets).toEqual(expect.arrayContaining(['sk-ant-api03-abcdefghijklmnop', 'xoxb-1111-2222-abcdefgh', 'signing-secret-value', 'dbpassw0rd', 'my-custom-secret']));
    expect(secrets).not.toContain('x');
  });

  it('hides configured secrets and secret-shaped strings wherever they appear', () => {
    const text = [
      'key sk-ant-api03-abcdefghijklmnop in output',
      'signing-secret-value and my-custom-secret',
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload',
      'curl -H "x-api-key: sk-ant-other-key-123456789"',
      'export OPENAI_API_KEY=sk-proj-zzzzzzzzzzzz',
      'postgres://user:hunter22@host/db',
      'token xoxp-9999-8888-zzzz and ghp_abcdefghijklmnopqrstuvwxyz0123',
    ].join('\n');
    const out = redactString(text, secrets);
    for (const leak of ['abcdefghijklmnop', 'signing-secret-value', 'my-custom-secret', 'eyJhbGci', 'sk-ant-other', 'sk-proj-zzz', 'hunter22', 'xoxp-9999', 'ghp_abc']) {
      expect(out).not.toContain(leak);
    }
    expect(out).toContain('postgres://user:[REDACTED]@host/db');
    expect(out).toContain('x-api-key: [REDACTED]');
  });

  it('hides the values of secret-named fields in nested objects and keeps the rest', () => {
    const out = redactValue({ headers: { Authorization: 'Basic abc', 'x-api-key': 'k', accept: 'json' }, n: 3, list: ['fine'] }, secrets) as Record<string, Record<string, string>>;
    expect(out.headers).toEqual({ Authorization: REDACTED, 'x-api-key': REDACTED, accept: 'json' });
    expect(out).toMatchObject({ n: 3, list: ['fine'] });
  });
});
