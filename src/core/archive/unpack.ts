/**
 * The one strict archive reader: a `.crate` (gzip around a tar) or a prebuilt binary's
 * tar (gzip'd or plain) unpacked into a fresh directory, under the policy in
 * docs/unpack.md: regular files and directories only, no path tricks or collisions,
 * capped size, count, depth, path length and time, normalised modes; a crate's entries
 * all under `{name}-{version}/` (stripped), a binary archive's anywhere (its root rule is
 * the one parameter, unpack-policy.ts). The first violation rejects the whole archive
 * and removes everything written so far.
 *
 * Shape, chosen by measurement (scripts/bench-unpack.mjs, `npm run bench`):
 * node:zlib inflates on the thread pool while this module parses each chunk
 * synchronously; files up to 256 KiB are created, for a crate of 2 MiB or more, on
 * one worker thread in batches (archive/worker-writer.ts), otherwise on the pool a
 * few at a time (archive/file-writer.ts, callbacks, bounded queue); directories and
 * bigger files with sync calls on the main thread.
 * node-tar's default async extraction pays a promise/stream round trip per file
 * and is several times slower than GNU tar on 5,000 small files.
 */
import { removeWork } from '../fs/custody.js';
import { mkdirSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createGunzip, type Gunzip } from 'node:zlib';
import { checkpoint, type CheckpointHost } from '../fs/checkpoint.js';
import { YepError, errnoCode, stateIoError } from '../errors.js';
import { ContentHashStream } from '../package/content-hash-stream.js';
import { sanitize } from '../text/sanitize.js';
import { TarExtractor, showPath, type ExtractLimits, type KeepFile, type OtherKinds } from './tar-extract.js';
import { BusyMeter } from './busy-meter.js';
import { TarFormatError } from './tar-header.js';
import { PolicyViolation } from './unpack-policy.js';
import { ZipError, unzipInto } from './zip-read.js';

export interface UnpackLimits extends ExtractLimits {
  /** Overall deadline for the whole unpack (one node-tar extraction in ~300 hung forever). */
  timeoutMs: number;
}

const MiB = 1024 * 1024;
/** Read and inflate in 1 MiB chunks (measured: Node's zlib then inflates faster than `gzip -dc`). */
const CHUNK = MiB;
/** Compressed bytes handed to zlib at a time (~0.2 MiB of tar for source text). */
const INFLATE_SLICE = 32 * 1024;
/** With the worker thread, the slice handed to zlib at a time (~0.4 MiB of source text: below the worker's in-flight cap). */
const WORKER_SLICE = 64 * 1024;
/**
 * Crates from this size (compressed) have their small files created on one worker thread
 * (archive/worker-writer.ts); smaller ones on the thread pool, where the worker's start-up
 * (a Node isolate of its own) would cost more than it saves.
 */
const WORKER_MIN_CRATE = 2 * MiB;

const DEFAULT_UNPACK_LIMITS: Readonly<Omit<UnpackLimits, 'maxTotalBytes'>> = {
  maxEntries: 100_000,
  maxDepth: 64,
  maxPathBytes: 1024,
  timeoutMs: 120_000,
};

/** The effective limits: defaults, cargo's size rule, then any overrides. */
export function unpackLimits(compressedSize: number, overrides: Partial<UnpackLimits> = {}): UnpackLimits {
  const size = Number.isFinite(compressedSize) && compressedSize > 0 ? compressedSize : 0;
  return {
    ...DEFAULT_UNPACK_LIMITS,
    maxTotalBytes: Math.max(512 * MiB, 20 * size),
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  };
}

export interface UnpackOptions {
  crateName: string;
  version: string;
  /** Size of the verified `.crate` file, for the total-size cap. */
  compressedSize: number;
  signal?: AbortSignal;
  limits?: Partial<UnpackLimits>;
  /** The crash-test pause point `unpack:mid` (ctx.checkpoint; see checkpoint.ts). */
  checkpoint?: CheckpointHost['checkpoint'];
}

export interface ArchiveOptions extends Omit<UnpackOptions, 'crateName' | 'version'> {
  /** What is unpacked, for messages: `demo@1.0.0`. */
  label: string;
  /** The directory every entry must be under (stripped): a crate's `{name}-{version}`; '' for none (a binary's archive). */
  root: string;
  /** gzip around a tar (a `.crate`, a `.tar.gz`), a plain tar, or a zip (read whole: a binary's archive, capped by its download). */
  format: 'tar.gz' | 'tar' | 'zip';
  /** Which files are written (all when absent); the others are checked all the same, then read past. */
  keep?: KeepFile;
  /** Links, devices and FIFOs: refused (the default), or read past and never written (unpack-policy.ts). */
  otherKinds?: OtherKinds;
  /** The hint of a refusal: what the reader accepts, and whom to tell. */
  hint: string;
}

