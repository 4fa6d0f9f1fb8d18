/**
 * The one hash-while-writing stream: every byte a source yields is written to an open
 * file and hashed, so the digest is of exactly the bytes on disk. Its callers never
 * use what they wrote before comparing that digest (hardening.md: download to a
 * `.partial` while hashing, compare, only then unpack or rename): a download
 * (net/http.ts), a copy from a `file://` mirror (net/transport.ts), and a copy of a regular
 * file (fs-atomic's copyRegularInto): the download cache's bytes, checked before they are
 * unpacked, and copyFileAtomic's copies (a verified `.crate` into a mirror, a download into
 * the cache), checked before their rename.
 *
 * Bytes are hashed and written in 1 MiB batches (small hash updates cost several
 * times more, hardening "Hashing"), gathered in one reused buffer: a fresh batch per MiB is garbage
 * V8 collects only after ~32 MiB of it. A chunk of 1 MiB or more that arrives with the
 * batch empty is hashed and written as it is. Writes are synchronous: the consumer is
 * fast (what keeps undici's `assert(!this.paused)` crash away, nodejs/undici#5360).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { newHash } from './hash.js';

const BATCH = 1 << 20;

export interface HashedWrite {
  size: number;
  /** Lowercase hex SHA-256 of exactly the bytes written. */
  sha256: string;
}

export interface HashedWriteOptions {
  /** Refuse a source longer than this: `tooBig()` is thrown before any byte past it is written. */
  maxBytes?: number;
  tooBig?: () => Error;
  /** What a failed write is reported as (the disk's state, not the source's). Default: the error itself. */
  writeError?: (e: unknown) => unknown;
  /** After each chunk is taken in, with the bytes so far and the chunk's length (a garbage meter, a crash-test pause point). */
  onChunk?: (total: number, length: number) => void | Promise<void>;
}

/** Write everything `chunks` yields to the open file `fd` while hashing it. */
export async function writeHashed(fd: number, chunks: AsyncIterable<Uint8Array>, options: HashedWriteOptions = {}): Promise<HashedWrite> {
  const hash = newHash('sha256');
  const batch = Buffer.allocUnsafe(BATCH);
  let fill = 0;
  let total = 0;
  const flush = (buf: Uint8Array, n: number): void => {
    if (n === 0) return;
    const view = n === buf.byteLength ? buf : buf.subarray(0, n);
    hash.update(view);
    try {
      // A regular file takes the whole buffer in one write, but nothing promises it: loop.
      for (let off = 0; off < n; ) off += writeSync(fd, view, off, n - off);
    } catch (e) {
      throw options.writeError ? options.writeError(e) : e;
    }
  };
  for await (const chunk of chunks) {
    const length = chunk.byteLength;
    total += length;
    if (options.maxBytes !== undefined && total > options.maxBytes) throw options.tooBig?.() ?? new Error(`more than ${options.maxBytes} bytes`);
    if (fill === 0 && length >= BATCH) {
      flush(chunk, length);
    } else {
      for (let pos = 0; pos < length; ) {
        const n = Math.min(BATCH - fill, length - pos);
        batch.set(chunk.subarray(pos, pos + n), fill);
        fill += n;
        pos += n;
        if (fill === BATCH) {
          flush(batch, fill);
          fill = 0;
        }
      }
    }
    await options.onChunk?.(total, length);
  }
  flush(batch, fill);
  return { size: total, sha256: hash.digest('hex') };
}

/**
 * `writeHashed` into `file`, created (mode 0600) or truncated: a download's `.partial`.
 * Opening, writing and closing it (a deferred write error shows at the close) fail
 * through `writeError`.
 */
export async function writeHashedFile(file: string, chunks: AsyncIterable<Uint8Array>, options: HashedWriteOptions = {}): Promise<HashedWrite> {
  const failed = (e: unknown): unknown => (options.writeError ? options.writeError(e) : e);
  let fd: number;
  try {
    fd = openSync(file, 'w', 0o600);
  } catch (e) {
    throw failed(e);
  }
  let written: HashedWrite;
  try {
    written = await writeHashed(fd, chunks, options);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  try {
    closeSync(fd);
  } catch (e) {
    throw failed(e);
  }
  return written;
}
