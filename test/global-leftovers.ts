/**
 * vitest globalSetup: after the whole suite, nothing the suite started may still
 * be alive. The main vitest process tracks its process
 * tree through /proc with the tracker doctor uses (src/core/yep/process-tree.ts):
 * the parent chain, snapshotted every 500 ms while the suite runs, plus a tag in
 * the environment every worker (and every process started with the inherited
 * environment) carries, which survives setsid and double forks. At teardown,
 * anything still alive fails the run (exit code 1), is listed with pid and
 * command, and is killed. test/integration/suite-leftovers.test.ts proves the
 * check fails on a leftover.
 */
import { PROC_TRACKING, ProcessTracker, type LiveDescendant } from '../src/core/yep/process-tree.js';

export const SUITE_TAG_NAME = 'YEP_EXT_SUITE_RUN';
const GRACE_MS = 3000;

export default function setup(): (() => Promise<void>) | undefined {
  if (!PROC_TRACKING) {
    const message = 'yep-ext suite: no /proc here, so leftover processes are not checked.';
    if (process.env.YEP_EXT_REQUIRE_ALL === '1') throw new Error(`${message} (YEP_EXT_REQUIRE_ALL=1)`);
    console.warn(message);
    return undefined;
  }
  const value = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  process.env[SUITE_TAG_NAME] = value;
  // Not by stdio: vitest's stdout may be shared with processes that are not the suite's.
  const tracker = new ProcessTracker(process.pid, { tag: `${SUITE_TAG_NAME}=${value}`, stdio: false });
  tracker.snapshot();
  const timer = setInterval(() => tracker.snapshot(), 500);
  timer.unref();
  return async () => {
    clearInterval(timer);
    // A process signalled by the last afterAll may need a moment to go.
    const deadline = Date.now() + GRACE_MS;
    let left: LiveDescendant[];
    for (;;) {
      tracker.snapshot({ full: true });
      left = tracker.alive();
      if (left.length === 0 || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (left.length === 0) return;
    process.exitCode = 1;
    const lines = left.map((p) => `  pid ${p.pid}: ${p.command.slice(0, 200)} (found by ${p.via})`);
    console.error(
      `\nyep-ext suite: FAILED: ${left.length} process(es) started by the suite are still alive after it ended:\n${lines.join('\n')}\nThey are killed now; find the test that leaves them behind and make it clean up.\n`,
    );
    tracker.killAlive();
  };
}
