/**
 * The host's content hash (host-compat §4): regular files only (symlinks and
 * special files are not followed or hashed), every `.git` directory skipped,
 * paths relative with `/`, sorted by UTF-8 bytes; SHA-256 over
 * `path 0x00 len(u64 LE) content` per file. Files are read in 1 MiB chunks.
 *
 * Why synchronous I/O inside an async function: per-file overhead dominates
 * (a crate can hold thousands of small files). fs/promises costs five thread-pool
 * round trips per file (open, stat, read, read, close); the same work done with
 * the sync calls hashed a 5,000-file, 60 MB tree in 0.2 s instead of 1.1-1.5 s.
 * The event loop is handed back at least every YIELD_MS so signals, progress
 * output and concurrent callers still get their turn.
 */
import type { Hash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, readdirSync } from 'node:fs';
// Paths are joined by hand: entry names come from readdir (no `..`, no separators)
// and path.join's normalisation was a measurable part of hashing many small files.
import { sep } from 'node:path';
import { newHash } from '../fs/hash.js';

const CHUNK = 1024 * 1024;
const YIELD_MS = 20;

// One buffer for all callers: it is only used between a readSync and the
// hash.update that copies it, with no await in between.
let shared: Buffer | undefined;

// A character that orders differently by UTF-16 code units than by UTF-8 bytes:
// surrogates (astral characters) sort below U+E000..U+FFFF in UTF-16, above in UTF-8.
const UTF16_ORDER_DIFFERS = /[\uD800-\uFFFF]/;

/**
 * Sort relative paths by their UTF-8 bytes. Without surrogates or U+E000..U+FFFF
 * (the usual case) JS string order is code point order, which is UTF-8 byte
 * order: the strings sort as they are, with no Buffer per path (at 20,000
 * files the Buffers would be a visible share of the peak memory).
 */
/** Compare two relative paths by their UTF-8 bytes (the hash order). */
export function compareUtf8(a: string, b: string): number {
  if (!UTF16_ORDER_DIFFERS.test(a) && !UTF16_ORDER_DIFFERS.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function sortByUtf8(paths: string[]): string[] {
  if (!paths.some((p) => UTF16_ORDER_DIFFERS.test(p))) return paths.sort();
  const bytes = paths.map((p) => Buffer.from(p, 'utf8'));
  bytes.sort(Buffer.compare);
  return bytes.map((b) => b.toString('utf8'));
}

/**
 * The one walk of the files the hash covers: the regular files under `root` (links and
 * special files not followed, every `.git` directory skipped), in readdir order, each
 * handed over as its relative path (`/`), its directory and its name. The store's stat
 * signatures (store/tree-state.ts) walk with it, so they cover exactly the hashed files.
 */
export function walkHashedFiles(root: string, visit: (relPath: string, dir: string, name: string) => void): void {
  const walk = (dir: string, rel: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const relPath = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== '.git') walk(`${dir}${sep}${e.name}`, relPath);
      } else if (e.isFile()) {
        visit(relPath, dir, e.name);
      }
    }
  };
  walk(root, '');
}

function walkSync(root: string): string[] {
  const out: string[] = [];
  walkHashedFiles(root, (relPath) => {
    out.push(relPath);
  });
  return sortByUtf8(out);
}

/** Relative paths (with `/`) of the regular files the hash covers, in hash order. */
export async function listHashedFiles(root: string): Promise<string[]> {
  return walkSync(root);
}

// Date.now, not performance.now: the `performance` global loads perf_hooks at start-up.
class Yielder {
  private last = Date.now();
  async maybe(): Promise<void> {
    if (Date.now() - this.last < YIELD_MS) return;
    await new Promise((r) => setImmediate(r));
    this.last = Date.now();
  }
}

// Reused: hash.update copies its input before returning.
const prefix = Buffer.alloc(8);
export const ZERO = Buffer.from([0]);

export function lengthPrefix(size: number): Buffer {
  prefix.writeBigUInt64LE(BigInt(size));
  return prefix;
}

// The walk saw a regular file; should it have been swapped for a FIFO or a link
// since, O_NONBLOCK keeps the open and read from blocking and O_NOFOLLOW refuses the link.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

async function feedFile(hash: Hash, file: string, yielder: Yielder): Promise<void> {
  const fd = openSync(file, OPEN_FLAGS);
  try {
    shared ??= Buffer.allocUnsafe(CHUNK);
    const buf = shared;
    const first = readSync(fd, buf, 0, buf.length, null);
    if (first < buf.length) {
      // The whole file in one read (a short read of a regular file is its end):
      // its length is known without the fstat, a syscall saved per small file.
      hash.update(lengthPrefix(first));
      hash.update(buf.subarray(0, first));
      return;
    }
    // Larger than one chunk: the length prefix comes first, so ask for the size.
    const { size } = fstatSync(fd);
    hash.update(lengthPrefix(size));
    hash.update(buf);
    let read = first;
    for (;;) {
      await yielder.maybe();
      shared ??= Buffer.allocUnsafe(CHUNK);
      const chunk = shared;
      const bytesRead = readSync(fd, chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      hash.update(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
      read += bytesRead;
      // A short read that reaches the size fstat gave is the end: skip the read that would return 0.
      if (bytesRead < chunk.length && read === size) break;
    }
    if (read !== size) throw new Error(`${file} changed size while hashing`);
  } finally {
    closeSync(fd);
  }
}

/** `root` joined with a relative `/` path. */
function nativePath(root: string, rel: string): string {
  return `${root}${sep}${sep === '/' ? rel : rel.split('/').join(sep)}`;
}

/**
 * `sha256:<hex>` content hash of the package tree at `root`. `exclude` names
 * relative paths left out (a provisioned binary, which the host does not hash).
 */
export async function contentHash(root: string, exclude: ReadonlySet<string> = new Set()): Promise<string> {
  const files = walkSync(root).filter((f) => !exclude.has(f));
  return finishHash(newHash('sha256'), root, files);
}

/**
 * Feed `rels` (in the hash's order) into `hash`, each as path, NUL, length-prefixed
 * bytes, and return the `sha256:` digest: the one loop behind the walk and the
 * extractor's stream (content-hash-stream.ts) when it resumes from a snapshot.
 */
export async function finishHash(hash: Hash, root: string, rels: Iterable<string>): Promise<string> {
  const yielder = new Yielder();
  for (const rel of rels) {
    hash.update(rel, 'utf8');
    hash.update(ZERO);
    await feedFile(hash, nativePath(root, rel), yielder);
    await yielder.maybe();
  }
  return `sha256:${hash.digest('hex')}`;
}
