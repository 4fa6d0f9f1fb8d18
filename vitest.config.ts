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

/** What every file gets, in either project below. */
const common = {
  // CLI tests spawn real processes (servers, git, registries): give them room on a 2-core box.
  // A timeout here only catches a hang (no test measures speed with it): on a loaded
  // clean-clone CI (three workers on 2 cores beside other jobs) a test that spawns the CLI
  // many times in a row can take a minute, so twice that.
  testTimeout: 120_000,
  hookTimeout: 120_000,
  pool: 'forks',
  // Never let a developer's real home leak in: helpers set YOLOP_CONFIG_DIR per test.
  env: { NO_COLOR: '1', YEP_EXT_NO_UPDATE_CHECK: '1' },
} as const;

/**
 * Files that need a fresh process each (vitest's `isolate`), because they change what every
 * file after them in a worker would share, or measure the worker's process itself: a module
 * mock (unpack-pool), the process's umask for a test (unpack, scaffold-write, secrets-store),
 * process.env for a test (secrets-store, injected-clock), the unpack worker thread's
 * process-wide counters (unpack-worker), the worker's RSS (doctor).
 */
const OWN_PROCESS = [
  'test/integration/unpack-pool.test.ts',
  'test/integration/unpack.test.ts',
  'test/integration/unpack-worker.test.ts',
  'test/integration/scaffold-write.test.ts',
  'test/integration/secrets-store.test.ts',
  'test/integration/injected-clock.test.ts',
  'test/integration/doctor.test.ts',
];

export default defineConfig({
  test: {
    // Two projects, one suite. Every other file shares its worker's process and module cache
    // with the files that ran in it before (isolate: false): a fresh process per file costs
    // CPU for each (Node's start, vitest's worker, the helpers and src imported again), even
    // in files that spawn the CLI dozens of times. The files in OWN_PROCESS keep a process
    // of their own.
    // One shared project for unit and CLI files alike, so a finished worker takes the next
    // file whatever its directory (vitest reuses a shared worker only within one project).
    projects: [
      { test: { ...common, name: 'shared', include: ['test/**/*.test.ts'], exclude: [...OWN_PROCESS, '**/node_modules/**'], isolate: false } },
      { test: { ...common, name: 'own-process', include: OWN_PROCESS } },
    ],
    maxWorkers: workers,
    // The longest files first, so the run does not end on one long file (test/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/summary-reporter.ts'],
    // After the whole suite, nothing it started may be alive: a leftover fails the run. What the
    // files of a run share lives in a directory of the run's own (test/global-scratch.ts).
    globalSetup: ['./test/global-leftovers.ts', './test/global-scratch.ts'],
  },
});
