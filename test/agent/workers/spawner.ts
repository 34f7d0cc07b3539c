/** Starts an idle worker the way tests do (spawnNode), prints its pid, and waits to be killed. */
import path from 'node:path';
import { REPO_ROOT } from '../../../src/config/index.js';
import { spawnNode } from '../../support/processes.js';

const child = spawnNode(path.join(REPO_ROOT, 'test', 'agent', 'workers', 'idle.ts'), [], { env: process.env });
const m = await child.waitFor(/idle (\d+) grandchild (\d+)/, 60_000);
process.stdout.write(`child ${m[1]} grandchild ${m[2]}\n`);
setInterval(() => {}, 1000);
