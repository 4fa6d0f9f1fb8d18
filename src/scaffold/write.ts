/**
 * The one effectful step of `new`: put a rendered file map on disk as a new
 * directory, all or nothing. Everything is written into a hidden sibling
 * directory first and renamed into place at the end, so a failure (or a kill)
 * at any point leaves either no package or the whole package, never half of one.
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { checkpoint, type CheckpointHost } from '../core/fs/checkpoint.js';
import { removeOwned, type Custody, makeDirs } from '../core/fs/custody.js';
import { YepError, errnoCode, stateIoError } from '../core/errors.js';
import { sanitize } from '../core/text/sanitize.js';
import type { ScaffoldFiles } from './render.js';

export interface WriteOptions {
  /** The crash-test pause point `new-before-rename` (ctx.checkpoint; see core/fs/checkpoint.ts). */
  checkpoint?: CheckpointHost['checkpoint'];
}

function assertRelative(path: string): void {
  const parts = path.split('/');
  if (path === '' || path.startsWith('/') || path.includes('\\') || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`scaffold: refusing file path ${JSON.stringify(path)}`);
  }
}

function conflict(target: string, why: string): YepError {
  return new YepError('E_CONFLICT', `Refusing to write into ${sanitize(target)}: ${why}.`, {
    hint: 'Choose another name, another --dir, or move the existing one aside. `new` only writes into a new or empty directory.',
  });
}

function writeFailure(parent: string, e: unknown): YepError {
  // The one I/O mapping (a full disk names the directory); only the way out of a permission problem is new's own.
  const io = stateIoError('write the package in', sanitize(parent), e, sanitize(parent));
  const code = errnoCode(e);
  const hint =
    code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
      ? `Check that ${parent} is writable by you, or pass --dir with a directory you can write to.`
      : io.hint;
  return new YepError('E_STATE', `${io.message}. Nothing was left behind.`, {
    cause: e,
    ...(hint ? { hint } : {}),
    ...(io.details ? { details: io.details } : {}),
  });
}

/**
 * Whether `target` may be created: absent, or an empty directory (replaced).
 * Throws E_CONFLICT for anything else.
 */
async function checkTarget(target: string): Promise<'absent' | 'empty-dir'> {
  let st: Stats;
  try {
    st = await lstat(target);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return 'absent';
    throw e;
  }
  if (st.isSymbolicLink()) throw conflict(target, 'it is a symbolic link');
  if (!st.isDirectory()) throw conflict(target, 'a file of that name exists');
  const entries = await readdir(target);
  if (entries.length > 0) {
    const shown = entries
      .slice(0, 3)
      .map((n) => sanitize(n, { max: 40 }))
      .join(', ');
    throw conflict(target, `the directory is not empty (${shown}${entries.length > 3 ? `, … ${entries.length} entries` : ''})`);
  }
  return 'empty-dir';
}

const TEMP_MARK = '.yep-new-';
/** A temp directory older than this was left by a killed run (a live run renames its own within seconds). */
const STALE_TEMP_MS = 10 * 60 * 1000;

function tempName(target: string): string {
  return `.${basename(target)}${TEMP_MARK}${randomBytes(6).toString('hex')}`;
}

/** What `new` may delete in the user's directory: its own temp siblings of `target` (fs/custody.ts). */
function tempCustody(parent: string, target: string): Custody {
  const pattern = new RegExp(`^\\.${basename(target).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${TEMP_MARK.replace(/\./g, '\\.')}[0-9a-f]{12}$`);
  return { base: parent, owned: [], names: pattern, what: 'The directory' };
}

/** Remove temp siblings a killed `new` of the same name left behind (only ours, only stale directories). */
async function sweepStaleTemps(parent: string, target: string): Promise<void> {
  const custody = tempCustody(parent, target);
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names.filter((n) => custody.names.test(n))) {
    await removeOwned(custody, name, { keep: (st) => !st.isDirectory() || Date.now() - st.mtimeMs <= STALE_TEMP_MS }).catch(() => {});
  }
}

/** Write `files` as the new directory `target`. */
export async function writeScaffold(target: string, files: ScaffoldFiles, options: WriteOptions = {}): Promise<void> {
  const paths = Object.keys(files).sort();
  paths.forEach(assertRelative);
  const parent = dirname(target);
  try {
    if (!(await stat(parent)).isDirectory())
      throw new YepError('E_USAGE', `${sanitize(parent)} is not a directory.`, { hint: 'Pass --dir with an existing directory.' });
  } catch (e) {
    if (errnoCode(e) === 'ENOENT')
      throw new YepError('E_NOT_FOUND', `The directory ${sanitize(parent)} does not exist.`, {
        hint: `Create it first (mkdir -p ${sanitize(parent)}), or pass another --dir.`,
      });
    throw e;
  }
  await checkTarget(target);
  await sweepStaleTemps(parent, target);

  // mkdir (not mkdtemp, which makes 0700): the package directory gets the usual umask-derived mode.
  const temp = join(parent, tempName(target));
  try {
    await mkdir(temp);
  } catch (e) {
    throw writeFailure(parent, e);
  }
  try {
    for (const rel of paths) {
      const file = files[rel]!;
      const abs = join(temp, ...rel.split('/'));
      // 0o777 as mkdir's default: the umask gives the package's directories their usual mode.
      await makeDirs(dirname(abs), 0o777);
      await writeFile(abs, file.content, { flag: 'wx', mode: file.mode });
      // writeFile's mode is narrowed by the umask; the package's modes are part of what it is (bin/ must be 0755).
      await chmod(abs, file.mode);
    }
    await checkpoint(options, 'new-before-rename');
    // Checked again: something may have appeared in the target while we wrote.
    const state = await checkTarget(target);
    try {
      await rename(temp, target);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw conflict(target, 'it was filled while the package was being written');
      // Some systems will not rename over an existing (empty) directory.
      if (state === 'empty-dir' && (code === 'EPERM' || code === 'EACCES' || code === 'EISDIR')) {
        await rmdir(target);
        await rename(temp, target);
      } else throw e;
    }
  } catch (e) {
    await removeOwned(tempCustody(parent, target), basename(temp)).catch(() => {});
    throw e instanceof YepError ? e : writeFailure(parent, e);
  }
}
