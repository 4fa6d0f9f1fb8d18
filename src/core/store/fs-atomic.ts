/**
 * The only writer of state files (lock, settings, secrets, generated manifests).
 * Temp file in the same directory created with the final mode, fsync, rename,
 * fsync the directory: a crash leaves the old file or the new one, never a torn
 * or NUL-filled file (cargo#2836). Writing bytes identical to what is there is a
 * no-op, so unchanged state keeps its mtime. What is there must be a regular file
 * (a FIFO would block the comparison read, and a directory or device is nothing
 * to replace); a symlink is refused unless the caller opts in (settings.toml in a
 * dotfile setup), because write-file-atomic would write into the link's target.
 */
import { open, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { YepError, stateIoError } from '../errors.js';
import { inspectRegularFile, isFileKindRefusal, readRegularFileSync, type RegularFileInfo } from './read-regular-file.js';

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
    // Loaded on first write: it pulls in worker_threads and signal-exit, and
    // read-only commands (list) should not pay for that at start-up.
    const { default: writeFileAtomicCb } = await import('write-file-atomic');
    await new Promise<void>((resolve, reject) => {
      writeFileAtomicCb(file, bytes, { fsync: true, mode }, (err) =>
        err ? reject(err) : resolve(),
      );
    });
    await fsyncDir(dirname(file));
  } catch (e) {
    throw stateIoError('write', file, e);
  }
  return true;
}

/** fsync a directory so a rename inside it survives power loss (best effort off Linux). */
export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // Some platforms (Windows) cannot open directories; the rename is still atomic.
  } finally {
    await fh?.close();
  }
}

/**
 * Remove temp files write-file-atomic left beside `file` after a kill -9
 * (`<base>.<digits>` in the same directory). Called before each write session.
 */
export async function sweepAtomicTemps(file: string): Promise<void> {
  const dir = dirname(file);
  const base = basename(file);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return;
  }
  const pattern = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.\\d+$`);
  await Promise.all(entries.filter((e) => pattern.test(e)).map((e) => rm(join(dir, e), { force: true })));
}
