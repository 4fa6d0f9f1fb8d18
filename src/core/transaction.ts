/**
 * Crash-safe changes to one store entry. A transaction lives in its own staging
 * directory with a journal; the store entry is swapped by renames on the same
 * filesystem and the lock is written once. If the process dies half-way, the
 * next run (holding the installer lock) finds the journal of a dead process and
 * finishes the job: an install whose lock write did not happen is rolled back,
 * one whose lock write happened is completed; a remove is always completed.
 * Either way store, lock, settings and secrets end entirely before or after.
 */
import { lstat, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from './context.js';
import { errnoCode, stateIoError } from './errors.js';
import { fsyncDir } from './fs-atomic.js';
import { loadLock, saveLock, findEntry, type Lockfile } from './lockfile.js';
import { packageDir } from './paths.js';
import { checkpoint } from './checkpoint.js';
import { removeExtensionState } from './state-cleanup.js';

export interface Journal {
  op: 'place' | 'remove';
  name: string;
  /** For place: the content hash the lock will carry once committed. */
  newHash?: string;
  /** For place: the staged tree (inside the stage) that is renamed into the store. */
  tree?: string;
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

async function writeJournal(stage: string, journal: Journal): Promise<void> {
  await writeFile(join(stage, JOURNAL), JSON.stringify(journal), { flag: 'w' });
  await fsyncDir(stage);
}


/**
 * Place `tree` (a directory or a symlink inside `stage`) at <store>/<name> and
 * write the lock produced by `nextLock`. Caller holds the installer lock.
 */
export async function placePackage(
  ctx: Context,
  stage: string,
  name: string,
  tree: string,
  nextLock: (current: Lockfile) => Lockfile,
  newHash: string,
): Promise<void> {
  const target = packageDir(ctx.paths, name);
  const old = join(stage, 'old');
  const lock = await loadLock(ctx.paths.lockFile); // fail on a corrupt lock before touching anything
  await writeJournal(stage, { op: 'place', name, newHash, tree, pid: process.pid });
  try {
    if (await exists(target)) await rename(target, old);
    await checkpoint(ctx.env, 'place:after-move-old');
    await rename(tree, target);
    await fsyncDir(ctx.paths.storeDir);
    await checkpoint(ctx.env, 'place:before-lock');
    await saveLock(ctx.paths.lockFile, nextLock(lock));
  } catch (e) {
    // Roll back in-process: put the old entry back where it was.
    await rollbackPlace(ctx, stage, name).catch(() => {});
    if (errnoCode(e)) throw stateIoError('update', target, e);
    throw e;
  }
  await checkpoint(ctx.env, 'place:after-lock');
  await rm(old, { recursive: true, force: true });
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
  await writeJournal(stage, { op: 'remove', name, pid: process.pid });
  await moveOut(target, join(stage, 'old'));
  await checkpoint(ctx.env, 'remove:before-lock');
  await saveLock(ctx.paths.lockFile, { ...lock, entries: lock.entries.filter((e) => e.name !== name) });
  await checkpoint(ctx.env, 'remove:after-lock');
  await removeExtensionState(ctx, name);
  await rm(join(stage, 'old'), { recursive: true, force: true });
}

/** Move a store entry aside (into the stage) if it is still there. */
async function moveOut(target: string, aside: string): Promise<void> {
  if ((await exists(target)) && !(await exists(aside))) await rename(target, aside);
}

/**
 * Finish or undo the transaction recorded in a dead process's staging dir.
 * Returns a one-line description of what was done, or undefined if there was no journal.
 */
export async function recoverStage(ctx: Context, stage: string): Promise<string | undefined> {
  let journal: Journal;
  try {
    journal = JSON.parse(await readFile(join(stage, JOURNAL), 'utf8')) as Journal;
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
  if (treeMovedIn && entry?.content_hash === journal.newHash && (await exists(target))) {
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

export async function listStages(ctx: Context): Promise<string[]> {
  try {
    return (await readdir(ctx.paths.stagingDir)).map((e) => join(ctx.paths.stagingDir, e));
  } catch {
    return [];
  }
}
