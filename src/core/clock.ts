/**
 * Time as a seam (ctx.clock): every deadline, retry backoff, lock poll and
 * "how long did that take" in core goes through a Clock, so a test can watch or
 * drive time instead of waiting for it. systemClock is the real one; it calls
 * the global timers at call time, so vitest's fake timers drive it too.
 *
 * On the clock: HTTP backoff/deadlines, the installer-lock wait, the keychain
 * timeout, the release-age cooldown's "now", the agent-version cache expiry, git's
 * operation deadline, search's request pacing, the yep client's request timeouts
 * and stop escalation. Deliberately on real time (a fake clock cannot advance what
 * they wait for, or nothing depends on them): polls of kernel or disk state
 * (process-tree sampling, process-group waitGroupGone, git's fetch-size watcher),
 * the agent `--version` probe (no Context), staging directory names (uniqueness
 * only) and doctor's reported durations (measurement for people).
 */

export interface Clock {
  /** Milliseconds since the epoch (Date.now). */
  now(): number;
  /** Run `fn` once after `ms`; returns the cancel function. `unref`: do not keep the process alive for it. */
  timeout(fn: () => void, ms: number, options?: { unref?: boolean }): () => void;
  /** Run `fn` every `ms` until cancelled. */
  interval(fn: () => void, ms: number, options?: { unref?: boolean }): () => void;
  /**
   * Wait `ms` (a backoff, a poll interval: a pause nothing else depends on).
   * Rejects with `signal.reason` when the signal aborts first.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function unrefIf<T extends { unref?(): unknown }>(timer: T, unref: boolean | undefined): T {
  if (unref) timer.unref?.();
  return timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  timeout(fn, ms, options) {
    const t = unrefIf(setTimeout(fn, ms), options?.unref);
    return () => clearTimeout(t);
  },
  interval(fn, ms, options) {
    const t = unrefIf(setInterval(fn, ms), options?.unref);
    return () => clearInterval(t);
  },
  sleep: (ms, signal) => sleepOn(systemClock, ms, signal),
};

/** `sleep` built on a clock's `timeout`: what a Clock implementation can use for its own. */
function sleepOn(clock: Pick<Clock, 'timeout'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = clock.timeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
