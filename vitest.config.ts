import { defineConfig } from 'vitest/config';

const forks = Number(process.env.KERNELSEEK_TEST_FORKS ?? 3);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share one Redis and one Postgres; each test isolates itself by name/schema.
    pool: 'forks',
    // Most files wait on subprocesses (the harness, git, bwrap) and services, not the CPU: on a
    // two-core machine the default (cores - 1 = one fork) leaves it idle. KERNELSEEK_TEST_FORKS overrides.
    // A fork runs file after file with the modules it has loaded (no isolation): a fresh fork per file
    // spent half the suite's CPU loading and transforming the same modules again (1146 CPU-s against
    // 574 for the whole suite, alone on this two-core machine), and CI's tests are CPU-bound (both
    // cores busy throughout): in a fresh clone, vitest took 780 s without isolation against 1031 s
    // with it, minutes apart on the same machine. Files share no module state on purpose: each opens
    // its own database, queue prefix, servers and temporary folders.
    isolate: false,
    // As many forks kept as are used: with fewer kept, the pool ended an idle one at the close and
    // vitest reported "Terminating worker thread" as an unhandled rejection (a red run, every test passed).
    poolOptions: { forks: { maxForks: forks, minForks: forks } },
  },
});
