import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share one Redis and one Postgres; each test isolates itself by name/schema.
    pool: 'forks',
    // Most files wait on subprocesses (the harness, git, bwrap) and services, not the CPU: on a
    // two-core machine the default (cores - 1 = one fork) leaves it idle. KERNELSEEK_TEST_FORKS overrides.
    poolOptions: { forks: { maxForks: Number(process.env.KERNELSEEK_TEST_FORKS ?? 3), minForks: 1 } },
  },
});
