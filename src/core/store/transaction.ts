/**
 * Crash-safe changes to one store entry. A transaction lives in its own staging
 * directory with a journal; the store entry is a symlink swapped by one rename
 * on the same filesystem (package-versions.ts) and the lock is written once. If
 * the process dies half-way, the next run (holding the installer lock) finds the
 * journal of a dead process and finishes the job: an install whose lock write did
 * not happen is rolled back, one whose lock write happened is completed; a remove
 * is always completed. Either way store, lock, settings and secrets end entirely
 * before or after. Without any recovery, what the agent loads (the enabled
 * extensions' packages, config and secrets) is before or after at every instant:
 * the symlink rename is the switch of an install, and a remove disables first.
 * This module is the only writer of the store's extensions.lock.
 */
import { lstatSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { makeOwnedDir, removeOwned, type Custody } from '../fs/custody.js';
import type { Context } from '../context.js';
import { YepError, errnoCode, isYepError, stateIoError, stopIfInterrupted } from '../errors.js';
import { assertReplaceable, fsyncDir, writeFileAtomic } from '../fs/fs-atomic.js';
import { JOURNAL_FILE, readStageJournal, type DeadStage } from './stage-journal.js';
import { assertLockKept, assertLockKeptUnder } from '../fs/lock-hold.js';
import { approvedGrantFile, saveApprovedGrant } from './approved-grants.js';
import { saveCustody } from './custody.js';
import type { Grant } from '../package/grants.js';
import { loadStoreLock, saveStoreLock, findEntry, upsertEntry, type LockEntry, type Lockfile } from './lockfile.js';
import { packageDir, rootCustody, storeCustody, type Paths } from '../paths.js';
import { stageCustody } from './staging.js';
import { checkpoint } from '../fs/checkpoint.js';
import { disableForRemoval, preflightRemoval, removeGrantAndSecrets } from './state-cleanup.js';
import { dropVersionIfUnused, freeVersionId, readStoreEntry, versionLinkText, versionOfLink } from './package-versions.js';

interface Journal {
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
  /** For place: the staged tree or symlink (inside the stage) that goes into the store. */
  tree?: string;
  /**
   * For place: the text of the symlink that becomes <store>/<name> (`.yep-packages/<id>`,
   * or the user's directory). Absent in journals of an older yep-ext, which renamed
   * the tree itself into place.
   */
  link?: string;
  /** For place of a tree: its version directory in `.yep-packages`. */
  version?: string;
  /** What <store>/<name> was: a symlink (its text), or an entry set aside in the stage as `old`; absent: nothing. */
  previous?: { link: string } | { aside: true };
  /** For place: the grant approved with this install, saved beside the lock once committed. */
  grant?: Grant;
  /** For place: what the command was doing, for recovery's report and `list` (absent in older journals: an install). */
  intent?: PlaceIntent;
  pid: number;
}

/** What a place is part of: an install (new, reinstall, repair, frozen) or an update. */
export type PlaceIntent = 'install' | 'update';

async function exists(p: string): Promise<boolean> {
  try {
    lstatSync(p);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}

/**
 * The journal must be on disk before the first rename it describes: after a power
 * loss, a journal whose bytes never made it would let the sweep delete a moved-out
 * entry as junk. Written through the one atomic writer (fsync, rename, directory
 * fsync): a journal is whole or absent, never torn.
 */
async function writeJournal(paths: Paths, stage: string, journal: Journal): Promise<void> {
  // A transaction starts only while this run still holds the store's lock (fs/lock-hold.ts).
  assertLockKept(paths);
  const file = join(stage, JOURNAL_FILE);
  try {
    await writeFileAtomic(file, JSON.stringify(journal), { mode: 0o600, what: 'The transaction journal' });
  } catch (e) {
    // Nothing has been moved yet (a full disk, typically): a plain state error.
    throw stateIoError('write the transaction journal', file, isYepError(e) && e.cause !== undefined ? e.cause : e);
  }
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

/** `<stage>/old`: where an entry that is not a symlink (a real directory) is set aside. */
const ASIDE = 'old';
const asideOf = (stage: string): string => join(stage, ASIDE);

/** `<store>/<name>`: an extension's entry, deleted only by its removal (or an undone install). */
const entryCustody = (paths: Paths): Custody => rootCustody(paths.storeDir, /^[A-Za-z0-9_-]+$/, 'The extension store');

/** Put symlink `text` at `target` in one rename (whatever is there is replaced atomically). */
async function swapLink(stage: string, target: string, text: string, label: string): Promise<void> {
  const temp = join(stage, label);
  await removeOwned(stageCustody(stage), label);
  // Every switch of an entry, a place's or a recovery's, is refused once the lock is lost.
  assertLockKeptUnder(target);
  symlinkSync(text, temp, 'dir');
  renameSync(temp, target);
}

async function linkTextAt(target: string): Promise<string | undefined> {
  try {
    return readlinkSync(target);
  } catch {
    return undefined;
  }
}

/**
 * Place `tree` (a directory, or a symlink to the user's directory, inside `stage`)
 * at <store>/<entry.name>, pin `entry` (with any `changes`) in one lock write (the
 * commit point), then save the approved `grant` beside the lock. Caller holds the
 * installer lock; `current` is the store's lock as the caller read it under that
 * hold (one parse per commit, not three), read here when not given. Returns the
 * lock as written, for a caller committing several packages in one hold.
 *
 * A directory moves to `.yep-packages/<name>.<id>` first (package-versions.ts);
 * then one rename puts a symlink to it (or the user's directory) at
 * <store>/<name>, replacing an older symlink in the same step. That rename is the
 * switch for the agent, which runs no recovery: before it, it loads the old
 * package, after it the new one. An entry that is a real directory (the host's,
 * or an older yep-ext's) is set aside first: between those two renames the name is
 * absent (docs/reliability.md, "The first replacement of a directory entry").
 */
export async function placePackage(
  ctx: Context,
  stage: string,
  entry: LockEntry,
  tree: string,
  grant?: Grant,
  changes: LockChanges = {},
  current?: Lockfile,
  intent: PlaceIntent = 'install',
): Promise<Lockfile> {
  const { paths } = ctx;
  const name = entry.name;
  const target = packageDir(paths, name);
  stopIfInterrupted(ctx.signal);
  const lock = withChanges(current ?? (await loadStoreLock(paths)), changes); // fail on a corrupt lock before touching anything
  // ...and on a lock or grant that cannot be replaced (a symlink out of the store): refused before any move.
  assertReplaceable(paths.lockFile, { what: 'The lockfile' });
  if (grant) assertReplaceable(approvedGrantFile(ctx, name), { what: 'The approved grant' });
  const owned = !lstatSync(tree).isSymbolicLink();
  const version = owned ? await freeVersionId(paths, name, entry.content_hash) : undefined;
  const link = version !== undefined ? versionLinkText(paths, version) : readlinkSync(tree);
  const before = await readStoreEntry(paths, name);
  const previous: Journal['previous'] = before.kind === 'link' ? { link: before.text } : before.kind === 'none' ? undefined : { aside: true };
  const journal: Journal = {
    op: 'place',
    name,
    entry,
    tree,
    link,
    ...(version !== undefined ? { version } : {}),
    ...(previous ? { previous } : {}),
    ...(grant ? { grant } : {}),
    ...(intent !== 'install' ? { intent } : {}),
    pid: process.pid,
  };
  await writeJournal(paths, stage, journal);
  let written: Lockfile;
  try {
    let newLink = tree;
    assertLockKept(paths);
    if (version !== undefined) {
      await makeOwnedDir(storeCustody(paths, 'packages'), 0o755);
      renameSync(tree, join(paths.packagesDir, version));
      await fsyncDir(paths.packagesDir);
      newLink = join(stage, 'link');
      symlinkSync(link, newLink, 'dir');
    }
    assertLockKept(paths);
    if (previous && 'aside' in previous) renameSync(target, asideOf(stage));
    await checkpoint(ctx, 'place:after-move-old');
    assertLockKept(paths);
    renameSync(newLink, target);
    await fsyncDir(paths.storeDir);
    await checkpoint(ctx, 'place:before-lock');
    written = upsertEntry(lock, entry);
    await saveStoreLock(paths, written);
  } catch (e) {
    // Roll back in-process: the old entry back where it was.
    await rollbackPlace(ctx, stage, journal).catch(() => {});
    // A YepError (the lock write's "Could not write …: ENOSPC" with its hint) is
    // already the right report; wrapping it again printed "…: E_STATE".
    if (!isYepError(e) && errnoCode(e)) throw stateIoError('update', target, e);
    throw e;
  }
  await checkpoint(ctx, 'place:after-lock');
  // After the commit: a failed install must not replace the record of what was
  // approved. A crash before this line is completed by recovery (the journal has it).
  if (grant) await saveApprovedGrant(ctx, name, grant);
  for (const e of [...(changes.pin ?? []), entry]) await saveCustody(ctx, findEntry(written, e.name) ?? e);
  await dropReplaced(ctx, stage, journal);
  return written;
}

/** After a committed place: the replaced version directory and a set-aside entry go. */
async function dropReplaced(ctx: Context, stage: string, journal: Journal): Promise<void> {
  const old = journal.previous && 'link' in journal.previous ? versionOfLink(ctx.paths, journal.previous.link) : undefined;
  if (old !== journal.version) await dropVersionIfUnused(ctx.paths, old);
  await removeOwned(stageCustody(stage), ASIDE);
}

/**
 * Commit lock changes that move no files (entries already in place, top-level
 * keys): one atomic write, which is its own commit point, so there is nothing to
 * journal. Caller holds the installer lock.
 */
export async function pinEntries(ctx: Context, changes: LockChanges): Promise<void> {
  const written = withChanges(await loadStoreLock(ctx.paths), changes);
  await saveStoreLock(ctx.paths, written);
  for (const e of changes.pin ?? []) await saveCustody(ctx, findEntry(written, e.name) ?? e);
}

/** Undo a place whose lock write did not happen: the previous entry back (a symlink in one rename), the new version gone. */
async function rollbackPlace(ctx: Context, stage: string, journal: Journal): Promise<void> {
  const { paths } = ctx;
  // With the lock lost, the journal is left for the next holder's recovery: nothing is moved back here.
  assertLockKept(paths);
  const target = packageDir(paths, journal.name);
  const now = await linkTextAt(target);
  const ours = now !== undefined && now === journal.link;
  const absent = !(await exists(target));
  const previous = journal.previous;
  if (previous && 'link' in previous) {
    if (ours || absent) await swapLink(stage, target, previous.link, 'link.restore');
  } else if (previous && 'aside' in previous) {
    if (await exists(asideOf(stage))) {
      if (ours) await removeOwned(entryCustody(paths), journal.name);
      if (ours || absent) renameSync(asideOf(stage), target);
    }
  } else if (ours) {
    await removeOwned(entryCustody(paths), journal.name);
  }
  await fsyncDir(paths.storeDir);
  await dropVersionIfUnused(paths, journal.version);
}

/**
 * Remove <store>/<name> and its lock entry, settings entries, grant and secrets.
 * Caller holds the lock. The lock write is the commit point (a full disk there
 * changes nothing); then settings (the agent stops loading it), then the store
 * entry, then grant and secrets (state-cleanup.ts says why in that order).
 */
export async function removePackage(ctx: Context, stage: string, name: string): Promise<void> {
  const lock = await loadStoreLock(ctx.paths);
  assertReplaceable(ctx.paths.lockFile, { what: 'The lockfile' });
  await preflightRemoval(ctx, name);
  const before = await readStoreEntry(ctx.paths, name);
  await writeJournal(ctx.paths, stage, { op: 'remove', name, pid: process.pid, ...(before.kind === 'link' ? { previous: { link: before.text } } : {}) });
  await checkpoint(ctx, 'remove:before-lock');
  if (findEntry(lock, name)) await saveStoreLock(ctx.paths, { ...lock, entries: lock.entries.filter((e) => e.name !== name) });
  await checkpoint(ctx, 'remove:after-lock');
  try {
    await finishRemove(ctx, stage, name, before.kind === 'link' ? before.text : undefined);
  } catch (e) {
    // Committed but not finished (settings.toml could not be written, so the
    // package stays): keep the journal for the next command to finish.
    try {
      renameSync(stage, `${stage}.pending`);
    } catch {
      // left as it is: the next command's recovery finds it
    }
    throw e;
  }
}

/**
 * Everything after a removal's commit, in the agent-safe order; idempotent (recovery runs
 * it again). `previousLink`: the link the entry was when the removal began (its journal), so
 * a removal killed after the entry was set aside still deletes the version directory.
 */
async function finishRemove(ctx: Context, stage: string, name: string, previousLink?: string): Promise<void> {
  assertLockKept(ctx.paths);
  await disableForRemoval(ctx, name);
  const target = packageDir(ctx.paths, name);
  const was = await readStoreEntry(ctx.paths, name);
  if (was.kind !== 'none' && !(await exists(asideOf(stage)))) {
    renameSync(target, asideOf(stage));
    await fsyncDir(ctx.paths.storeDir);
  }
  await removeGrantAndSecrets(ctx, name);
  // A symlink is removed, never followed: a path install's directory is the user's.
  await removeOwned(stageCustody(stage), ASIDE);
  const version = was.kind === 'link' ? was.version : previousLink !== undefined ? versionOfLink(ctx.paths, previousLink) : undefined;
  await dropVersionIfUnused(ctx.paths, version);
}

/**
 * Finish or undo the transaction recorded in a dead process's staging dir.
 * Returns a one-line description of what was done, or undefined if there was no journal.
 */
export async function recoverStage(ctx: Context, dead: DeadStage): Promise<string | undefined> {
  const journal = readStageJournal(dead) as Journal | undefined;
  if (journal === undefined) return undefined;
  const stage = dead.path;
  const lock = await loadStoreLock(ctx.paths);
  const entry = findEntry(lock, journal.name);
  if (journal.op === 'remove') {
    // A removal is always completed, from wherever it stopped.
    if (entry) await saveStoreLock(ctx.paths, { ...lock, entries: lock.entries.filter((e) => e.name !== journal.name) });
    try {
      await finishRemove(ctx, stage, journal.name, journal.previous && 'link' in journal.previous ? journal.previous.link : undefined);
    } catch (e) {
      // settings.toml still enables it and cannot be written: keep the package and the journal for later.
      if (!isYepError(e)) throw e;
      throw new YepError(e.code, e.message, { ...(e.hint ? { hint: e.hint } : {}), details: { ...e.details, pending: true }, cause: e });
    }
    return `completed an interrupted removal of ${journal.name}`;
  }
  const lockCommitted = journal.entry ? entry !== undefined && canonical(entry) === canonical(journal.entry) : entry?.content_hash === journal.newHash;
  if (journal.link === undefined) return recoverOlderPlace(ctx, stage, journal, lockCommitted);
  const target = packageDir(ctx.paths, journal.name);
  if (lockCommitted) {
    // The switch precedes the commit, so the new entry is in place; put it there if not (and if it still exists).
    if ((await linkTextAt(target)) !== journal.link && (journal.version === undefined || (await exists(join(ctx.paths.packagesDir, journal.version))))) {
      await swapLink(stage, target, journal.link, 'link.recover');
      await fsyncDir(ctx.paths.storeDir);
    }
    if (journal.grant) await saveApprovedGrant(ctx, journal.name, journal.grant);
    if (entry) await saveCustody(ctx, entry);
    await dropReplaced(ctx, stage, journal);
    return `completed an interrupted ${journal.intent ?? 'install'} of ${journal.name}`;
  }
  await rollbackPlace(ctx, stage, journal);
  return `rolled back an interrupted ${journal.intent ?? 'install'} of ${journal.name}`;
}

/** A journal of an older yep-ext (a tree renamed straight to <store>/<name>, no symlink swap). */
async function recoverOlderPlace(ctx: Context, stage: string, journal: Journal, lockCommitted: boolean): Promise<string> {
  // With the lock lost, the journal is left for the next holder: nothing is moved here.
  assertLockKept(ctx.paths);
  const target = packageDir(ctx.paths, journal.name);
  const old = asideOf(stage);
  const treeMovedIn = journal.tree !== undefined && !(await exists(journal.tree));
  if (treeMovedIn && lockCommitted && (await exists(target))) {
    if (journal.grant) await saveApprovedGrant(ctx, journal.name, journal.grant);
    return `completed an interrupted install of ${journal.name}`;
  }
  if (treeMovedIn) {
    await removeOwned(entryCustody(ctx.paths), journal.name);
    if (await exists(old)) renameSync(old, target);
  } else if ((await exists(old)) && !(await exists(target))) {
    renameSync(old, target);
  }
  await fsyncDir(ctx.paths.storeDir);
  return `rolled back an interrupted install of ${journal.name}`;
}
