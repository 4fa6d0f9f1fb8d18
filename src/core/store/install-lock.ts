/**
 * One installer lock around every read-modify-write of the store and state
 * files. A second process waits (saying so once); a lock left by a killed
 * process goes stale after STALE_MS without a heartbeat and is taken over.
 * The wait is timed on ctx.clock (ctx.waits.lockMs, default 5 min); the
 * heartbeat and staleness are proper-lockfile's own timers.
 */
import lockfile from 'proper-lockfile';
import { YepError, errnoCode, stateIoError, stopIfInterrupted } from '../errors.js';
import type { Context } from '../context.js';
import { recoverHome } from './recovery.js';
import { sweepStaging } from './staging.js';
import { existsSync, lstatSync, mkdirSync, realpathSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import { interruptedChanges } from './interrupted-changes.js';
import { checkCustody, makeDirs } from '../fs/custody.js';
import { STORE_AREAS, storeCustody, type Paths } from '../paths.js';
import { endLockHold, lockLostError, markLockLost } from '../fs/lock-hold.js';

// A holder refreshes the lock every UPDATE_MS; one not refreshed for STALE_MS
// belongs to a dead process (kill -9) and is taken over.
const STALE_MS = 5_000;
const UPDATE_MS = 1_000;

/**
 * The calls proper-lockfile makes (its sync API wraps each `<name>Sync`), and nothing else:
 * by default it copies every property of graceful-fs for each lock. Constant, never written.
 */
const LOCK_FS = Object.freeze({ mkdirSync, realpathSync, statSync, rmdirSync, utimesSync });

async function ensureStore(ctx: Context): Promise<void> {
  try {
    // Explicit modes: under umask 000 the store must still not be writable by others (it holds code yolop runs).
    await makeDirs(ctx.paths.storeDir, 0o755);
  } catch (e) {
    throw stateIoError('create the extension store at', ctx.paths.storeDir, e);
  }
}

// Concurrent operations inside one process on one store (install a b c) queue here first, so
// the file lock only ever arbitrates between processes, and "waiting" means another process.
// One queue per lock file: runs on other stores (a library caller's, in-process tests') never
// wait for each other.
const queues = new Map<string, Promise<unknown>>();
/**
 * The runs that have recovered: a Context's paths object is made once per Context and
 * shared by the copies an operation derives from it, so this is once per command run
 * (a CLI process runs one; in-process tests run many in one process).
 */
const recovered = new WeakSet<Context['paths']>();

/** Whether the store's directory exists (a home where nothing was ever installed has none). */
export const storeExists = (ctx: Context): boolean => existsSync(ctx.paths.storeDir);

/**
 * Crash recovery before a command's own work (the first lock holder of the run runs
 * it), but only where there is a store: everything a crashed yep-ext can leave behind was
 * written under this lock, whose file is in the store, so a home without one has nothing
 * to recover, and a command that then changes nothing (`update --all` with nothing
 * installed, `install` of a spec that fails) must not create the store to find that out.
 * Returns what the staging sweep recovered.
 */
export async function recoverIfStore(ctx: Context): Promise<string[]> {
  if (!storeExists(ctx)) return [];
  // A holder that has just run the whole recovery (recoverHome) has swept the staging directory.
  return withFileLockQueued(ctx, async (recoveredNow) => (recoveredNow ? [] : sweepStaging(ctx)));
}

/** Run `fn` holding the installer lock. */
export async function withInstallLock<T>(ctx: Context, fn: () => Promise<T>): Promise<T> {
  return withFileLockQueued(ctx, () => fn());
}

/** `withInstallLock`, telling `fn` whether this holder has just run the run's recovery. */
async function withFileLockQueued<T>(ctx: Context, fn: (recoveredNow: boolean) => Promise<T>): Promise<T> {
  const key = ctx.paths.installLockFile;
  const run = (queues.get(key) ?? Promise.resolve()).then(() => withFileLock(ctx, fn));
  const tail = run.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/**
 * Take the lock once. ENOENT means the store went between `ensureStore` and the lock: another
 * process's run that placed nothing took away the new store it found missing (created-dirs.ts;
 * it removes only empty directories, and a held lock is a directory in the store). Make the
 * store again and retry, a few times.
 */
async function lockStore(ctx: Context, options: Parameters<typeof lockfile.lock>[1]): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      // The sync API: the same mkdir, stat and rmdir (and the same heartbeat timer), without a
      // round trip through libuv's thread pool for each, which costs more than the calls themselves.
      const release = lockfile.lockSync(ctx.paths.storeDir, { ...options, retries: 0, fs: LOCK_FS });
      return async () => release();
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT' || attempt >= 3) throw e;
      await ensureStore(ctx);
    }
  }
}

/**
 * A store on a read-only mount (an image baked with its extensions, a read-only bind mount in a
 * container) cannot hold a lock file, and needs none: no process can change it there, and a
 * command that changes nothing (`install --frozen` over what is already as locked, `enable` of
 * what is enabled) must succeed, as it would on a writable home. So `fn` runs without the lock;
 * whatever it would write fails on the mount with its own error. Not when a killed process left
 * a transaction half done: only the recovery the lock runs makes that state whole, and it needs
 * to write; the error then says so.
 */
