/**
 * Crash-safe changes to one store entry. A transaction lives in its own staging
 * directory with a journal; the store entry is swapped by renames on the same
 * filesystem and the lock is written once. If the process dies half-way, the
 * next run (holding the installer lock) finds the journal of a dead process and
 * finishes the job: an install whose lock write did not happen is rolled back,
 * one whose lock write happened is completed; a remove is always completed.
 * Either way store, lock, settings and secrets end entirely before or after.
 * This module is the only writer of the store's extensions.lock.
 */
import { lstat, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Context } from '../context.js';
import { errnoCode, isYepError, stateIoError } from '../errors.js';
import { assertReplaceable, fsyncDir } from './fs-atomic.js';
import { readRegularTextSync } from './read-regular-file.js';
import { approvedGrantFile, saveApprovedGrant } from './approved-grants.js';
import type { Grant } from '../package/grants.js';
import { loadLock, saveLock, findEntry, upsertEntry, type LockEntry, type Lockfile } from './lockfile.js';
import { packageDir } from '../paths.js';
import { checkpoint } from './checkpoint.js';
import { removeExtensionState } from './state-cleanup.js';

export interface Journal {
  op: 'place' | 'remove';
  name: string;
  /**
   * For place: the exact lock entry being committed. Committed means the lock
   * holds this entry, not merely its content hash: replacing an extension with
   * the same bytes from another source keeps the hash and changes the source.
   */
  entry?: LockEntry;
  /** For place, journals written before `entry` existed: the new content hash. */
  newHash?: string;
  /** For place: the staged tree (inside the stage) that is renamed into the store. */
  tree?: string;
  /** For place: the grant approved with this install, saved beside the lock once committed. */
  grant?: Grant;
  pid: number;
}

const JOURNAL = 'journal.json';

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}

/**
 * The journal must be on disk before the first rename it describes: after a power
 * loss, a journal whose bytes never made it would let the sweep delete a moved-out
 * entry as junk. (writeFile alone does not fsync the file's data.)
 */
