/**
 * Loaded (node --import) into every process a test spawns: when the test process that started it
 * dies (a crash, a timeout, vitest killed), this process and its group end too, so nothing a test
 * started outlives it. KS_PARENT_PID names the parent to watch.
 */
const parent = Number(process.env.KS_PARENT_PID);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

if (Number.isInteger(parent) && parent > 0) {
  const timer = setInterval(() => {
    if (alive(parent) && process.ppid === parent) return;
    try {
      process.kill(-process.pid, 'SIGKILL'); // the group this process leads (spawned detached)
    } catch {
      process.kill(process.pid, 'SIGKILL');
    }
  }, 500);
  timer.unref();
}