async function withoutLockOnReadOnlyStore<T>(ctx: Context, e: unknown, fn: () => Promise<T>): Promise<T> {
  const interrupted = [...interruptedChanges(ctx).keys()];
  if (interrupted.length > 0) {
    throw new YepError('E_STATE', `Could not lock ${ctx.paths.installLockFile}: EROFS (the extension store is on a read-only file system)`, {
      cause: e,
      hint: `A yep-ext process was killed while changing ${interrupted.join(', ')}, and finishing that needs to write: mount ${ctx.paths.storeDir} read-write and run any yep-ext command once.`,
    });
  }
  ctx.log.debug(`${ctx.paths.storeDir} is on a read-only file system: running without the installer lock (nothing can change the store there).`);
  return fn();
}

/**
 * Every directory of the store that yep-ext deletes from or writes into is a real directory
 * of its own (fs/custody.ts), checked before the lock is taken and before recovery: a
 * dotfiles manager's symlink there (to a directory of the user's) is refused (E_STATE, exit
 * 7) with nothing touched, rather than swept or written through.
 */
function assertStoreCustody(paths: Paths): void {
  for (const area of STORE_AREAS) checkCustody(storeCustody(paths, area));
  checkCustody(storeCustody(paths, 'cache', { owned: ['index'], names: /$^/ }));
}

async function withFileLock<T>(ctx: Context, fn: (recoveredNow: boolean) => Promise<T>): Promise<T> {
  stopIfInterrupted(ctx.signal);
  // On a read-only mount this passes when the store is there (mkdir of an existing directory is EEXIST).
  await ensureStore(ctx);
  assertStoreCustody(ctx.paths);
  const waitMs = ctx.waits.lockMs;
  // proper-lockfile's default throws from its heartbeat timer: an uncaught exception that would end
  // the process (or a library caller's) at a random point. Marked instead: every write of shared
  // state refuses to run from then on (fs/lock-hold.ts), so the command stops before its next change.
  const onCompromised = (e: unknown): void => markLockLost(ctx.paths, e);
  const options = { lockfilePath: ctx.paths.installLockFile, stale: STALE_MS, update: UPDATE_MS, realpath: false, onCompromised };
  let release: () => Promise<void>;
  try {
    release = await lockStore(ctx, options);
  } catch (e) {
    if (errnoCode(e) === 'EROFS') return withoutLockOnReadOnlyStore(ctx, e, () => fn(false));
    if (errnoCode(e) !== 'ELOCKED') throw stateIoError('lock', ctx.paths.installLockFile, e);
    // proper-lockfile's lock is a directory: a file there is no process to wait for (it fails, ENOTDIR, once "stale").
    if (lstatSync(ctx.paths.installLockFile, { throwIfNoEntry: false })?.isDirectory() === false) {
      throw stateIoError('lock', ctx.paths.installLockFile, Object.assign(new Error('ENOTDIR'), { code: 'ENOTDIR' }));
    }
    ctx.log.info('Waiting for another yep-ext process to finish with the extension store (a lock left by a killed process is taken over after 5 s)…');
    const started = ctx.clock.now();
    for (;;) {
      try {
        release = await lockStore(ctx, options);
        break;
      } catch (err) {
        if (errnoCode(err) !== 'ELOCKED') throw stateIoError('lock', ctx.paths.installLockFile, err);
        if (ctx.clock.now() - started > waitMs) {
          // A wait of 1500 ms waited 1.5 s, not "over 2 s".
          const waited = waitMs % 1000 === 0 ? String(waitMs / 1000) : (waitMs / 1000).toFixed(1);
          throw new YepError('E_LOCKED', `Another yep-ext process has held ${ctx.paths.installLockFile} for over ${waited} s.`, {
            hint: 'Wait for it to finish. A lock left by a killed process is taken over automatically after 5 s.',
          });
        }
        // The poll itself is not cancelled (it is short): Ctrl-C ends the wait at the next turn.
        await ctx.clock.sleep(100 + Math.random() * 150);
        stopIfInterrupted(ctx.signal);
      }
    }
  }
  let result: T;
  try {
    // The first holder in a run finishes or undoes the transactions of dead
    // processes (kill -9, power loss) and sweeps their leftovers (recovery.ts), so
    // whichever command runs next after a crash recovers, not only install,
    // update and remove.
    const recoveredNow = !recovered.has(ctx.paths);
    if (recoveredNow) {
      recovered.add(ctx.paths);
      for (const m of await recoverHome(ctx)) ctx.log.info(`Recovered: ${m}.`);
    }
    result = await fn(recoveredNow);
  } catch (e) {
    // A write the loss refused, or any failure after it: the loss is what the user must hear.
    const why = endLockHold(ctx.paths);
    if (why !== undefined) throw lockLostError(ctx.paths, why);
    throw e;
  } finally {
    await release().catch(() => {});
  }
  const why = endLockHold(ctx.paths);
  if (why !== undefined) throw lockLostError(ctx.paths, why);
  return result;
}