async function writeJournal(stage: string, journal: Journal): Promise<void> {
  const file = join(stage, JOURNAL);
  try {
    const fh = await open(file, 'w', 0o600);
    try {
      await fh.writeFile(JSON.stringify(journal));
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (e) {
    // Nothing has been moved yet (a full disk, typically): a plain state error.
    throw stateIoError('write the transaction journal', file, e);
  }
  await fsyncDir(stage);
}

/** Key-order-independent JSON, to compare a lock entry read back with the one written. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}


/** Lock changes that ride on a commit's single lock write (or make one on their own: pinEntries). */
export interface LockChanges {
  /** Exact entries to pin whose files are already in place (e.g. a target lock's entries already installed). */
  pin?: LockEntry[];
  /** Top-level keys merged over the lock's own (a target lock's extra tables). */
  extra?: Record<string, unknown>;
}

function withChanges(lock: Lockfile, changes: LockChanges): Lockfile {
  const pinned = (changes.pin ?? []).reduce(upsertEntry, lock);
  return changes.extra ? { ...pinned, extra: { ...pinned.extra, ...changes.extra } } : pinned;
}

/**
 * Place `tree` (a directory or a symlink inside `stage`) at <store>/<entry.name>,
 * pin `entry` (with any `changes`) in one lock write (the commit point), then save
 * the approved `grant` beside the lock. Caller holds the installer lock.
 */
export async function placePackage(ctx: Context, stage: string, entry: LockEntry, tree: string, grant?: Grant, changes: LockChanges = {}): Promise<void> {
  const name = entry.name;
  const target = packageDir(ctx.paths, name);
  const old = join(stage, 'old');
  const lock = withChanges(await loadLock(ctx.paths.lockFile), changes); // fail on a corrupt lock before touching anything
  // ...and on a lock or grant that cannot be replaced (a symlink out of the store): refused before any move.
  assertReplaceable(ctx.paths.lockFile, { what: 'The lockfile' });
  if (grant) assertReplaceable(approvedGrantFile(ctx, name), { what: 'The approved grant' });
  await writeJournal(stage, { op: 'place', name, entry, tree, ...(grant ? { grant } : {}), pid: process.pid });
  try {
    if (await exists(target)) await rename(target, old);
    await checkpoint(ctx, 'place:after-move-old');
    await rename(tree, target);
    await fsyncDir(ctx.paths.storeDir);
    await checkpoint(ctx, 'place:before-lock');
    await saveLock(ctx.paths.lockFile, upsertEntry(lock, entry));
  } catch (e) {
    // Roll back in-process: put the old entry back where it was.
    await rollbackPlace(ctx, stage, name).catch(() => {});
    // A YepError (the lock write's "Could not write …: ENOSPC" with its hint) is
    // already the right report; wrapping it again printed "…: E_STATE".
    if (!isYepError(e) && errnoCode(e)) throw stateIoError('update', target, e);
    throw e;
  }
  await checkpoint(ctx, 'place:after-lock');
  // After the commit: a failed install must not replace the record of what was
  // approved. A crash before this line is completed by recovery (the journal has it).
  if (grant) await saveApprovedGrant(ctx, name, grant);
  await rm(old, { recursive: true, force: true });
}

/**
 * Commit lock changes that move no files (entries already in place, top-level
 * keys): one atomic write, which is its own commit point, so there is nothing to
 * journal. Caller holds the installer lock.
 */
export async function pinEntries(ctx: Context, changes: LockChanges): Promise<void> {
  await saveLock(ctx.paths.lockFile, withChanges(await loadLock(ctx.paths.lockFile), changes));
}

async function rollbackPlace(ctx: Context, stage: string, name: string): Promise<void> {
  const target = packageDir(ctx.paths, name);
  const old = join(stage, 'old');
  if (await exists(old)) {
    await rm(target, { recursive: true, force: true });
    await rename(old, target);
  } else {
    await rm(target, { recursive: true, force: true });
  }
  await fsyncDir(ctx.paths.storeDir);
}

/** Remove <store>/<name> and its lock entry (then the registered hooks). Caller holds the lock. */
export async function removePackage(ctx: Context, stage: string, name: string): Promise<void> {
  const target = packageDir(ctx.paths, name);
  const lock = await loadLock(ctx.paths.lockFile);
  assertReplaceable(ctx.paths.lockFile, { what: 'The lockfile' });
  await writeJournal(stage, { op: 'remove', name, pid: process.pid });
  await moveOut(target, join(stage, 'old'));
  await checkpoint(ctx, 'remove:before-lock');
  try {
    await saveLock(ctx.paths.lockFile, { ...lock, entries: lock.entries.filter((e) => e.name !== name) });
  } catch (e) {
    // The lock still lists the extension (a full disk, a read-only lock): put the
    // entry back, or the caller's clean-up of the stage would delete it for good.
    await moveBack(join(stage, 'old'), target).catch(() => {});
    throw e;
  }
  await checkpoint(ctx, 'remove:after-lock');
  await removeExtensionState(ctx, name);
  await rm(join(stage, 'old'), { recursive: true, force: true });
}

/** Move a store entry aside (into the stage) if it is still there. */
async function moveOut(target: string, aside: string): Promise<void> {
  if ((await exists(target)) && !(await exists(aside))) await rename(target, aside);
}

async function moveBack(aside: string, target: string): Promise<void> {
  if ((await exists(aside)) && !(await exists(target))) await rename(aside, target);
  await fsyncDir(dirname(target));
}

/**
 * Finish or undo the transaction recorded in a dead process's staging dir.
 * Returns a one-line description of what was done, or undefined if there was no journal.
 */
export async function recoverStage(ctx: Context, stage: string): Promise<string | undefined> {
  let journal: Journal;
  // A journal that is not a regular file is refused (E_STATE) rather than read: a FIFO would block.
  const text = readRegularTextSync(join(stage, JOURNAL), 'The transaction journal', { followSymlinks: false });
  if (text === undefined) return undefined;
  try {
    journal = JSON.parse(text) as Journal;
  } catch {
    return undefined;
  }
  const lock = await loadLock(ctx.paths.lockFile);
  const entry = findEntry(lock, journal.name);
  if (journal.op === 'remove') {
    // The entry may not have been moved out yet: finish that first, then the lock and state.
    await moveOut(packageDir(ctx.paths, journal.name), join(stage, 'old'));
    if (entry) await saveLock(ctx.paths.lockFile, { ...lock, entries: lock.entries.filter((e) => e.name !== journal.name) });
    await removeExtensionState(ctx, journal.name);
    return `completed an interrupted removal of ${journal.name}`;
  }
  // place: the staged tree is still in the stage until it has been renamed into the store.
  const target = packageDir(ctx.paths, journal.name);
  const old = join(stage, 'old');
  const treeMovedIn = journal.tree !== undefined && !(await exists(journal.tree));
  const lockCommitted = journal.entry ? entry !== undefined && canonical(entry) === canonical(journal.entry) : entry?.content_hash === journal.newHash;
  if (treeMovedIn && lockCommitted && (await exists(target))) {
    if (journal.grant) await saveApprovedGrant(ctx, journal.name, journal.grant);
    return `completed an interrupted install of ${journal.name}`;
  }
  if (treeMovedIn) {
    // New tree in place but the lock never learned of it: undo (old entry back, or nothing).
    await rollbackPlace(ctx, stage, journal.name);
  } else if ((await exists(old)) && !(await exists(target))) {
    // Died between moving the old entry out and moving the new one in.
    await rename(old, target);
  }
  return `rolled back an interrupted install of ${journal.name}`;
}
