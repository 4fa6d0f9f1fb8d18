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
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { YepError, stateIoError } from '../errors.js';
import { tempNameFor, sweepDeadTemps } from './temp-files.js';
import { writeHashed, type HashedWrite } from './hashed-write.js';
import { removeOwned, removeOwnedSync } from './custody.js';
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

/**
 * `replaceFile` for bytes in memory (every state file): the same calls in the same order, made
 * synchronously. A state write is a handful of short calls, and a round trip through libuv's
 * thread pool for each costs more than the calls themselves.
 */
function replaceFileSync(target: string, mode: number, bytes: Buffer, durable: boolean): void {
  const dir = dirname(target);
  const temp = join(dir, tempNameFor(basename(target)));
  let fd: number | undefined;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    fchmodSync(fd, mode);
    if (durable) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, target);
  } catch (e) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already failing: the first error is the one to report
      }
    }
    // Only the temp this call created (O_EXCL), through the one delete guard.
    try {
      removeOwnedSync({ base: dir, owned: [], names: { test: (n) => n === basename(temp) }, what: 'The directory' }, basename(temp));
    } catch {
      // left for the sweep of dead writers' temps
    }
    throw e;
  }
  if (durable) fsyncDirSync(dir);
}

/**
 * Temp file beside `target` (temp-files.ts names it after this process; in `tempDir`
 * instead when the caller names one on the same file system), created exclusively
 * with the final mode, written, given the final mode (fchmod: never left to the umask),
 * fsynced, renamed over `target`, and the directory fsynced. On failure the temp file
 * is removed; after a kill it is left for the sweep of dead writers' temps.
 */
async function replaceFile(
  target: string,
  mode: number,
  write: (fh: FileHandle, temp: string) => Promise<void>,
  check?: () => void,
  { tempDir = dirname(target), durable = true }: { tempDir?: string | undefined; durable?: boolean } = {},
): Promise<void> {
  const temp = join(tempDir, tempNameFor(basename(target)));
  let fh: FileHandle | undefined;
  try {
    fh = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
    await write(fh, temp);
    // The calls that change the disk on the main thread, as every other state write's
    // (replaceFileSync): the crash-point suite counts them per thread.
    fchmodSync(fh.fd, mode);
    if (durable) fsyncSync(fh.fd);
    await fh.close();
    fh = undefined;
    check?.();
    renameSync(temp, target);
  } catch (e) {
    await fh?.close().catch(() => {});
    // Only the temp this call created (O_EXCL), through the one delete guard.
    await removeOwned({ base: tempDir, owned: [], names: { test: (n) => n === basename(temp) }, what: 'The directory' }, basename(temp)).catch(() => {});
    throw e;
  }
  if (durable) fsyncDirSync(dirname(target));
}

/**
 * Copy `source` to `file` atomically, into the same temp-fsync-rename as `writeFileAtomic`,
 * with no comparison against what is there (callers decide that first). `source` is read
 * through the descriptor the regular-file guard checked (copyRegularInto): a FIFO, device
 * or symlink swapped in for it is refused, never waited on. `tempDir`: where the temp is
 * made, on the same file system as `file` (default: beside it).
 */
export async function copyFileAtomic(
  source: string,
  file: string,
  options: Pick<AtomicWriteOptions, 'mode' | 'what'> & { tempDir?: string; sourceWhat?: string } = {},
): Promise<void> {
  const info = assertReplaceable(file, options);
  const mode = options.mode ?? (info ? info.stat.mode & 0o777 : DEFAULT_MODE);
  await replaceFile(
    file,
    mode,
    async (fh) => {
      if (!(await copyRegularInto(source, fh, options.sourceWhat ?? 'The file to copy')))
        throw stateIoError('read', source, Object.assign(new Error('no such file'), { code: 'ENOENT' }));
    },
    undefined,
    { tempDir: options.tempDir },
  );
}

/**
 * Copy the regular file `source` into the open `to`, reading through the descriptor the one
 * regular-file guard opened and checked (read-regular-file.ts: lstat, O_NONBLOCK, fstat):
 * false when `source` is absent; a FIFO, device or directory is refused (exit 7).
 */
export async function copyRegularInto(source: string, to: FileHandle, what: string): Promise<boolean> {
  const opened = await openRegularFile(source, what);
  if (!opened) return false;
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await opened.handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return true;
      let done = 0;
      while (done < bytesRead) done += (await to.write(buf, done, bytesRead - done)).bytesWritten;
    }
  } finally {
    await opened.handle.close();
  }
}

/**
 * Write what `chunks` yields to `file` atomically, never holding it whole in memory
 * (a mirrored `.crate` can be large): the same temp-fsync-rename as
 * `writeFileAtomic`, with no comparison against what is there (callers decide
 * that first). The bytes are hashed as they are written (fs/hashed-write.ts): `check`
 * gets their size and SHA-256 after the last byte and before the rename; a throw
 * abandons the write and leaves `file` as it was.
 */
export async function writeStreamAtomic(
  file: string,
  chunks: AsyncIterable<Uint8Array>,
  options: AtomicWriteOptions & { check?: (written: HashedWrite) => void } = {},
): Promise<void> {
  const info = assertReplaceable(file, options);
  const mode = options.mode ?? (info ? info.stat.mode & 0o777 : DEFAULT_MODE);
  let written: HashedWrite | undefined;
  const write = async (fh: FileHandle): Promise<void> => {
    written = await writeHashed(fh.fd, chunks);
  };
  try {
    await replaceFile(file, mode, write, options.check ? () => options.check?.(written as HashedWrite) : undefined, { durable: options.durable !== false });
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
