/**
 * Is the unpack's main thread being kept off the CPU by other work on the machine?
 * The unpack loop asks this to choose how small files are written (issue 20, round
 * seven): on a quiet machine the synchronous path is fastest (each pooled file costs
 * the main thread its callbacks, and the kernel work they move off it does not run
 * faster on two cores), while on a loaded one the pool's threads win CPU time the
 * main thread alone does not get (round six measured 2.89x -> 1.43x under load and
 * 1.34x -> 1.71-1.84x quiet for the same change). docs/performance.md, "Round
 * seven: unpack7".
 *
 * Linux keeps, per thread, the time it spent runnable but waiting for a CPU
 * (`/proc/thread-self/schedstat`, second field, ns). Over windows of WINDOW_MS of
 * wall time, a thread that waited more than THRESHOLD of the window was preempted
 * by something else. One descriptor, read with pread at offset 0 (a fresh record
 * each time), ~5-20 µs a read, at most one read per window. Where the file is not
 * readable (not Linux, no schedstat), `open` returns undefined: never contended.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Wall time between two readings: long enough to average, short enough to follow load that comes and goes. */
const WINDOW_MS = 20;
/**
 * Share of a window spent waiting for a CPU above which the machine counts as busy.
 * Measured on the 2-core machine: 54-62% under a load average of 11-12 (a CI run
 * beside us); see the docs for the quiet figure.
 */
const THRESHOLD = 0.4;

export class RunQueueMeter {
  private readonly buf = Buffer.alloc(128);
  private lastAt: number;
  private lastWait: number;
  private busy = false;

  private constructor(
    private fd: number,
    wait: number,
  ) {
    this.lastAt = performance.now();
    this.lastWait = wait;
  }

  /** A meter for the calling thread, or undefined where the kernel does not say (`file`: tests only). */
  static open(file = '/proc/thread-self/schedstat'): RunQueueMeter | undefined {
    let fd = -1;
    try {
      fd = openSync(file, 'r');
      const m = new RunQueueMeter(fd, 0);
      const wait = m.readWait();
      if (wait === undefined) {
        m.close();
        return undefined;
      }
      m.lastWait = wait;
      return m;
    } catch {
      if (fd !== -1) closeSync(fd);
      return undefined;
    }
  }

  /** Whether the last full window was busy (re-measured at most every WINDOW_MS). */
  busyNow(): boolean {
    const now = performance.now();
    const span = now - this.lastAt;
    if (span < WINDOW_MS) return this.busy;
    const wait = this.readWait();
    if (wait === undefined) return (this.busy = false);
    this.busy = (wait - this.lastWait) / 1e6 > span * THRESHOLD;
    this.lastAt = now;
    this.lastWait = wait;
    return this.busy;
  }

  close(): void {
    if (this.fd === -1) return;
    try {
      closeSync(this.fd);
    } catch {
      // a read-only /proc descriptor: nothing to lose
    }
    this.fd = -1;
  }

  /** Nanoseconds this thread has waited for a CPU since it started. */
  private readWait(): number | undefined {
    try {
      const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
      const fields = this.buf.toString('latin1', 0, n).split(' ');
      const wait = Number(fields[1]);
      return Number.isFinite(wait) ? wait : undefined;
    } catch {
      return undefined;
    }
  }
}
