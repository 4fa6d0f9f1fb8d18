#!/usr/bin/env node
/**
 * `npm test` after the build: `vitest run` with the arguments given, then what the run cost
 * in a figure that does not depend on the machine: the CPU seconds of the whole run (vitest,
 * its workers and every process they waited for: the CLI, git, servers, registries) divided
 * by the CPU seconds of one `node -e 0` measured in the same run, before and after the suite
 * (a busy machine makes both dearer, so their ratio moves less than either).
 *
 * Two baselines are measured, and both ratios printed when they differ: `node -e 0` as this
 * run's environment starts it (on a machine that sets NODE_EXTRA_CA_CERTS, as sandboxes and
 * corporate networks do, Node 20 parses that CA bundle at every start: some 85 ms here), and a
 * bare one without that variable, as the suite's own processes start (vitest.config.ts drops it
 * from the workers, and the CLI children get a hermetic environment). The first is the plain
 * reading of "one `node -e 0` measured in the same run"; the second is the stricter figure,
 * which a machine without the variable gives for both.
 *
 * Both figures are the children's CPU time of this process (Linux /proc/self/stat, cutime and
 * cstime), which the kernel adds up as each process is reaped by its parent: vitest reaps its
 * workers, the workers reap what they start. A process reaped by init instead (a double-forked
 * daemon that outlived its parent) is not counted; the suite's leftover check (test/global-
 * leftovers.ts) makes sure none outlives the run. Without /proc the figure is not printed.
 *
 * The suite's temp dir (TMPDIR, where every test makes its homes, registries and repos) is a
 * directory of its own on a memory file system when the machine has a usable one (Linux's
 * /dev/shm: writable, programs may run from it, room to spare), removed after the run. The
 * tests make and delete some hundred thousand files and directories, and on a disk file
 * system each mkdir, unlink and rmdir goes through its journal: kernel time that is a large
 * part of the suite's CPU. What the tests check does not depend on it: a kill leaves the page
 * cache as it is on either, and the full-disk and read-only tests mount file systems of
 * their own. Elsewhere TMPDIR is left as it is.
 *
 * The exit status is vitest's; the reporter's closing lines (test/summary-reporter.ts) come
 * before this one.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Linux reports these times in USER_HZ, which is 100 on every architecture. */
const TICKS_PER_SECOND = 100;
/** `node -e 0` runs per measurement: one run is a few ticks, so one alone would round badly. */
const BASELINE_RUNS = 10;

/** CPU seconds of this process's reaped children (user + system), or undefined without /proc. */
function childrenCpu() {
  if (!existsSync('/proc/self/stat')) return undefined;
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/**
 * The CPU seconds of one `node -e 0` in `env`: the run's own environment, or the bare one the
 * suite's processes get (see above).
 */
function nodeStartCpu(env) {
  const before = childrenCpu();
  for (let i = 0; i < BASELINE_RUNS; i++) spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' });
  return (childrenCpu() - before) / BASELINE_RUNS;
}

const bareEnv = { ...process.env };
delete bareEnv.NODE_EXTRA_CA_CERTS;
const withCaBundle = bareEnv.NODE_EXTRA_CA_CERTS !== process.env.NODE_EXTRA_CA_CERTS;

/** Both baselines at once ({asRun, bare}); without the variable they are one measurement. */
function baselines() {
  const bare = nodeStartCpu(bareEnv);
  return { asRun: withCaBundle ? nodeStartCpu(process.env) : bare, bare };
}

/** Free space the memory file system must have for the suite's temp dir (its peak use is far below). */
const MEMORY_TMP_MIN_FREE = 4 * 1024 ** 3;

/** A fresh directory on /dev/shm for this run's TMPDIR, or undefined when it cannot serve (see above). */
function memoryTmpDir() {
  try {
    const mount = readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .findLast((f) => f[1] === '/dev/shm');
    if (mount?.[2] !== 'tmpfs' || mount[3].split(',').includes('noexec')) return undefined;
    accessSync('/dev/shm', constants.W_OK);
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < MEMORY_TMP_MIN_FREE) return undefined;
    return mkdtempSync('/dev/shm/yep-ext-test-');
  } catch {
    return undefined;
  }
}

const runTmp = process.env.YEP_EXT_TEST_TMPDIR === 'system' ? undefined : memoryTmpDir();
const measured = childrenCpu() !== undefined;
const startBefore = measured ? baselines() : undefined;
const suiteBefore = childrenCpu();
const vitestPkg = createRequire(import.meta.url).resolve('vitest/package.json');
const vitest = join(dirname(vitestPkg), JSON.parse(readFileSync(vitestPkg, 'utf8')).bin.vitest);
const child = spawn(process.execPath, [vitest, 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: runTmp ? { ...process.env, TMPDIR: runTmp } : process.env,
});
// Ctrl-C reaches vitest through the terminal's process group; this process waits for its report.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('close', (code, signal) => {
  if (measured) {
    const suite = childrenCpu() - suiteBefore;
    const after = baselines();
    const times = (start) => (start > 0 ? Math.round(suite / start) : 0);
    const ms = (start) => `${(start * 1000).toFixed(0)} ms`;
    const asRun = (startBefore.asRun + after.asRun) / 2;
    const bare = (startBefore.bare + after.bare) / 2;
    const figures = withCaBundle
      ? `${times(asRun)} times one \`node -e 0\` as this environment starts it (${ms(asRun)}, NODE_EXTRA_CA_CERTS set), ` +
        `${times(bare)} times a bare one (${ms(bare)}, without it, as the suite's processes start)`
      : `${times(bare)} times one \`node -e 0\` (${ms(bare)})`;
    process.stdout.write(`suite CPU: ${suite.toFixed(1)} s, ${figures}; CPU on ${process.version}, measured in this run\n`);
  }
  if (runTmp) {
    rmSync(runTmp, { recursive: true, force: true });
    process.stdout.write(`temp dir: ${runTmp} (memory file system), removed\n`);
  }
  process.exitCode = code ?? (signal ? 1 : 0);
});
