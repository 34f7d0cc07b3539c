/** A process that does nothing until it is killed, and starts one grandchild that does the same. */
import { spawn } from 'node:child_process';

const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
process.stdout.write(`idle ${process.pid} grandchild ${grandchild.pid}\n`);
setInterval(() => {}, 1000);
