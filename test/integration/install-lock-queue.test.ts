/**
 * withInstallLock within one process: callers queue in order instead of polling
 * the file lock against each other (a poll sleeps between attempts and tells
 * the user it is waiting for "another yep-ext process").
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import lockfile from 'proper-lockfile';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withInstallLock } from '../../src/core/store/install-lock.js';
import { isYepError } from '../../src/core/errors.js';
import { saveStoreLock } from '../../src/core/store/lockfile.js';
import { approvedGrantFile, removeApprovedGrant } from '../../src/core/store/approved-grants.js';
import { keychainIndexFile, writeKeychainIndex } from '../../src/core/settings/keychain.js';
import { makeOwnedDir } from '../../src/core/fs/custody.js';
import { storeCustody } from '../../src/core/paths.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => {
  vi.restoreAllMocks();
  home.cleanup();
});

describe('withInstallLock in one process', () => {
  it('a lock taken away while held (its directory gone, as a takeover as stale does): the next write of shared state by the holder is refused and it ends with E_LOCKED, not an uncaught exception; the next holder takes it', async () => {
    const ctx = home.ctx();
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => {
      uncaught.push(e);
    };
    process.on('uncaughtException', onUncaught);
    try {
      let refused: unknown;
      const err = await withInstallLock(ctx, async () => {
        writeFileSync(ctx.paths.lockFile, 'version = 1\n');
        rmdirSync(ctx.paths.installLockFile);
        // The heartbeat (every 1 s) finds the lock gone.
        await new Promise((r) => setTimeout(r, 1_500));
        // Another process may hold the lock now: this run's next write of shared state is refused.
        refused = await saveStoreLock(ctx.paths, { entries: [], extra: {} }).catch((e: unknown) => e);
        return 'done';
      }).catch((e: unknown) => e);
      expect(uncaught).toEqual([]);
      expect(isYepError(refused) && refused.code).toBe('E_LOCKED');
      expect(readFileSync(ctx.paths.lockFile, 'utf8')).toBe('version = 1\n');
      expect(isYepError(err) && err.code).toBe('E_LOCKED');
      expect((err as Error).message).toContain(ctx.paths.installLockFile);
      expect(await withInstallLock(ctx, async () => existsSync(ctx.paths.installLockFile))).toBe(true);
      expect(existsSync(ctx.paths.installLockFile)).toBe(false);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('a lost lock stops deletes and moves in the store too, not only writes: an approved grant, the keychain index and a staged entry stay as they were', async () => {
    const ctx = home.ctx();
    mkdirSync(ctx.paths.grantsDir, { recursive: true });
    const grant = approvedGrantFile(ctx, 'kept');
    writeFileSync(grant, '{"kept":true}\n');
    writeFileSync(keychainIndexFile(ctx.paths), '{"version":1,"entries":{"kept":["token"]}}\n');
    const tried: Record<string, unknown> = {};
    const err = await withInstallLock(ctx, async () => {
      rmdirSync(ctx.paths.installLockFile);
      await new Promise((r) => setTimeout(r, 1_500));
      const code = (e: unknown) => (isYepError(e) ? e.code : String(e));
      tried.grant = await removeApprovedGrant(ctx, 'kept').then(() => 'removed', code);
      tried.keychain = await writeKeychainIndex(ctx.paths, {}).then(() => 'written', code);
      tried.dir = await makeOwnedDir(storeCustody(ctx.paths, 'packages')).then(() => 'made', code);
      return 'done';
    }).catch((e: unknown) => e);
    expect(isYepError(err) && err.code).toBe('E_LOCKED');
    expect(tried).toEqual({ grant: 'E_LOCKED', keychain: 'E_LOCKED', dir: 'E_LOCKED' });
    expect(readFileSync(grant, 'utf8')).toBe('{"kept":true}\n');
    expect(readFileSync(keychainIndexFile(ctx.paths), 'utf8')).toBe('{"version":1,"entries":{"kept":["token"]}}\n');
    expect(existsSync(ctx.paths.packagesDir)).toBe(false);
    // Once the hold is over, the same process deletes in that store again (the next holder's work).
    await withInstallLock(ctx, () => removeApprovedGrant(ctx, 'kept'));
    expect(existsSync(grant)).toBe(false);
  });

  it('runs concurrent callers one at a time, in call order, without waiting messages', async () => {
    const ctx = home.ctx();
    const events: string[] = [];
    let inside = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        withInstallLock(ctx, async () => {
          inside++;
          expect(inside).toBe(1);
          events.push(`start ${i}`);
          await new Promise((r) => setTimeout(r, 5));
          events.push(`end ${i}`);
          inside--;
        }),
      ),
    );
    expect(events).toEqual(Array.from({ length: 8 }, (_, i) => [`start ${i}`, `end ${i}`]).flat());
    expect(ctx.log.lines.map((l) => l.message).join('\n')).not.toMatch(/Waiting/);
    // Eight polls of the file lock would have cost at least 7 x 100 ms.
    expect(Date.now() - started).toBeLessThan(700);
  });

  it('the queue is per store: a run on another home takes its own lock while the first still holds its one', async () => {
    const other = makeTempHome();
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const first = withInstallLock(home.ctx(), () => held);
      const second = withInstallLock(other.ctx(), async () => 'ran');
      const answer = await Promise.race([second, new Promise((r) => setTimeout(() => r('waited for the other store'), 5_000))]);
      release();
      await first;
      expect(answer).toBe('ran');
    } finally {
      other.cleanup();
    }
  });

  it('a failing caller releases the queue for the next one', async () => {
    const ctx = home.ctx();
    const first = withInstallLock(ctx, async () => {
      throw new Error('boom');
    });
    const second = withInstallLock(ctx, async () => 'ran');
    await expect(first).rejects.toThrow('boom');
    await expect(second).resolves.toBe('ran');
  });
});

describe('withInstallLock when the store goes before the lock is taken', () => {
  it('makes the store again and takes the lock (another process that placed nothing removed the new store it found missing)', async () => {
    const ctx = home.ctx();
    const lock = lockfile.lockSync.bind(lockfile);
    let calls = 0;
    vi.spyOn(lockfile, 'lockSync').mockImplementation((file, options) => {
      // The other process's prune, between ensureStore and the first lock attempt.
      if (calls++ === 0) rmSync(ctx.paths.storeDir, { recursive: true, force: true });
      return lock(file, options);
    });
    const ran = await withInstallLock(ctx, async () => existsSync(ctx.paths.installLockFile));
    expect(ran, 'fn ran holding the lock').toBe(true);
    expect(calls).toBe(2);
    expect(existsSync(ctx.paths.installLockFile), 'released').toBe(false);
  });
});
