import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI tests spawn real processes (servers, git, registries): give them room on a 2-core box.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
    // After the whole suite, nothing it started may be alive: a leftover fails the run (issue 19).
    globalSetup: ['./test/global-leftovers.ts'],
    // Never let a developer's real home leak in: helpers set YOLOP_CONFIG_DIR per test.
    env: { NO_COLOR: '1', YEP_EXT_NO_UPDATE_CHECK: '1' },
  },
});
