/**
 * The one answer to "may yep-ext delete this, or write into this directory?".
 *
 * yep-ext keeps its own things in places it shares with the user, the host and
 * other tools: dot-directories of the store (package versions, staging, approved
 * grants, stat signatures, caches), temp files beside state files in the config
 * directory, the shared download cache, a mirror directory, a scaffold's temp
 * directory. A dotfiles manager that replaces one of those directories with a
 * symlink, or a stray file that lands in one (a `Thumbs.db`), must never make a
 * sweep delete the user's files or a write replace them.
 *
 * So every place is described as a `Custody`: a `base` the user or the platform
 * names (the store, the config directory, `YEP_EXT_CACHE_DIR`, a mirror: it may be
 * a symlink, followed as the host follows it), the directories below it that
 * yep-ext made (`owned`: each must be a real directory of this user, checked with
 * lstat, never followed), and the `names` yep-ext gives what it keeps in the
 * innermost one. `checkCustody` is the guard; `removeOwned` (every delete) and
 * `makeOwnedDir` (before every write into an owned directory) are its only doors.
 * A directory that fails the guard is refused (E_STATE, exit 7) and nothing is
 * touched; an entry whose name is not one of yep-ext's is foreign and left alone.
 */
import { lstatSync, mkdirSync, readdirSync, readlinkSync, rmdirSync, rmSync, statSync, unlinkSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { YepError, errnoCode, stateIoError } from '../errors.js';
import { assertLockKeptUnder } from './lock-hold.js';

export interface Custody {
  /** A directory the user or the platform names; followed when it is a symlink. */
  base: string;
  /** Directories below `base` that yep-ext made, outermost first: each must be a real directory of this user. */
  owned: readonly string[];
  /** The names yep-ext gives what it keeps in the innermost directory; any other name there is foreign. */
  names: NameRule;
  /** How a refusal names the innermost directory ("The package versions directory"). */
  what: string;
  /** What to do instead, appended to a refusal's hint. */
  hint?: string;
  /**
   * A directory shared between users by design (the download cache baked into an image, a
   * mirror on a share): its directories may belong to another user; a link is still refused.
   */
  shared?: boolean;
}

/** A RegExp, or any test of one name. */
interface NameRule {
  test(name: string): boolean;
}

/** Any single path component: for a private directory this run made, whose every entry is its own. */
export const ANY_NAME = /^(?!\.{1,2}$)[^/\\]+$/;

/** The innermost directory of `c`. */
export function custodyDir(c: Custody): string {
  return join(c.base, ...c.owned);
}

const STAGE_NAMES = /^\d+-[0-9a-z]+-\d+-[A-Za-z0-9_-]*(?:\.pending)?$/;

/**
 * The custody of `path`, something a run made for its own work: a stage in the store's
 * `.yep-staging` (which must be yep-ext's), a dry run's directory in the system's temp
 * directory (`yep-ext-plan-*`), or anything inside such a directory (which must then be a
 * real directory: a download, an unpacked tree, a scratch checkout).
 */
function workCustody(path: string): Custody {
  const parent = dirname(path);
  const name = basename(path);
  if (basename(parent) === '.yep-staging') return { base: dirname(parent), owned: [basename(parent)], names: STAGE_NAMES, what: 'The staging directory' };
  if (parent === tmpdir()) return { base: parent, owned: [], names: /^yep-ext-plan-[A-Za-z0-9]{6}$/, what: 'The temp directory' };
  return { base: dirname(parent), owned: [basename(parent)], names: { test: (n) => n === name }, what: 'The working directory' };
}

function ownerMismatch(st: Stats): boolean {
  // Root may act on any user's home (provisioning images, then chown); otherwise the directory must be this user's.
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  return uid !== undefined && uid !== 0 && st.uid !== uid;
}

function refusal(c: Custody, dir: string, is: string, details: Record<string, unknown>): YepError {
  return new YepError(
    'E_STATE',
    `${c.what} ${dir} is ${is}. yep-ext deletes from and writes into it, so it must be a real directory that yep-ext made; it will not touch it, and nothing was changed.`,
    {
      hint: `Move it aside (mv "${dir}" "${dir}.moved") and run the command again: yep-ext makes the directory anew.${c.hint ? ` ${c.hint}` : ''}`,
      details: { dir, is, ...details },
    },
  );
}

/**
 * The guard. Checks each directory of `c.owned` with lstat: a symbolic link, anything
 * but a directory, or another user's directory is refused (E_STATE, exit 7). Returns
 * `missing` when the chain is not there yet (nothing to delete; `makeOwnedDir` makes it
 * before a write), else whether `name` (when given) is one yep-ext gives its entries.
 */
export function checkCustody(c: Custody, name?: string): 'ours' | 'foreign' | 'missing' {
  let dir = c.base;
  for (const part of c.owned) {
    dir = join(dir, part);
    let st: Stats | undefined;
    try {
      // A chain not made yet is a common answer: told without an exception, whose construction costs more than the lstat.
      st = lstatSync(dir, { throwIfNoEntry: false });
    } catch (e) {
      const code = errnoCode(e);
      // ENOTDIR: the base is under a file (each owned level above was checked a directory): nothing
      // of ours is there, and making it fails with the caller's own report ("Could not create the store").
      if (code === 'ENOTDIR') return 'missing';
      throw stateIoError('read', dir, e);
    }
    if (st === undefined) return 'missing';
    if (st.isSymbolicLink()) {
      let target = '?';
      try {
        target = readlinkSync(dir);
      } catch {
        // gone meanwhile: still not ours
      }
      throw refusal(c, dir, `a symbolic link (to ${target})`, { target });
    }
    if (!st.isDirectory()) throw refusal(c, dir, 'not a directory', {});
    if (!c.shared && ownerMismatch(st)) throw refusal(c, dir, `owned by another user (uid ${st.uid})`, { uid: st.uid });
  }
  if (name === undefined) return 'ours';
  return c.names.test(name) ? 'ours' : 'foreign';
}

/**
 * Whether every directory of `c.owned` is a real directory of yep-ext's (the guard passes), for a
 * reader that must not look through one that is not (a stage linked to the user's directory): a
 * refusal is `false` here, not thrown; nothing there yet is `false` too.
 */
export function isOwnedDir(c: Custody): boolean {
  try {
    return checkCustody(c) === 'ours';
  } catch (e) {
    if (e instanceof YepError) return false;
    throw e;
  }
}

/**
 * Delete `name` from `c`'s directory when the guard says it is yep-ext's: a directory
 * recursively (a symlink inside it is removed, never followed), a symlink as a link.
 * `keep` may veto what is there (a caller that deletes only directories, say). Returns
 * whether something was removed; a foreign name, or nothing there, removes nothing.
 */
export async function removeOwned(c: Custody, name: string, options: { keep?: (st: Stats) => boolean } = {}): Promise<boolean> {
  const target = ownedTarget(c, name, options);
  if (!target) return false;
  if (target.st.isDirectory()) await removeTree(target.path);
  else rmSync(target.path, { force: true, maxRetries: 2 });
  return true;
}

/** `removeOwned`, for a caller that is itself synchronous and removes a file (a temp): no tree to pace. */
export function removeOwnedSync(c: Custody, name: string, options: { keep?: (st: Stats) => boolean } = {}): boolean {
  const target = ownedTarget(c, name, options);
  if (!target) return false;
  rmSync(target.path, { recursive: true, force: true, maxRetries: 2 });
  return true;
}

/** What `removeOwned` may remove: `name` in `c`'s directory when the guard says it is ours, and not kept. */
function ownedTarget(c: Custody, name: string, options: { keep?: (st: Stats) => boolean }): { path: string; st: Stats } | undefined {
  if (name.includes('/') || name.includes('\\') || name === '' || name === '.' || name === '..') return undefined;
  if (checkCustody(c, name) !== 'ours') return undefined;
  const path = join(custodyDir(c), name);
  // A store whose installer lock this process lost may be another's now: nothing in it is deleted.
  assertLockKeptUnder(path);
  // Synchronous calls throughout this module: each is short, and a round trip through libuv's
  // thread pool per call costs more than the call itself (every command makes and removes these).
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  return options.keep?.(st) ? undefined : { path, st };
}

/** Entries removed between turns of the event loop (removeTree). */
const ENTRIES_PER_TURN = 64;

/**
 * Delete the directory `dir` and everything in it, never following a symlink (a link is
 * unlinked). The kind each entry has in its directory listing says how to remove it, so a
 * stage (a journal, a link, an unpacked tree) costs one listing per directory and one call per
 * entry, where rmSync tries rmdir first and lstat's every entry. Anything unexpected
 * (a file system whose listings carry no kinds, a busy file) goes to rmSync, which finishes
 * the job with its retries. Every ENTRIES_PER_TURN entries the event loop gets a turn: a
 * large tree is removed under the installer lock, whose heartbeat is a timer, and a lock not
 * refreshed for a few seconds is taken over by a waiting process as a dead one's.
 */
async function removeTree(dir: string, turn = { left: ENTRIES_PER_TURN }): Promise<void> {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (--turn.left <= 0) {
        turn.left = ENTRIES_PER_TURN;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const p = join(dir, e.name);
      // Asked again right before descending (one lstat per directory, not per file): a directory
      // swapped for a link since the listing is unlinked as a link, never listed through.
      if (e.isDirectory() && lstatSync(p).isDirectory()) await removeTree(p, turn);
      else if (e.isFile() || e.isSymbolicLink() || e.isDirectory()) unlinkSync(p);
      else rmSync(p, { recursive: true, force: true, maxRetries: 2 });
    }
    rmdirSync(dir);
  } catch {
    rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}

/** `removeOwned` of something a run made for its own work (`workCustody`): a download, an unpacked tree, a stage. */
export async function removeWork(path: string): Promise<boolean> {
  return removeOwned(workCustody(path), basename(path));
}

/**
 * Make the directories of `c` that are missing, one level at a time with `mode` (never
 * following a symlink: each level is checked by the guard first). Returns the innermost.
 * `base` must exist, or is made with its parents (the store, the cache root).
 */
export async function makeOwnedDir(c: Custody, mode = 0o755): Promise<string> {
  if (checkCustody(c) === 'ours') return custodyDir(c);
  assertLockKeptUnder(custodyDir(c));
  // Only the levels that are missing are made: a mkdir that changes nothing is still a system call (a crash point).
  if (!lstatSync(c.base, { throwIfNoEntry: false })) await makeDirs(c.base, mode);
  let dir = c.base;
  for (const part of c.owned) {
    dir = join(dir, part);
    if (lstatSync(dir, { throwIfNoEntry: false })) continue;
    try {
      mkdirSync(dir, { mode });
    } catch (e) {
      if (errnoCode(e) !== 'EEXIST') throw e;
    }
  }
  // Checked again: a level made meanwhile by someone else is lstat'ed as the guard does (a link is refused).
  checkCustody(c);
  return dir;
}

/**
 * The one `mkdir -p`: each level it makes gets `mode` (never left to the umask), and it
 * says why it failed, level by level, where a recursive mkdir says ENOENT for a read-only
 * mount (EROFS) and hides a lasting reason. A directory already there costs one stat and
 * no mkdir (a mkdir that changes nothing is still a system call: a crash point); something
 * else by that name is refused (EEXIST), never taken for done.
 */
export async function makeDirs(dir: string, mode = 0o755): Promise<void> {
  let st: Stats | undefined;
  try {
    st = statSync(dir, { throwIfNoEntry: false });
  } catch {
    st = undefined;
  }
  if (st?.isDirectory()) return;
  makeLevels(dir, mode);
}

function makeLevels(dir: string, mode: number): void {
  const made = (e: unknown): boolean => errnoCode(e) === 'EEXIST' && statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
  try {
    mkdirSync(dir, { mode });
  } catch (e) {
    if (made(e)) return;
    if (errnoCode(e) !== 'ENOENT' || dirname(dir) === dir) throw e;
    makeLevels(dirname(dir), mode);
    try {
      mkdirSync(dir, { mode });
    } catch (again) {
      if (!made(again)) throw again;
    }
  }
}