/**
 * Create `into` (it must not exist; its parent must) and extract the crate archive
 * into it with the `{crateName}-{version}/` prefix stripped. Throws
 * YepError('E_UNSAFE_PACKAGE') on the first policy violation or malformed byte,
 * after removing `into`; nothing is ever written outside `into`.
 *
 * Returns the content hash of the files written, fed as they were written: a
 * caller that adds a file to the tree names it (`addFile`) before `digest(into)`.
 */
export function unpackCrate(archiveFile: string, into: string, opts: UnpackOptions): Promise<ContentHashStream> {
  const { crateName, version, ...rest } = opts;
  const root = `${crateName}-${version}`;
  return unpackArchive(archiveFile, into, {
    ...rest,
    label: `${crateName}@${version}`,
    root,
    format: 'tar.gz',
    hint: `yep-ext installs only archives whose entries are plain files and directories under ${root}/ (see docs/unpack.md). Nothing was installed; report the problem to the crate's authors.`,
  });
}

/**
 * Create `into` (it must not exist; its parent must) and extract the archive into it
 * under the one policy, the root rule as `opts.root` says. Throws
 * YepError('E_UNSAFE_PACKAGE') on the first policy violation or malformed byte, after
 * removing `into`; nothing is ever written outside `into`. Returns the content hash of
 * the files written.
 */
