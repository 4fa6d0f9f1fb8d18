/**
 * The closing lines of a test run, after vitest's own summary: the test count, the
 * slowest files, then one plain line `N passed, N failed, N skipped`, the form CI
 * reads in any language (vitest's line has colour codes and another shape).
 *
 * The line must never say more than is true, so "failed" counts every failure the
 * run had, not only failed tests:
 * - a test that failed;
 * - a test that never ran because a hook above it (beforeAll) or its file broke:
 *   vitest marks it skipped, but nobody chose to skip it;
 * - every error of a suite or file outside any test: a failed beforeAll or afterAll,
 *   a file whose import or collection threw;
 * - every unhandled error or rejection of the run.
 * "skipped" counts only tests skipped on purpose (skip, skipIf, ctx.skip, filters);
 * todos are counted apart, on the breakdown line above, never as skipped.
 * test/unit/summary-reporter.test.ts checks this against a fixture suite holding
 * each kind of failure.
 */
import type { SerializedError } from 'vitest';
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

/** What one run counted; exported for the reporter's own test. */
export interface RunCounts {
  passed: number;
  failed: number;
  skipped: number;
  todo: number;
  /** Parts of `failed`. */
  failedTests: number;
  blockedTests: number;
  hookErrors: number;
  brokenFiles: number;
  unhandled: number;
}

const SLOWEST = 10;

/** A file's wall time as the suite pays it: import and collection, then its tests and hooks. */
const fileMs = (m: TestModule): number => {
  const d = m.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
};

export function countRun(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>, started: ReadonlySet<string>): RunCounts {
  const c: RunCounts = {
    passed: 0,
    failed: 0,
    skipped: 0,
    todo: 0,
    failedTests: 0,
    blockedTests: 0,
    hookErrors: 0,
    brokenFiles: 0,
    unhandled: unhandled.length,
  };
  for (const mod of modules) {
    const suites: Array<TestModule | TestSuite> = [mod, ...mod.children.allSuites()];
    const broken = new Set(suites.filter((s) => s.errors().length > 0));
    const tests = [...mod.children.allTests()];
    for (const test of tests) {
      const result = test.result();
      if (result.state === 'passed') c.passed++;
      else if (result.state === 'failed') c.failedTests++;
      else if (test.options.mode === 'todo') c.todo++;
      else if (!started.has(test.id) && underBroken(test, broken)) c.blockedTests++;
      else c.skipped++;
    }
    for (const s of broken) {
      // A file with errors and no test seen failed to load: one broken file, however many errors.
      if (s === mod && tests.length === 0) c.brokenFiles++;
      else c.hookErrors += s.errors().length;
    }
    // A file vitest failed without an error we could see (it should not happen): still a failure.
    if (mod.state() === 'failed' && tests.length === 0 && !broken.has(mod)) c.brokenFiles++;
  }
  c.failed = c.failedTests + c.blockedTests + c.hookErrors + c.brokenFiles + c.unhandled;
  return c;
}

function underBroken(test: TestCase, broken: ReadonlySet<TestModule | TestSuite>): boolean {
  for (let p: TestCase['parent'] | undefined = test.parent; p; p = p.type === 'suite' ? p.parent : undefined) if (broken.has(p)) return true;
  return false;
}

/** At most this many `FAIL:` lines: enough to name a flake, short enough for a log's tail. */
const FAIL_LINES = 20;

/**
 * One `FAIL: <file> > <test>: <first line of the error>` line per failed test, failed
 * hook or broken file, and per unhandled error: CI keeps only the tail of a long log, and
 * .ci/run repeats these lines under its closing summary so a failure is named there.
 */
export function failureLines(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): string[] {
  const lines: string[] = [];
  // The message on one line; a long one keeps its start and its end (an assertion with a
  // custom message starts with that message and ends with "expected ... to ...").
  const firstLine = (e: SerializedError | undefined): string => {
    const one = (e?.message ?? 'no error message').replace(/\s+/g, ' ').trim();
    return one.length <= 200 ? one : `${one.slice(0, 80)} … ${one.slice(-115)}`;
  };
  for (const mod of modules) {
    for (const s of [mod, ...mod.children.allSuites()]) {
      for (const e of s.errors()) lines.push(`FAIL: ${mod.relativeModuleId}${s.type === 'suite' ? ` > ${s.fullName}` : ''} (hook or load): ${firstLine(e)}`);
    }
    for (const test of mod.children.allTests()) {
      const r = test.result();
      if (r.state === 'failed') lines.push(`FAIL: ${mod.relativeModuleId} > ${test.fullName}: ${firstLine(r.errors?.[0])}`);
    }
  }
  for (const e of unhandled) lines.push(`FAIL: unhandled error: ${firstLine(e)}`);
  if (lines.length <= FAIL_LINES) return lines;
  return [...lines.slice(0, FAIL_LINES), `FAIL: ... and ${lines.length - FAIL_LINES} more`];
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export default class SummaryReporter implements Reporter {
  /** Tests that reached the runner (ran, or were skipped by their own mode); the rest under a broken hook never ran. */
  private readonly started = new Set<string>();

  onTestCaseReady(test: TestCase): void {
    this.started.add(test.id);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const c = countRun(testModules, unhandledErrors, this.started);
    const out: string[] = [''];
    const total = c.passed + c.failedTests + c.blockedTests + c.skipped + c.todo;
    out.push(`${plural(total, 'test')} in ${plural(testModules.length, 'file')}`);
    const slow = [...testModules].sort((a, b) => fileMs(b) - fileMs(a)).slice(0, SLOWEST);
    if (slow.length > 0) {
      out.push(`slowest ${plural(slow.length, 'file')}:`);
      for (const m of slow) out.push(`  ${(fileMs(m) / 1000).toFixed(1).padStart(6)} s  ${m.relativeModuleId}`);
    }
    const parts = [
      [c.failedTests, 'failed test'],
      [c.blockedTests, 'test not run under a failed hook or file', 'tests not run under a failed hook or file'],
      [c.hookErrors, 'hook or suite error'],
      [c.brokenFiles, 'file that failed to load', 'files that failed to load'],
      [c.unhandled, 'unhandled error'],
    ] as const;
    const why = parts.filter(([n]) => n > 0).map(([n, one, many]) => plural(n, one, many));
    out.push(...failureLines(testModules, unhandledErrors));
    out.push(`failed: ${why.length > 0 ? why.join(', ') : 'none'}; todo: ${c.todo}`);
    out.push(`${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
