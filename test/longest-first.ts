/**
 * vitest sequencer: the longest test files start first, so the run does not end
 * with one worker alone on a long file while the other has nothing left (the
 * longest-processing-time-first rule for filling a few workers).
 *
 * vitest's own sequencer orders by the durations of the last run, which it keeps
 * in node_modules/.vite; a clean clone (CI) has none and gets the files in
 * directory order, which started crash-points (about 200 s) near the end. So:
 * when the last run's durations cover every file, they decide (BaseSequencer);
 * otherwise the files named in SLOW start first, in that order, then the rest.
 * SLOW comes from the slowest files that `npm test` prints at its end
 * (test/summary-reporter.ts); a file missing from it only starts later.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Slowest first, from a clean-clone run on 2 cores (docs/performance.md, "Test suite" and
 * "Round five: suite5": the quiet Node 20 run of e5f2440; fast-net and intact-rule were
 * missing and started after every file named here).
 */
export const SLOW = [
  'test/faults/crash-points.test.ts',
  'test/cli/fast-net.test.ts',
  'test/cli/settings-property-cli.test.ts',
  'test/cli/mistakes.test.ts',
  'test/cli/intact-rule.test.ts',
  'test/cli/engines.test.ts',
  'test/cli/info-outdated.test.ts',
  'test/cli/new.test.ts',
  'test/cli/fast-path.test.ts',
  'test/faults/kill-install.test.ts',
  'test/faults/kill-update-remove.test.ts',
  'test/cli/foundation.test.ts',
  'test/cli/special-files.test.ts',
  'test/cli/enable-disable.test.ts',
  'test/integration/settings-property.test.ts',
  'test/cli/install-git.test.ts',
  'test/cli/verify-repair.test.ts',
  'test/faults/kill-enable.test.ts',
  'test/cli/policy.test.ts',
  'test/faults/kill-frozen.test.ts',
  'test/integration/git-hostile.test.ts',
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const key = (f: TestSpecification): string => relative(f.project.config.root, f.moduleId).split('\\').join('/');
    const cache = this.ctx.cache;
    if (files.every((f) => cache.getFileTestResults(`${f.project.name}:${key(f)}`) !== undefined)) return super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = SLOW.indexOf(key(f));
      return i === -1 ? SLOW.length : i;
    };
    // Array.prototype.sort is stable: the files outside SLOW keep vitest's order.
    return [...files].sort((a, b) => rank(a) - rank(b));
  }
}
