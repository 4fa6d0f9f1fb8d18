/**
 * The closing line CI judges counts every failure: a child `vitest run` over a
 * fixture suite (test/fixtures/reporter-suite, outside the normal run) holding a
 * failed test, a failed beforeEach, a failed beforeAll over two tests, a failed
 * afterAll, a file whose import fails and an unhandled rejection, beside tests
 * skipped on purpose and a todo.
 */
import { describe, expect, it } from 'vitest';
import { runFixtureSuite as runSuite } from '../helpers/vitest-child.js';

const runFixtureSuite = (...filter: string[]) => runSuite('test/fixtures/reporter-suite/vitest.config.ts', filter);

describe('the summary reporter', () => {
  it('counts failed tests, tests under a failed hook, hook errors, broken files and unhandled errors as failed', async () => {
    const { code, lines } = await runFixtureSuite();
    expect(code).toBe(1);
    expect(lines.at(-1)).toBe('5 passed, 8 failed, 3 skipped');
    expect(lines.at(-2)).toBe(
      'failed: 2 failed tests, 2 tests not run under a failed hook or file, 2 hook or suite errors, 1 file that failed to load, 1 unhandled error; todo: 1',
    );
    const count = lines.indexOf('13 tests in 7 files');
    expect(count, lines.join('\n')).toBeGreaterThan(-1);
    expect(lines[count + 1]).toBe('slowest 7 files:');
    const listed = lines.slice(count + 2, count + 9).map((l) => l.trim().split(/\s+/));
    expect(listed.map((l) => l[2]).sort()).toEqual(
      [
        'failing-after-all.case.ts',
        'failing-before-all.case.ts',
        'failing-before-each.case.ts',
        'failing-import.case.ts',
        'failing-test.case.ts',
        'passing.case.ts',
        'unhandled-rejection.case.ts',
      ].sort(),
    );
    const seconds = listed.map((l) => Number(l[0]));
    expect(seconds).toEqual([...seconds].sort((a, b) => b - a));
    // Each failure is named on a FAIL: line (CI repeats them under its closing summary).
    const fails = lines.filter((l) => l.startsWith('FAIL: '));
    const named = (file: string, rest: string) =>
      expect(
        fails.some((l) => l.startsWith(`FAIL: ${file}`) && l.includes(rest)),
        fails.join('\n'),
      ).toBe(true);
    named('failing-test.case.ts > fails', 'expected 1 to be 2');
    named('failing-before-each.case.ts > fails through its beforeEach', 'beforeEach broke');
    named('failing-before-all.case.ts > under a broken beforeAll (hook or load)', 'beforeAll broke');
    named('failing-after-all.case.ts (hook or load)', 'afterAll broke');
    named('failing-import.case.ts (hook or load)', '');
    expect(
      fails.some((l) => l.startsWith('FAIL: unhandled error: ')),
      fails.join('\n'),
    ).toBe(true);
    expect(fails).toHaveLength(6);
  });

  it('says 0 failed when nothing failed, counting purposeful skips as skipped and the todo apart', async () => {
    const { code, lines } = await runFixtureSuite('passing');
    expect(code).toBe(0);
    expect(lines.at(-1)).toBe('2 passed, 0 failed, 3 skipped');
    expect(lines.at(-2)).toBe('failed: none; todo: 1');
    expect(lines).toContain('6 tests in 1 file');
    expect(lines.filter((l) => l.startsWith('FAIL'))).toEqual([]);
  });
});
