import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/longest-first.js';

// Much of a test file's time is spent waiting: for git, servers and registries, and for the
// built CLI where a test spawns it, which run outside the worker. vitest's default of one worker fewer than
// the cores (one worker on the 2-core CI machine) left a core idle for most of the run: one
// worker more than the cores keeps both busy. YEP_EXT_TEST_WORKERS overrides it (e.g. 1 to
// run the files one at a time).
const workers = Number(process.env.YEP_EXT_TEST_WORKERS) || availableParallelism() + 1;

// vitest starts every worker with this process's environment. NODE_EXTRA_CA_CERTS (set on
// machines with a corporate or sandbox CA) makes Node 20 read and parse that bundle at start,
// CPU in every process that inherits it (Node 24 reads it lazily); the tests never
// reach the internet, and the one that needs a CA (test/cli/proxy-ca.test.ts) passes its own.
// The CLI children already get a hermetic env (test/helpers/home.ts); this covers the workers
// and what they start with process.env.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    // CLI tests spawn real processes (servers, git, registries): give them room on a 2-core box.
    // A timeout here only catches a hang (no test measures speed with it): on a loaded
    // clean-clone CI (three workers on 2 cores beside other jobs) a test that spawns the CLI
    // many times in a row can take a minute, so twice that.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Never let a developer's real home leak in: helpers set YOLOP_CONFIG_DIR per test.
    env: { NO_COLOR: '1', YEP_EXT_NO_UPDATE_CHECK: '1' },
    include: ['test/**/*.test.ts'],
    // Every file shares its worker's process and module cache with the files that ran in it
    // before (isolate: false): a fresh process per file costs CPU for each (Node's start,
    // vitest's worker, the helpers and src imported again), even in files that spawn the CLI
    // dozens of times. vitest resets no module and no `vi.mock` between such files, so none
    // mocks a module, and a file that changes process-wide state (umask, process.env, a
    // patched node:fs) puts it back itself after each test; what a file measures of the
    // process (a counter, the RSS) it reads as a delta.
    isolate: false,
    maxWorkers: workers,
    // The longest files first, so the run does not end on one long file (test/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/summary-reporter.ts'],
    // After the whole suite, nothing it started may be alive: a leftover fails the run. What the
    // files of a run share lives in a directory of the run's own (test/global-scratch.ts).
    globalSetup: ['./test/global-leftovers.ts', './test/global-scratch.ts'],
  },
});
