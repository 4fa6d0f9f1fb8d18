/**
 * A Clock (src/core/clock.ts) that tests drive: time moves only when `advance`
 * is called or something sleeps. `sleep` returns at once, moving time by the
 * amount and recording it (a backoff or a poll: nothing else waits on it), so a
 * test can check the waits a default configuration would make without making them.
 */
import type { Clock } from '../../src/core/clock.js';

interface Timer {
  at: number;
  fn: () => void;
  every?: number;
}

export class ManualClock implements Clock {
  private t: number;
  private readonly timers = new Set<Timer>();
  /** Every `sleep(ms)` asked for, in order. */
  readonly sleeps: number[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  timeout(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.t + ms, fn };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  interval(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.t + ms, fn, every: ms };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.t += ms;
    return Promise.resolve();
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.size;
  }

  /** Move time by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers].filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = due.at;
      if (due.every) due.at += due.every;
      else this.timers.delete(due);
      due.fn();
    }
    this.t = end;
  }
}
