/**
 * The writers' (file-writer.ts, worker-writer.ts) one way to wait: a caller awaits
 * `next()` in a loop around its own condition, and whatever may change that condition
 * (a file closed, a batch acknowledged, a stop) calls `wakeAll()`. No promise per file.
 */
export class WakeList {
  private waiters: Array<() => void> = [];

  /** Resolves at the next wakeAll(). */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  wakeAll(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}
