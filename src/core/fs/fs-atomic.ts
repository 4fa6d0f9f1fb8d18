/**
 * The only atomic writer (state files: lock, settings, secrets, generated manifests;
 * the mirror's files; the download cache's content).
 * Temp file in the same directory created with the final mode, fsync, rename,
 * fsync the directory: a crash leaves the old file or the new one, never a torn
 * or NUL-filled file (cargo#2836). The temp file names its writer's pid
 * (temp-files.ts), so crash recovery removes a dead writer's temp (which may
 * hold a secret) and never a live one's. Writing bytes identical to what is there is a
 * no-op, so unchanged state keeps its mtime. What is there must be a regular file
 * (a FIFO would block the comparison read, and a directory or device is nothing
 * to replace); a symlink is refused unless the caller opts in (settings.toml in a
 * dotfile setup), because the write would replace the link's target.
 */
import { closeSync, constants, fchmodSync, fsyncSync, openSync, realpathSync, renameSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { YepError, stateIoError } from '../errors.js';
import { tempNameFor, sweepDeadTemps } from './temp-files.js';
import { writeHashed, type HashedWrite } from './hashed-write.js';
import { removeOwnedSync } from './custody.js';
import { inspectRegularFile, isFileKindRefusal, openRegularFile, readRegularFileSync, type RegularFileInfo } from './read-regular-file.js';

export interface AtomicWriteOptions {
  /** File mode to write; default: an existing file's mode, else 0644 (never left to the umask). */
  mode?: number;
  /**
   * `follow`: write into the regular file a symlink points at (the link stays).
   * Default `refuse`: a symlink is an E_STATE error naming link and target.
   */
  symlinks?: 'refuse' | 'follow';
  /** How messages name the file: "The lockfile", "The settings file". */
  what?: string;
  /**
   * Default true: the file and its directory are fsynced, so the write survives power loss.
   * False only for a cache that checks itself when read (the lock's memo, a stat signature):
   * after power loss it may be the old file, or unreadable, and its reader then does the work
   * it saves; the rename is still atomic, and a temp left behind is swept as a dead writer's.
   */
  durable?: boolean;
}

const DEFAULT_MODE = 0o644;

/**
 * Check that `file` may be replaced: missing, a regular file, or (with `follow`) a
 * symlink to one. Returns what is there. Callers that must not fail half-way call
 * this before their first change (the lock before a package is moved).
 */
export function assertReplaceable(file: string, options: Pick<AtomicWriteOptions, 'symlinks' | 'what'> = {}): RegularFileInfo | undefined {
  const what = options.what ?? 'The file';
  const info = inspectRegularFile(file, what, { followSymlinks: true });
  if (info?.symlinkTarget !== undefined && options.symlinks !== 'follow') {
    throw new YepError('E_STATE', `${what} ${file} is a symbolic link (to ${info.symlinkTarget}); yep-ext will not write through it.`, {
      hint: `Replace the link with a plain file (cp --remove-destination "$(readlink -f "${file}")" "${file}"), or remove it, then run the command again.`,
      details: { file, target: info.symlinkTarget },
    });
  }
  return info;
}

/** Write `data` to `file` atomically. Returns false when the content was already identical. */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<boolean> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
  let mode = options.mode;
  const info = assertReplaceable(file, options);
  if (info) {
    const existingMode = info.stat.mode & 0o777;
    mode ??= existingMode;
    try {
      const current = readRegularFileSync(file, options.what ?? 'The file');
      if (current?.equals(bytes) && existingMode === mode) return false;
    } catch (e) {
      if (isFileKindRefusal(e)) throw e;
      // Unreadable (EACCES...): fall through and write.
    }
  }
  mode ??= DEFAULT_MODE;
  try {
    // A followed symlink (settings.toml in a dotfile setup): replace the file it points at, keep the link.
    const target = info?.symlinkTarget !== undefined ? realpathSync(file) : file;
    replaceFileSync(target, mode, bytes, options.durable !== false);
  } catch (e) {
    throw stateIoError('write', file, e);
  }
  return true;
}

/** A temp file beside its target (or in a `tempDir` on the same file system), open for writing. */
interface Temp {
  fd: number | undefined;
  path: string;
  dir: string;
}

/**
 * Create the temp for `target` exclusively (O_EXCL: never someone else's file; O_NOFOLLOW: never
 * through a link), with the final mode; temp-files.ts names it after this process.
 */
function openTemp(target: string, mode: number, dir: string): Temp {
  const path = join(dir, tempNameFor(basename(target)));
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  return { fd, path, dir };
}

/**
 * The temp's bytes are written: give it the final mode (fchmod: never left to the umask), fsync
 * it, close it, rename it over `target` and fsync the directory. Every call
 * that changes the disk is made synchronously on the main thread: a state write is a handful of
 * short calls, and a round trip through libuv's thread pool for each costs more than the call
 * (the crash-point suite counts them per thread).
 */
function sealTemp(temp: Temp, target: string, mode: number, durable: boolean): void {
  const fd = temp.fd as number;
  fchmodSync(fd, mode);
  if (durable) fsyncSync(fd);
  temp.fd = undefined;
  closeSync(fd);
  renameSync(temp.path, target);
  if (durable) fsyncDirSync(dirname(target));
}