export async function unpackArchive(archiveFile: string, into: string, opts: ArchiveOptions): Promise<ContentHashStream> {
  const label = opts.label;
  const limits = unpackLimits(opts.compressedSize, opts.limits);
  if (opts.signal?.aborted) throw interrupted(label, opts.signal.reason);

  const target = resolve(into);
  try {
    mkdirSync(target, { mode: 0o755 });
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EEXIST' || code === 'ENOENT') {
      throw new YepError(
        'E_INTERNAL',
        `Cannot unpack ${label} into ${target}: ${code === 'EEXIST' ? 'it already exists' : 'its parent directory does not exist'}.`,
        { cause: e },
      );
    }
    throw stateIoError(`unpack ${label} into`, target, e);
  }

  const root = opts.root;
  let extractor: TarExtractor | undefined;
  const hasher = new ContentHashStream();
  let failure: unknown;
  const controller = new AbortController();
  const deadline = new TarFormatError('deadline', `unpacking did not finish within ${formatDuration(limits.timeoutMs)}`);
  const timer = setTimeout(() => controller.abort(deadline), limits.timeoutMs);
  const onAbort = (): void => controller.abort(interrupted(label, opts.signal?.reason));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (opts.format === 'zip') {
      const buf = await readFile(archiveFile);
      if (unzipInto(buf, target, root, limits, { ...(opts.keep ? { keep: opts.keep } : {}), hasher, otherKinds: opts.otherKinds ?? 'refuse' }) === 0)
        throw new TarFormatError('no-content', 'no installable content: the archive has no regular file');
      return hasher;
    }
    const tar = new TarExtractor(target, root, limits, hasher, opts.keep, opts.otherKinds);
    extractor = tar;
    // On Node 24 an aborted read settles only once a read stuck in the thread
    // pool returns (a FIFO, a hung network file system): stop waiting at the abort.
    const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
    aborted.catch(() => undefined);
    const work =
      opts.format === 'tar.gz' ? inflateInto(archiveFile, tar, opts, controller.signal, (e) => (failure = e)) : readInto(archiveFile, tar, controller.signal);
    work.catch(() => undefined);
    await Promise.race([work, aborted]);
    await Promise.race([tar.drain(), aborted]);
    tar.finish();
    return hasher;
  } catch (e) {
    // Files still being created on the thread pool are closed first: nothing is written into the tree once it is removed.
    await extractor?.abandon();
    // A failed cleanup must not hide why we are cleaning up; staging is swept later anyway.
    await removeWork(target).catch(() => undefined);
    // The first real reason wins: our own error from the loop, then a deadline or
    // caller abort, then whatever the streams reported (zlib, read errors).
    const own = failure !== undefined && (failure as Error)?.name !== 'AbortError';
    const cause = own ? failure : controller.signal.aborted ? controller.signal.reason : e;
    throw toYepError(cause, { label, hint: opts.hint, where: extractor?.where() ?? '', archiveFile, target, limits });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Read a plain (not gzip'd) tar into `tar`, 1 MiB at a time into one reused buffer:
 * its files are written with sync calls (the default of TarExtractor), so each chunk
 * is consumed before the next read.
 */
async function readInto(archiveFile: string, tar: TarExtractor, signal: AbortSignal): Promise<void> {
  const fh = await open(archiveFile, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) return;
      tar.write(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
}

/**
 * A gunzip stream, and `done`, which settles at the end of the inflated data (when `ended`
 * is called, after zlib's own end-of-stream checks: 'finish' comes before a truncated
 * stream's error) or at the stream's first error.
 */
function inflater(): { gunzip: Gunzip; ended: () => void; done: Promise<void> } {
  const gunzip = createGunzip({ chunkSize: CHUNK });
  let ended!: () => void;
  const done = new Promise<void>((resolvePromise, reject) => {
    ended = resolvePromise;
    gunzip.once('error', reject);
    gunzip.once('close', () => reject(gunzip.errored ?? new Error('the inflate stream was closed early')));
  });
  done.catch(() => undefined);
  return { gunzip, ended, done };
}

/**
 * Read `archiveFile` and inflate it into `tar` with no buffer allocated per chunk:
 * the file is read into two reused 1 MiB buffers (one is read while zlib inflates
 * the other on the thread pool) and zlib's output goes to one reused 1 MiB buffer
 * that the extractor consumes synchronously. Allocating a fresh buffer per chunk
 * (what fs streams and zlib do) leaves tens of MiB of garbage between collections,
 * which the peak RSS of a large install would carry.
 */
async function inflateInto(archiveFile: string, tar: TarExtractor, opts: ArchiveOptions, signal: AbortSignal, onFailure: (e: unknown) => void): Promise<void> {
  const { gunzip, ended, done } = inflater();
  // Small files are created on the thread pool while zlib inflates (FileWriter). Under a
  // crash-test checkpoint the first chunk's files are written synchronously, so that
  // `unpack:mid` finds them on disk, and the rest on the pool.
  const worker = opts.compressedSize >= WORKER_MIN_CRATE;
  tar.asyncWrites(opts.checkpoint === undefined, worker);
  let failed = false;
  let chunks = 0;
  let mid: Promise<void> | undefined;
  consumeSynchronously(gunzip, ended, (chunk) => {
    if (failed) return;
    try {
      tar.write(chunk);
    } catch (e) {
      failed = true;
      onFailure(e);
      gunzip.destroy(e as Error);
      return;
    }
    // Crash tests: files of the first chunk are on disk, the rest are not.
    if (chunks++ === 0) {
      mid = checkpoint(opts, 'unpack:mid');
      tar.asyncWrites(true, worker);
    }
  });
  // At the abort (Ctrl-C, a deadline) zlib stops inflating and nothing more reaches the
  // extractor, so no file is created while the caller removes the half-made tree.
  const onAbort = (): void => {
    failed = true;
    gunzip.destroy();
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const fh = await open(archiveFile, 'r').catch((e: unknown) => {
    signal.removeEventListener('abort', onAbort);
    throw e;
  });
  // Is another process competing for the CPUs? (busy-meter.ts)
  const meter = worker ? undefined : BusyMeter.open();
  try {
    const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
    let which = 0;
    let reading = fh.read(buffers[0]!, 0, CHUNK, null);
    for (;;) {
      const { bytesRead } = await reading;
      if (bytesRead === 0 || signal.aborted || failed) break;
      const buf = buffers[which]!;
      which ^= 1;
      // Read the next chunk into the other buffer while zlib inflates this one.
      reading = fh.read(buffers[which]!, 0, CHUNK, null);
      reading.catch(() => undefined);
      // Fed to zlib in slices, each only once the thread pool's queue of files has
      // room: what one slice inflates to is what can pile up (memory stays bounded).
      // Inside a big file (written with sync calls) the rest of the read goes at once:
      // thousands of slices of a large crate would cost CPU for nothing. Inside a small
      // file written synchronously because the queue was full, it goes at once too
      // on a quiet machine (most of the rest is then written with sync calls, the
      // fastest way there), but not on a busy one, where it would flood the queue
      // again and again and leave the pool's threads idle.
      for (let off = 0, end = 0; off < bytesRead && !signal.aborted && !failed; off = end) {
        await Promise.race([tar.room(), done]);
        // With the worker, a small file written here (it was not ready yet, or behind) never
        // floods it: only a big file takes the rest of the read at once.
        end = tar.inSyncFile(worker || (meter?.busyNow() ?? false)) ? bytesRead : Math.min(bytesRead, off + (worker ? WORKER_SLICE : INFLATE_SLICE));
        const slice = buf.subarray(off, end);
        // A failing stream may never call back: the first error ends the wait.
        await Promise.race([new Promise<void>((resolveWrite) => gunzip.write(slice, () => resolveWrite())), done]);
        if (mid) {
          await mid;
          mid = undefined;
        }
      }
    }
    await reading.catch(() => undefined);
    if (signal.aborted) throw signal.reason;
    if (failed) throw gunzip.errored ?? new Error('unpacking failed');
    gunzip.end();
    await done;
  } finally {
    meter?.close();
    signal.removeEventListener('abort', onAbort);
    await fh.close();
    gunzip.destroy();
  }
}

/**
 * Hand every inflated chunk to `consume` as zlib produces it, and let zlib write
 * the next one into the same output buffer. Node's zlib pushes slices of
 * `_outBuffer` and replaces that buffer with a fresh one whenever it is full;
 * keeping it is safe only because `consume` has used the slice before `push`
 * returns (nothing is queued in the readable side). Where a Node version lacks
 * `_outBuffer`, zlib simply keeps allocating: slower to collect, never wrong.
 */
function consumeSynchronously(gunzip: Gunzip, ended: () => void, consume: (chunk: Buffer) => void): void {
  const z = gunzip as unknown as { _outBuffer?: unknown; push(chunk: Buffer | null): boolean };
  const end = z.push.bind(gunzip);
  z.push = (chunk: Buffer | null): boolean => {
    if (chunk === null) {
      ended();
      return end(null);
    }
    consume(chunk);
    return true;
  };
  const out = z._outBuffer;
  if (Buffer.isBuffer(out) && out.length === CHUNK) {
    Object.defineProperty(gunzip, '_outBuffer', { configurable: true, enumerable: true, get: () => out, set: () => undefined });
  }
}

function formatDuration(ms: number): string {
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

function interrupted(label: string, reason: unknown): YepError {
  if (reason instanceof YepError) return reason;
  return new YepError('E_INTERRUPTED', `Unpacking ${label} was interrupted.`, { cause: reason });
}

interface ErrorContext {
  label: string;
  hint: string;
  where: string;
  archiveFile: string;
  target: string;
  limits: UnpackLimits;
}

function toYepError(e: unknown, c: ErrorContext): YepError {
  if (e instanceof YepError) return e;
  const hint = c.hint;
  if (e instanceof PolicyViolation) {
    return new YepError('E_UNSAFE_PACKAGE', `Refusing to unpack ${c.label}: entry ${showPath(e.entry)} is not allowed: ${e.message}.`, {
      hint,
      details: { rule: e.rule, entry: sanitize(e.entry, { max: 200 }) },
    });
  }
  if (e instanceof ZipError) {
    return new YepError('E_UNSAFE_PACKAGE', `Refusing to unpack ${c.label}: ${e.message}.`, { hint, details: { rule: 'zip' } });
  }
  if (e instanceof TarFormatError) {
    return new YepError('E_UNSAFE_PACKAGE', `Refusing to unpack ${c.label}: ${e.message}${c.where}.`, {
      hint:
        e.rule === 'deadline'
          ? `Unpacking is limited to ${formatDuration(c.limits.timeoutMs)} so that a hostile archive cannot hang yep-ext. If this machine is just very busy, try again.`
          : hint,
      details: { rule: e.rule },
    });
  }
  const code = errnoCode(e);
  if (code?.startsWith('Z_')) {
    return new YepError('E_UNSAFE_PACKAGE', `Refusing to unpack ${c.label}: the gzip stream is corrupt or truncated (${(e as Error).message})${c.where}.`, {
      hint,
      details: { rule: 'gzip', zlib: code },
    });
  }
  if (code && (e as NodeJS.ErrnoException).path === c.archiveFile) return stateIoError('read', c.archiveFile, e);
  if (code) return stateIoError(`unpack ${c.label} into`, c.target, e);
  return new YepError('E_INTERNAL', `Unpacking ${c.label} failed unexpectedly: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}
