/**
 * The host's content hash (content-hash.ts, host-compat §4) computed while a tree
 * is being written, so an install never walks and re-reads the tree it just
 * unpacked (a second walk costs time and, for tens of thousands of files, peak RSS).
 *
 * The hash is one SHA-256 stream over the files in UTF-8 byte order of their
 * paths, so per-file digests cannot be combined afterwards. Files that arrive in
 * that order (cargo writes its archives nearly sorted) are fed as their bytes
 * pass by. A file that arrives out of order, or one written after extraction
 * (plugin.json generated from Cargo.toml), is only named; at the end the hash
 * state is rewound to the last snapshot before the first such file and the rest
 * is read back from disk in order. Snapshots (`Hash.copy()`, a few hundred bytes)
 * are kept every SNAPSHOT_EVERY files, so that re-read is bounded by the late
 * files plus what sorts after them, never a walk of the tree.
 *
 * What is kept per file is its path string (already allocated by the extractor)
 * in one array: no per-file objects.
 */
import type { Hash } from 'node:crypto';
import { ZERO, compareUtf8, finishHash, lengthPrefix, sortByUtf8 } from './content-hash.js';
import { newHash } from '../fs/hash.js';

const SNAPSHOT_EVERY = 64;

/** A path the host does not hash: anything inside a `.git` directory (a file named `.git` is hashed). */
function insideGit(rel: string): boolean {
  return rel.startsWith('.git/') || rel.includes('/.git/');
}

export class ContentHashStream {
  private readonly hash: Hash = newHash('sha256');
  /** Paths fed so far, in hash order. */
  private readonly streamed: string[] = [];
  /** snapshots[k]: the hash state before streamed[k * SNAPSHOT_EVERY]. */
  private readonly snapshots: Hash[] = [];
  /** Paths written but not fed (out of order, or added after extraction). */
  private readonly late: string[] = [];
  private feeding = false;
  private done = false;

  /** A regular file `rel` (relative, `/`) of exactly `size` bytes begins; its bytes follow through data(). */
  beginFile(rel: string, size: number): void {
    this.feeding = false;
    if (insideGit(rel)) return;
    const n = this.streamed.length;
    if (n > 0 && compareUtf8(rel, this.streamed[n - 1]!) <= 0) {
      this.late.push(rel);
      return;
    }
    if (n % SNAPSHOT_EVERY === 0) this.snapshots.push(this.hash.copy());
    this.streamed.push(rel);
    this.hash.update(rel, 'utf8');
    this.hash.update(ZERO);
    this.hash.update(lengthPrefix(size));
    this.feeding = true;
  }

  /** Bytes `start..end` of `chunk` belong to the current file. */
  data(chunk: Buffer, start: number, end: number): void {
    if (this.feeding) this.hash.update(chunk.subarray(start, end));
  }

  /** A regular file written into the tree by other means (read back from disk at the end). */
  addFile(rel: string): void {
    if (!insideGit(rel)) this.late.push(rel);
  }

  /** `sha256:<hex>` of the tree at `root`, which must hold exactly the files named so far. */
  async digest(root: string): Promise<string> {
    if (this.done) throw new Error('ContentHashStream.digest called twice');
    this.done = true;
    if (this.late.length === 0) return `sha256:${this.hash.digest('hex')}`;
    const late = sortByUtf8(this.late);
    // The first fed path that sorts after the first late one: everything from there is re-read.
    let lo = 0;
    let hi = this.streamed.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareUtf8(this.streamed[mid]!, late[0]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    let hash = this.hash;
    let from = this.streamed.length;
    if (lo < this.streamed.length) {
      const k = Math.floor(lo / SNAPSHOT_EVERY);
      hash = this.snapshots[k]!;
      from = k * SNAPSHOT_EVERY;
    }
    const rest = mergeSorted(this.streamed.slice(from), late);
    this.snapshots.length = 0;
    return finishHash(hash, root, rest);
  }
}

function mergeSorted(a: string[], b: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compareUtf8(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}
