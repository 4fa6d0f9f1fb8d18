/**
 * Is another process competing with the unpack for the CPUs? The unpack loop asks
 * this to choose how small files are written: on a quiet
 * machine the synchronous path is fastest (each pooled file costs the main thread
 * its callbacks, and the kernel work they move off it does not finish sooner on two
 * cores), while on a loaded one the pool's threads win CPU time the main thread
 * alone does not get (the pool is far faster under load, and slower when quiet).
 *
 * Others' share = (CPU time the whole machine spent, from /proc/stat) minus (this
 * process's own, all threads, from getrusage), over the machine's capacity, per
 * window of WINDOW_MS. Our own threads never count, so a quiet machine stays quiet
 * however many of them the unpack runs (a per-thread run-queue wait, tried first,
 * could not tell the pool's own threads from another process). /proc/stat counts in
 * USER_HZ ticks (10 ms), hence windows of 100 ms (20 ticks on 2 cores). One
 * descriptor, read with pread at offset 0 (a fresh record each time). Where the file
 * is not readable or does not parse (not Linux), `open` returns undefined: never busy.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Wall time between two readings. */
const WINDOW_MS = 100;
/** Others' share of the machine above which it turns busy (more than half of it), and below which it turns quiet again. */
const BUSY_ABOVE = 0.5;
const QUIET_BELOW = 0.25;
/** Linux reports /proc/stat in USER_HZ, 100 on every architecture's user ABI. */
const MS_PER_TICK = 10;

interface Sample {
  at: number;
  /** Machine-wide busy CPU time, ms. */
  machine: number;
  /** This process's CPU time, ms. */
  own: number;
}

export class BusyMeter {
  // Room for the per-CPU lines of a big machine (~80 bytes each): their count is the capacity.
  private readonly buf = Buffer.alloc(65536);
  private last!: Sample;
  private busy = false;
  private cpus = 0;

  private constructor(
    private fd: number,
    private readonly cpuUsage: () => NodeJS.CpuUsage,
    private readonly now: () => number,
  ) {}

  /** A meter, or undefined where the machine's CPU time cannot be read (arguments: tests only). */
  static open(
    statFile = '/proc/stat',
    cpuUsage: () => NodeJS.CpuUsage = () => process.cpuUsage(),
    now: () => number = () => performance.now(),
  ): BusyMeter | undefined {
    let fd = -1;
    try {
      fd = openSync(statFile, 'r');
      const m = new BusyMeter(fd, cpuUsage, now);
      const s = m.sample();
      if (s === undefined) {
        m.close();
        return undefined;
      }
      m.last = s;
      return m;
    } catch {
      if (fd !== -1) closeSync(fd);
      return undefined;
    }
  }

  /**
   * Whether other processes use more than half the machine (re-measured at most every
   * WINDOW_MS). Once busy it stays so until they use less than a quarter: while the
   * pool's threads run, ours is a bigger share and theirs a smaller one.
   */
  busyNow(): boolean {
    if (this.now() - this.last.at < WINDOW_MS) return this.busy;
    const s = this.sample();
    if (s === undefined) {
      this.busy = false;
      return false;
    }
    const others = s.machine - this.last.machine - (s.own - this.last.own);
    this.busy = others > (s.at - this.last.at) * this.cpus * (this.busy ? QUIET_BELOW : BUSY_ABOVE);
    this.last = s;
    return this.busy;
  }

  close(): void {
    if (this.fd === -1) return;
    try {
      closeSync(this.fd);
    } catch {
      // a read-only descriptor: nothing to lose
    }
    this.fd = -1;
  }

  private sample(): Sample | undefined {
    try {
      const at = this.now();
      const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
      const u = this.cpuUsage();
      const text = this.buf.toString('latin1', 0, n);
      // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest is inside user).
      const first = /^cpu +(\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)(?: (\d+))?/.exec(text);
      if (!first) return undefined;
      const f = first.slice(1).map((x) => Number(x ?? 0));
      const cpus = text.match(/^cpu\d+ /gm)?.length ?? 0;
      if (cpus === 0) return undefined;
      this.cpus = cpus;
      const machine = (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0)) * MS_PER_TICK;
      return { at, machine, own: (u.user + u.system) / 1000 };
    } catch {
      return undefined;
    }
  }
}
