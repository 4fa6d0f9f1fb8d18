/**
 * The one way yep-ext reads a file from a home or a package: state files (lock,
 * settings, connections, grants, keychain index, index cache, journals) and
 * package files (plugin.json, Cargo.toml). A FIFO there would block `open` or
 * `read` forever, a device could be endless, a directory or socket gives an
 * errno nobody can act on, and a dangling symlink would read as "missing" and
 * get a fresh file written through it. So: lstat first (a symlink is followed only
 * when the caller allows it, and only to a regular file), then open with
 * O_NONBLOCK (and O_NOFOLLOW when links are refused) and fstat the descriptor, so
 * a file swapped for a FIFO between the two checks still cannot block. Anything
 * but a regular file is a YepError (E_STATE unless the caller says otherwise)
 * naming the file and what it is.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { YepError, errnoCode, stateIoError, type ErrorCode } from '../errors.js';

export interface RegularFileOptions {
  /** Follow a symlink to a regular file (default true: the host reads through links too). */
  followSymlinks?: boolean;
  /** Refuse files larger than this many bytes (checked before reading, and while reading). */
  maxBytes?: number;
  /** Error code of a refusal (default E_STATE, exit 7). */
  code?: ErrorCode;
  /** What to do about it (default: move the file aside). */
  hint?: string;
  /** Read only the first this many bytes (a file's head: a `#!` line, a binary's magic); a longer file is no refusal (maxBytes is ignored). */
  head?: number;
}

