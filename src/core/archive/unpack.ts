/**
 * Safe unpacking of a `.crate` (gzip around a tar) into a fresh directory, under
 * the policy in docs/unpack.md: regular files and directories only, every entry
 * under `{name}-{version}/` (stripped), no path tricks or collisions, capped size,
 * count, depth, path length and time, normalised modes. The first violation rejects
 * the whole archive and removes everything written so far.
 *
 * Shape, chosen by measurement (scripts/bench-unpack.mjs): node:zlib inflates in
 * 1 MiB chunks on the thread pool while this module parses each chunk synchronously
 * and writes files with sync calls. node-tar's default async extraction pays a
 * promise/stream round trip per file and was 8-10x slower than GNU tar on 5,000
 * small files; here nothing is buffered beyond one chunk, whatever the file sizes.
 */
import { createReadStream, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { checkpoint, type CheckpointHost } from '../fs/checkpoint.js';
import { YepError, errnoCode, stateIoError } from '../errors.js';
import { ContentHashStream } from '../package/content-hash-stream.js';
import { sanitize } from '../text/sanitize.js';
import { TarExtractor, showPath, type ExtractLimits } from './tar-extract.js';
import { TarFormatError } from './tar-header.js';
import { PolicyViolation } from './unpack-policy.js';

export interface UnpackLimits extends ExtractLimits {
  /** Overall deadline for the whole unpack (one node-tar extraction in ~300 hung forever). */
  timeoutMs: number;
}

const MiB = 1024 * 1024;
/** Read and inflate in 1 MiB chunks (measured: Node's zlib then inflates faster than `gzip -dc`). */
const CHUNK = MiB;

export const DEFAULT_UNPACK_LIMITS: Readonly<Omit<UnpackLimits, 'maxTotalBytes'>> = {
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

/**
 * Create `into` (it must not exist; its parent must) and extract the crate archive
 * into it with the `{crateName}-{version}/` prefix stripped. Throws
 * YepError('E_UNSAFE_PACKAGE') on the first policy violation or malformed byte,
 * after removing `into`; nothing is ever written outside `into`.
 *
 * Returns the content hash of the files written, fed as they were written: a
 * caller that adds a file to the tree names it (`addFile`) before `digest(into)`.
 */
export async function unpackCrate(archiveFile: string, into: string, opts: UnpackOptions): Promise<ContentHashStream> {
  const label = `${opts.crateName}@${opts.version}`;
  const limits = unpackLimits(opts.compressedSize, opts.limits);
  if (opts.signal?.aborted) throw interrupted(label, opts.signal.reason);

  const target = resolve(into);
  try {
    mkdirSync(target, { mode: 0o755 });
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EEXIST' || code === 'ENOENT') {
      throw new YepError('E_INTERNAL', `Cannot unpack ${label} into ${target}: ${code === 'EEXIST' ? 'it already exists' : 'its parent directory does not exist'}.`, { cause: e });
    }
    throw stateIoError(`unpack ${label} into`, target, e);
  }

  const root = `${opts.crateName}-${opts.version}`;
  let extractor: TarExtractor | undefined;
  const hasher = new ContentHashStream();
  let failure: unknown;
  const controller = new AbortController();
  const deadline = new TarFormatError('deadline', `unpacking did not finish within ${formatDuration(limits.timeoutMs)}`);
  const timer = setTimeout(() => controller.abort(deadline), limits.timeoutMs);
  const onAbort = (): void => controller.abort(interrupted(label, opts.signal?.reason));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const tar = (extractor = new TarExtractor(target, root, limits, hasher));
    // On Node 24 an aborted pipeline settles only once a read stuck in the thread
    // pool returns (a FIFO, a hung network file system): stop waiting at the abort.
    const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
    aborted.catch(() => undefined);
    const streams = pipeline(
      createReadStream(archiveFile, { highWaterMark: CHUNK }),
      createGunzip({ chunkSize: CHUNK }),
      async (source: AsyncIterable<Buffer>) => {
        try {
          let chunks = 0;
          for await (const chunk of source) {
            tar.write(chunk);
            // Crash tests: files of the first chunk are on disk, the rest are not.
            if (chunks++ === 0) await checkpoint(opts, 'unpack:mid');
          }
        } catch (e) {
          // Leaving the loop destroys the stream with an AbortError that pipeline
          // would report instead of this, the real reason.
          failure = e;
          throw e;
        }
      },
      { signal: controller.signal },
    );
    streams.catch(() => undefined);
    await Promise.race([streams, aborted]);
    tar.finish();
    return hasher;
  } catch (e) {
    extractor?.abandon();
    // A failed cleanup must not hide why we are cleaning up; staging is swept later anyway.
    await rm(target, { recursive: true, force: true, maxRetries: 2 }).catch(() => undefined);
    // The first real reason wins: our own error from the loop, then a deadline or
    // caller abort, then whatever the streams reported (zlib, read errors).
    const own = failure !== undefined && (failure as Error)?.name !== 'AbortError';
    const cause = own ? failure : controller.signal.aborted ? controller.signal.reason : e;
    throw toYepError(cause, { label, root, where: extractor?.where() ?? '', archiveFile, target, limits });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
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
  root: string;
  where: string;
  archiveFile: string;
  target: string;
  limits: UnpackLimits;
}

function toYepError(e: unknown, c: ErrorContext): YepError {
  if (e instanceof YepError) return e;
  const hint = `yep-ext installs only archives whose entries are plain files and directories under ${c.root}/ (see docs/unpack.md). Nothing was installed; report the problem to the crate's authors.`;
  if (e instanceof PolicyViolation) {
    return new YepError('E_UNSAFE_PACKAGE', `Refusing to unpack ${c.label}: entry ${showPath(e.entry)} is not allowed: ${e.message}.`, {
      hint,
      details: { rule: e.rule, entry: sanitize(e.entry, { max: 200 }) },
    });
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
