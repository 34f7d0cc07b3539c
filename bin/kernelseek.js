#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`; `npm ci` builds it through `prepare`).
// Compiled JavaScript starts in a fraction of the time tsx needs to transpile the sources.
// Without a build (a copy carried without dist/, a clone before `npm ci`) it says so and runs the
// sources through tsx, slower but the same code, so no script that calls this file breaks.
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  process.stderr.write('kernelseek: no build in dist/ (run `npm run build`); running the TypeScript sources through tsx, which starts slower.\n');
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
