/**
 * vitest sequencer: the longest test files start first, so the run does not end
 * with one worker alone on a long file while the other has nothing left (the
 * longest-processing-time-first rule for filling a few workers).
 *
 * vitest's own sequencer orders by the durations of the last run, which it keeps
 * in node_modules/.vite; a clean clone (CI) has none and gets the files in
 * directory order, which started crash-points (the longest file) near the end. So:
 * when the last run's durations cover every file, they decide (BaseSequencer);
 * otherwise the files named in SLOW start first, in that order, then the rest.
 * SLOW comes from the slowest files that `npm test` prints at its end
 * (test/summary-reporter.ts); a file missing from it only starts later.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Slowest first: the slowest files of the last clean-clone CI runs on 2 cores (Node 20
 * and 24; `npm test` prints them at its end), then the rest of the long files. A file
 * missing here starts after every file named, i.e. near the end of a clean-clone run.
 */
export const SLOW = [
  'test/faults/crash-points.test.ts',
  'test/cli/doctor-early.test.ts',
  'test/cli/settings-property-cli.test.ts',
  'test/cli/list-states.test.ts',
  'test/cli/new.test.ts',
  'test/cli/feedback-pty.test.ts',
  'test/cli/mistakes.test.ts',
  'test/cli/engines.test.ts',
  'test/cli/intact-rule.test.ts',
  'test/cli/policy.test.ts',
  'test/cli/frozen.test.ts',
  'test/integration/settings-property.test.ts',
  'test/cli/info-outdated.test.ts',
  'test/cli/foundation.test.ts',
  'test/cli/crates-install.test.ts',
  'test/cli/verify-repair.test.ts',
  'test/integration/git-hostile.test.ts',
  'test/cli/mirror.test.ts',
  'test/integration/unpack-pool.test.ts',
  'test/cli/json-shapes.test.ts',
  'test/cli/update-crates.test.ts',
  'test/integration/unpack-worker.test.ts',
  'test/cli/completion.test.ts',
  'test/cli/install-git.test.ts',
  'test/faults/kill-install.test.ts',
  'test/faults/kill-update-remove.test.ts',
  'test/cli/review-regressions.test.ts',
  'test/integration/search.test.ts',
  'test/cli/update-git.test.ts',
  'test/cli/proxy-ca.test.ts',
  'test/integration/suite-leftovers.test.ts',
  'test/cli/host-entries.test.ts',
  'test/cli/store-layout.test.ts',
  'test/integration/doctor.test.ts',
  'test/cli/special-files.test.ts',
  'test/cli/enable-disable.test.ts',
  'test/faults/kill-enable.test.ts',
  'test/faults/kill-frozen.test.ts',
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