/** After a failure: close the temp and remove it (only it, through the one delete guard); a kill leaves it for the sweep of dead writers' temps. */
function discardTemp(temp: Temp): void {
  if (temp.fd !== undefined) {
    try {
      closeSync(temp.fd);
    } catch {
      // already failing: the first error is the one to report
    }
  }
  const name = basename(temp.path);
  try {
    removeOwnedSync({ base: temp.dir, owned: [], names: { test: (n) => n === name }, what: 'The directory' }, name);
  } catch {
    // left for the sweep of dead writers' temps
  }
}

/** Replace `target` with `bytes` in memory (every state file): temp, write, seal. */
function replaceFileSync(target: string, mode: number, bytes: Buffer, durable: boolean): void {
  const temp = openTemp(target, mode, dirname(target));
  try {
    const fd = temp.fd as number;
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    sealTemp(temp, target, mode, durable);
  } catch (e) {
    discardTemp(temp);
    throw e;
  }
}

/**
 * Replace `target` with what `write` puts into the temp's descriptor (a stream, a copy): the same
 * temp and seal as `replaceFileSync`; a throw from `write` (a copy's check) leaves `target` as it was.
 */
async function replaceFile(
  target: string,
  mode: number,
  write: (fd: number) => Promise<void>,
  { tempDir = dirname(target), durable = true }: { tempDir?: string | undefined; durable?: boolean } = {},
): Promise<void> {
  const temp = openTemp(target, mode, tempDir);
  try {
    await write(temp.fd as number);
    sealTemp(temp, target, mode, durable);
  } catch (e) {
    discardTemp(temp);
    throw e;
  }
}

/**
 * Copy `source` to `file` atomically, into the same temp-fsync-rename as `writeFileAtomic`,
 * with no comparison against what is there (callers decide that first). `source` is read
 * through the descriptor the regular-file guard checked (copyRegularInto): a FIFO, device
 * or symlink swapped in for it is refused, never waited on. The copy is hashed as it is
 * written; `check` judges its digest before the rename. `tempDir`: where the temp is
 * made, on the same file system as `file` (default: beside it).
 */
export async function copyFileAtomic(
  source: string,
  file: string,
  options: Pick<AtomicWriteOptions, 'mode' | 'what'> & {
    tempDir?: string;
    sourceWhat?: string;
    /** Judges the copy's size and SHA-256 before it is renamed into place; a throw leaves `file` as it was. */
    check?: (written: HashedWrite) => void;
  } = {},
): Promise<void> {
  const info = assertReplaceable(file, options);
  const mode = options.mode ?? (info ? info.stat.mode & 0o777 : DEFAULT_MODE);
  await replaceFile(
    file,
    mode,
    async (fd) => {
      const copied = await copyRegularInto(source, fd, options.sourceWhat ?? 'The file to copy');
      if (!copied) throw stateIoError('read', source, Object.assign(new Error('no such file'), { code: 'ENOENT' }));
      options.check?.(copied);
    },
    { tempDir: options.tempDir },
  );
}

/**
 * Copy the regular file `source` into the open file `fd`, reading through the descriptor the one
 * regular-file guard opened and checked (read-regular-file.ts: lstat, O_NONBLOCK, fstat), and
 * hashing the bytes as they are written (the one hash-while-writing stream, hashed-write.ts):
 * their size and SHA-256, or undefined when `source` is absent; a FIFO, device or directory is
 * refused (exit 7).
 */
export async function copyRegularInto(source: string, fd: number, what: string): Promise<HashedWrite | undefined> {
  const opened = await openRegularFile(source, what);
  if (!opened) return undefined;
  const { handle } = opened;
  // One buffer, reused: writeHashed takes each chunk in before it asks for the next.
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  }
  try {
    return await writeHashed(fd, chunks());
  } finally {
    await handle.close();
  }
}

/**
 * Write what `chunks` yields to `file` atomically, never holding it whole in memory
 * (a mirrored `.crate` can be large): the same temp-fsync-rename as
 * `writeFileAtomic`, with no comparison against what is there (callers decide
 * that first). The chunks are written in batches by the one hash-while-writing writer
 * (fs/hashed-write.ts); a throw abandons the write and leaves `file` as it was.
 */
export async function writeStreamAtomic(file: string, chunks: AsyncIterable<Uint8Array>, options: AtomicWriteOptions = {}): Promise<void> {
  const info = assertReplaceable(file, options);
  const mode = options.mode ?? (info ? info.stat.mode & 0o777 : DEFAULT_MODE);
  const write = async (fd: number): Promise<void> => {
    await writeHashed(fd, chunks);
  };
  try {
    await replaceFile(file, mode, write, { durable: options.durable !== false });
  } catch (e) {
    throw e instanceof YepError ? e : stateIoError('write', file, e);
  }
}

/** fsync a directory so a rename inside it survives power loss (best effort off Linux). */
export async function fsyncDir(dir: string): Promise<void> {
  fsyncDirSync(dir);
}

function fsyncDirSync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms (Windows) cannot open directories; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Remove the temp files that killed writers left beside `file` (only yep-ext's own names, temp-files.ts). */
export async function sweepAtomicTemps(file: string): Promise<void> {
  await sweepDeadTemps(dirname(file), { base: basename(file) });
}