/** What a non-regular file is, in words: "a FIFO (named pipe)", "a directory", ... */
export function describeFileKind(st: Stats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function linkTarget(file: string): string {
  try {
    return readlinkSync(file);
  } catch {
    return '?';
  }
}

function refusal(file: string, what: string, is: string, options: RegularFileOptions): YepError {
  return new YepError(options.code ?? 'E_STATE', `${what} ${file} is ${is}, not a regular file.`, {
    hint: options.hint ?? `yep-ext reads and writes only regular files there. Move it aside (mv "${file}" "${file}.bak") and run the command again.`,
    details: { file, is },
  });
}

/** True for the refusals above (the file is something other than a regular file). */
export function isFileKindRefusal(e: unknown): boolean {
  return e instanceof YepError && typeof e.details?.is === 'string';
}

export interface RegularFileInfo {
  /** The file's own stat (the target's, for a followed symlink). */
  stat: Stats;
  /** The link text when `file` is a symlink that was followed. */
  symlinkTarget?: string;
}

/**
 * Check, without opening it, that `file` is a regular file (or an allowed symlink
 * to one). Undefined when nothing is there; a refusal for anything else.
 */
export function inspectRegularFile(file: string, what: string, options: RegularFileOptions = {}): RegularFileInfo | undefined {
  let l: Stats | undefined;
  try {
    // Many of the files read this way are often absent (a policy file, the user's settings, a
    // memo): told without an exception, whose construction costs more than the lstat.
    l = lstatSync(file, { throwIfNoEntry: false });
  } catch (e) {
    // ENOTDIR: a component of the path is a file; nothing is there either.
    if (errnoCode(e) === 'ENOTDIR') return undefined;
    throw stateIoError('read', file, e);
  }
  if (l === undefined) return undefined;
  if (!l.isSymbolicLink()) {
    if (!l.isFile()) throw refusal(file, what, describeFileKind(l), options);
    return { stat: l };
  }
  const target = linkTarget(file);
  if (options.followSymlinks === false) throw refusal(file, what, `a symbolic link (to ${target})`, options);
  let s: Stats;
  try {
    s = statSync(file);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw refusal(file, what, `a dangling symbolic link (to ${target}, which does not exist)`, options);
    if (code === 'ELOOP') throw refusal(file, what, `a symbolic link loop (to ${target})`, options);
    throw stateIoError('read', file, e);
  }
  if (!s.isFile()) throw refusal(file, what, `a symbolic link to ${describeFileKind(s)} (${target})`, options);
  return { stat: s, symlinkTarget: target };
}

function tooBig(file: string, what: string, max: number, options: RegularFileOptions): YepError {
  return new YepError(options.code ?? 'E_STATE', `${what} ${file} is larger than ${max} bytes; refused.`, { details: { file, maxBytes: max } });
}

/**
 * The bytes of `file`, or undefined when it does not exist. Never blocks on a
 * FIFO or device; refuses (see the module comment) anything but a regular file.
 * Synchronous on purpose: these files are small, and `list` reads several per run.
 */
export function readRegularFileSync(file: string, what: string, options: RegularFileOptions = {}): Buffer | undefined {
  const info = inspectRegularFile(file, what, options);
  if (!info) return undefined;
  // A head read takes only the start: the size cap is for reading whole files.
  const max = options.head === undefined ? options.maxBytes : undefined;
  if (max !== undefined && info.stat.size > max) throw tooBig(file, what, max, options);
  let fd: number;
  try {
    fd = openSync(file, openFlags(options));
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT') return undefined; // removed since the lstat
    // Swapped since the lstat: a link (O_NOFOLLOW) or a socket (ENXIO). Describe what is there now.
    if (code === 'ELOOP' || code === 'ENXIO') inspectRegularFile(file, what, options);
    throw stateIoError('read', file, e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw refusal(file, what, describeFileKind(st), options);
    if (options.head !== undefined) {
      const buf = Buffer.alloc(options.head);
      return buf.subarray(0, readSync(fd, buf, 0, options.head, 0));
    }
    if (max !== undefined && st.size > max) throw tooBig(file, what, max, options);
    const chunks: Buffer[] = [];
    let total = 0;
    // Read to EOF rather than trusting st.size: the file may grow while we read. A buffer is
    // filled before the next is made, so the read that finds the end of a file read whole goes
    // into the first buffer's spare room: no second buffer per file (state files are read many
    // times a command, and each fresh 64 KiB buffer is memory the collector must reclaim).
    let buf = Buffer.allocUnsafe(Math.max(st.size + 1, 4096));
    let used = 0;
    for (;;) {
      if (used === buf.length) {
        chunks.push(buf);
        buf = Buffer.allocUnsafe(64 * 1024);
        used = 0;
      }
      const n = readSync(fd, buf, used, buf.length - used, null);
      if (n === 0) break;
      used += n;
      total += n;
      if (max !== undefined && total > max) throw tooBig(file, what, max, options);
    }
    if (used > 0 || chunks.length === 0) chunks.push(buf.subarray(0, used));
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } catch (e) {
    if (e instanceof YepError) throw e;
    throw stateIoError('read', file, e);
  } finally {
    closeSync(fd);
  }
}

/** readRegularFileSync as UTF-8 text (a BOM, if any, is kept). */
export function readRegularTextSync(file: string, what: string, options: RegularFileOptions = {}): string | undefined {
  return readRegularFileSync(file, what, options)?.toString('utf8');
}

/** O_NONBLOCK: a FIFO swapped in after the lstat opens at once instead of blocking (and fstat then refuses it). */
function openFlags(options: RegularFileOptions): number {
  return constants.O_RDONLY | constants.O_NONBLOCK | (options.followSymlinks === false ? constants.O_NOFOLLOW : 0);
}

/**
 * The asynchronous road, for files read in chunks (a download in a mirror, a binary to
 * hash): `file` open for reading with the same checks and refusals as readRegularFileSync
 * (lstat, O_NONBLOCK, fstat of the descriptor), or undefined when nothing is there. The
 * caller closes the handle; `stat` is the descriptor's own.
 */
export async function openRegularFile(file: string, what: string, options: RegularFileOptions = {}): Promise<{ handle: FileHandle; stat: Stats } | undefined> {
  const info = inspectRegularFile(file, what, options);
  if (!info) return undefined;
  const max = options.maxBytes;
  if (max !== undefined && info.stat.size > max) throw tooBig(file, what, max, options);
  let handle: FileHandle;
  try {
    handle = await open(file, openFlags(options));
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'ENXIO') inspectRegularFile(file, what, options);
    throw stateIoError('read', file, e);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw refusal(file, what, describeFileKind(st), options);
    if (max !== undefined && st.size > max) throw tooBig(file, what, max, options);
    return { handle, stat: st };
  } catch (e) {
    await handle.close();
    throw e instanceof YepError ? e : stateIoError('read', file, e);
  }
}
