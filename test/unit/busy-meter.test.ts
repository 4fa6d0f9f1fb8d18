/**
 * BusyMeter (archive/busy-meter.ts): the unpack's "is another process competing for
 * the CPUs?", from the machine's CPU time (/proc/stat) minus this process's own. A
 * fake stat file and a fake own CPU time make the decision deterministic; the real
 * file is read where the kernel has it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BusyMeter } from '../../src/core/archive/busy-meter.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'yep-busy-'));
  file = join(dir, 'stat');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A 2-CPU /proc/stat whose busy time is `user` ticks (10 ms each). */
const stat = (user: number): void => writeFileSync(file, `cpu  ${user} 0 0 5000 7 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\nintr 1\n`);

describe('BusyMeter', () => {
  it('is busy when other processes used more than half the machine over a window, and quiet again below a quarter', async () => {
    let ownMs = 0;
    // A fake clock: a loaded machine cannot stretch a window (the first verdict needs < 100 ms).
    let t = 0;
    const advance = async (ms: number) => {
      t += ms;
    };
    stat(1000);
    const m = BusyMeter.open(
      file,
      () => ({ user: ownMs * 1000, system: 0 }),
      () => t,
    )!;
    expect(m).toBeDefined();
    try {
      // Before a window (100 ms) has passed, the last verdict stands: quiet at first.
      stat(1000 + 10_000);
      expect(m.busyNow()).toBe(false);
      await advance(120);
      // The machine was busy for 100 s of ticks, and none of it was ours: busy.
      expect(m.busyNow()).toBe(true);
      await advance(120);
      // All of the machine's time in this window was ours: quiet again.
      stat(1000 + 10_000 + 40);
      ownMs = 400;
      expect(m.busyNow()).toBe(false);
      await advance(120);
      // Ours is not counted however much of it there is.
      stat(1000 + 10_000 + 40 + 30);
      ownMs = 700;
      expect(m.busyNow()).toBe(false);
    } finally {
      m.close();
    }
  });

  it('is absent where the file cannot be read or does not parse: never busy', () => {
    expect(BusyMeter.open(join(dir, 'missing'))).toBeUndefined();
    writeFileSync(file, 'not a stat file\n');
    expect(BusyMeter.open(file)).toBeUndefined();
  });

  it.runIf(process.platform === 'linux' && existsSync('/proc/stat'))('reads the real /proc/stat and releases its descriptor', () => {
    const before = readdirSync('/proc/self/fd').length;
    const m = BusyMeter.open();
    expect(m).toBeDefined();
    expect(typeof m!.busyNow()).toBe('boolean');
    m!.close();
    m!.close();
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });
});
