import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/longest-first.js';

// Most of a test file's time is spent waiting for the child processes it spawns (the built
// CLI, git, servers), which run outside the worker. vitest's default of one worker fewer than
// the cores (one worker on the 2-core CI machine) left a core idle for most of the run: one
// worker more than the cores keeps both busy. YEP_EXT_TEST_WORKERS overrides it (e.g. 1 to
// run the files one at a time). docs/performance.md, "Test suite", has the measurements.
const workers = Number(process.env.YEP_EXT_TEST_WORKERS) || availableParallelism() + 1;

// vitest starts every worker with this process's environment. NODE_EXTRA_CA_CERTS (set on
// machines with a corporate or sandbox CA) makes Node 20 read and parse that bundle at start,
// ~50 ms of CPU in every process that inherits it (Node 24 reads it lazily); the tests never
// reach the internet, and the one that needs a CA (test/cli/proxy-ca.test.ts) passes its own.
// The CLI children already get a hermetic env (test/helpers/home.ts); this covers the workers
// and what they start with process.env. docs/performance.md, "Round five: suite5".
delete process.env.NODE_EXTRA_CA_CERTS;

/** What every file gets, in either project below. */
const common = {
  // CLI tests spawn real processes (servers, git, registries): give them room on a 2-core box.
  // A timeout here only catches a hang (no test measures speed with it). At 60 s, a loaded
  // clean-clone CI (ci29: three workers on 2 cores beside other jobs) ran a dozen sequential
  // multi-spawn tests at 40-60 s and failed one that took 60.2 s, so: 120 s.
  testTimeout: 120_000,
  hookTimeout: 120_000,
  pool: 'forks',
  // Never let a developer's real home leak in: helpers set YOLOP_CONFIG_DIR per test.
  env: { NO_COLOR: '1', YEP_EXT_NO_UPDATE_CHECK: '1' },
} as const;

export default defineConfig({
  test: {
    // Two projects, one suite: unit tests (pure functions, temp dirs, no servers left behind)
    // share their workers' module cache (isolate: false halves their CPU: 57 -> 29 s); every
    // other file keeps a fresh process of its own, as before.
    projects: [
      { test: { ...common, name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      { test: { ...common, name: 'cli', include: ['test/**/*.test.ts'], exclude: ['test/unit/**', '**/node_modules/**'] } },
    ],
    maxWorkers: workers,
    // The longest files first, so the run does not end on one long file (test/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/summary-reporter.ts'],
    // After the whole suite, nothing it started may be alive: a leftover fails the run (issue 19).
    globalSetup: ['./test/global-leftovers.ts'],
  },
});
