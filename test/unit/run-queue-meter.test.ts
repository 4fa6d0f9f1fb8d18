/**
 * RunQueueMeter (archive/run-queue-meter.ts): the unpack's "is this machine busy?"
 * from the thread's run-queue wait in /proc/thread-self/schedstat. A fake schedstat
 * file, rewritten between readings, makes the decision deterministic; the real file
 * is read where the kernel has it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunQueueMeter } from '../../src/core/archive/run-queue-meter.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'yep-rq-'));
  file = join(dir, 'schedstat');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const stat = (runNs: number, waitNs: number): void => writeFileSync(file, `${runNs} ${waitNs} 7\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('RunQueueMeter', () => {
  it('says busy when the thread waited for a CPU more than 40% of a window, quiet otherwise', async () => {
    stat(1e9, 5e9);
    const m = RunQueueMeter.open(file)!;
    expect(m).toBeDefined();
    try {
      // Before a window has passed, the last verdict stands (quiet at first).
      stat(1e9, 5e9 + 1e12);
      expect(m.busyNow()).toBe(false);
      await sleep(40);
      // A huge wait over the window: busy.
      expect(m.busyNow()).toBe(true);
      await sleep(40);
      // 1 ms of waiting in >= 40 ms: quiet again.
      stat(2e9, 5e9 + 1e12 + 1e6);
      expect(m.busyNow()).toBe(false);
    } finally {
      m.close();
    }
  });

  it('is absent where the file cannot be read or does not parse: never busy', () => {
    expect(RunQueueMeter.open(join(dir, 'missing'))).toBeUndefined();
    writeFileSync(file, 'not a schedstat\n');
    expect(RunQueueMeter.open(file)).toBeUndefined();
  });

  it.runIf(process.platform === 'linux' && existsSync('/proc/thread-self/schedstat'))('reads the real file and releases its descriptor', () => {
    const before = readdirSync('/proc/self/fd').length;
    const m = RunQueueMeter.open();
    expect(m).toBeDefined();
    expect(typeof m!.busyNow()).toBe('boolean');
    m!.close();
    m!.close();
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });
});
