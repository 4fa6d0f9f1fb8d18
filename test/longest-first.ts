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
 * Slowest first: every file that took 4 s or more in a full run on 2 cores (the JSON
 * reporter's file times; `npm test` prints the ten slowest at its end). A file missing
 * here starts after every file named, i.e. near the end of a clean-clone run.
 */
export const SLOW = [
  'test/integration/doctor.test.ts',
  'test/cli/new.test.ts',
  'test/integration/settings-property.test.ts',
  'test/cli/crates-install.test.ts',
  'test/integration/git-hostile.test.ts',
  'test/cli/mirror.test.ts',
  'test/cli/docs-examples.test.ts',
  'test/cli/package.test.ts',
  'test/integration/suite-leftovers.test.ts',
  'test/faults/crash-points.test.ts',
  'test/cli/doctor-cli.test.ts',
  'test/integration/doctor-mcp.test.ts',
  'test/cli/info-outdated.test.ts',
  'test/integration/unpack-pool.test.ts',
  'test/cli/install-git.test.ts',
  'test/integration/git-source.test.ts',
  'test/cli/feedback-pty.test.ts',
  'test/cli/engines.test.ts',
  'test/cli/proxy-ca.test.ts',
  'test/cli/timeout.test.ts',
  'test/faults/huge-manifest.test.ts',
  'test/integration/http-undici.test.ts',
  'test/cli/review-regressions.test.ts',
  'test/unit/process-tree.test.ts',
  'test/integration/scaffold-servers.test.ts',
  'test/integration/unpack-worker.test.ts',
  'test/cli/intact-rule.test.ts',
  'test/cli/policy-places.test.ts',
  'test/integration/search.test.ts',
  'test/integration/crates-fetch.test.ts',
  'test/cli/quiet.test.ts',
  'test/cli/json-shapes.test.ts',
  'test/cli/update-git.test.ts',
  'test/cli/doctor-early.test.ts',
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
