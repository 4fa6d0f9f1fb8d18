/**
 * The stat signature of an installed tree (git's index idea): for each file the
 * content hash covers, plus the provisioned binary, its size, mtime, ctime,
 * inode and mode, recorded when yep-ext placed or last fully verified the tree.
 * While every signature is unchanged the files are the ones that were hashed, so
 * `list` and a warm `install --frozen` skip re-hashing; any difference (or no
 * record) means re-hash. The record lives at `<store>/.yep-state/<name>.json`
 * (a dot-directory the host ignores; docs/formats.md) and is only a cache: it
 * is valid only for the lock entry (content hash, binary digest) and directory
 * it names, and a bad or missing one costs a re-hash, never a wrong answer
 * about content (ctime cannot be set back by a user, so an edit that restores
 * size and mtime is still seen).
 */
import { lstatSync, type BigIntStats } from 'node:fs';
import { join, sep } from 'node:path';
import { storeCustody, type Paths } from '../paths.js';
import { makeOwnedDir, removeOwned } from '../fs/custody.js';
import { assertValidName } from '../package/names.js';
import { bufferGarbageMeter } from '../fs/buffer-garbage.js';
import { walkHashedFiles } from '../package/content-hash.js';
import { writeFileAtomic, writeStreamAtomic } from '../fs/fs-atomic.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { assertLockKept } from '../fs/lock-hold.js';

/** [size, mtime ns, ctime ns, inode, mode] */
export type FileSignature = [number, string, string, number, number];

export interface TreeState {
  format: 1;
  name: string;
  /** The real directory the signature was taken in. */
  dir: string;
  /** The lock entry's content_hash the tree matched. */
  content_hash: string;
  /** The lock entry's binary_file_sha256 the binary matched (null: none recorded). */
  binary_file_sha256: string | null;
  /** Relative path (`/`) -> signature, every regular file outside `.git`. */
  files: Record<string, FileSignature>;
}

export function treeStateFile(paths: Paths, name: string): string {
  return join(paths.stateDir, `${assertValidName(name)}.json`);
}

/**
 * Walk the regular files under `root` (`.git` skipped, links not followed) as the
 * content hash walks, handing each relative path (`/`) and its lstat to `visit`.
 * The BigIntStats objects (a dozen BigInts each) are garbage as soon as
 * they are read; on a 20,000-file tree they piled up to several MiB of young
 * generation, so a young collection runs every 2,000 files where the CLI exposed
 * V8's collector (fs/buffer-garbage.ts).
 */
function walkSignatures(root: string, visit: (relPath: string, st: BigIntStats) => void): void {
  const garbage = bufferGarbageMeter();
  walkHashedFiles(root, (relPath, dir, name) => {
    visit(relPath, lstatSync(`${dir}${sep}${name}`, { bigint: true }));
    garbage(STAT_GARBAGE);
  });
}

/** What one BigIntStats counts for in the collector's 4 MiB budget: a collection every 2,000 files. */
const STAT_GARBAGE = 2048;

/** Signatures of the regular files under `root` (`.git` skipped, links not followed), as the content hash walks. */
export function signTree(root: string): Record<string, FileSignature> {
  const out: Record<string, FileSignature> = {};
  walkSignatures(root, (relPath, st) => {
    out[relPath] = [Number(st.size), st.mtimeNs.toString(), st.ctimeNs.toString(), Number(st.ino), Number(st.mode)];
  });
  return out;
}

/** The size of the blocks signTreeJsonChunks fills (a 20,000-file tree's signatures run to megabytes). */
export const SIGNATURE_CHUNK = 64 * 1024;

/**
 * The same signatures as the JSON bytes of a `files` object (format 1, what
 * `JSON.stringify` of signTree's record gives, keys in walk order), written into
 * blocks of SIGNATURE_CHUNK bytes as the files are signed: for a tree just placed
 * nothing reads the signatures back, so the per-file arrays, their strings and the
 * 20,000-key object are never made (on V8's heap they take several times the
 * record's bytes). Blocks, not one buffer: a buffer grown by doubling, joined to
 * the record's head and copied again by the atomic writer allocates several times
 * the record's size in array buffers; the blocks are written as they are
 * (writeTreeStateText).
 * A block is cut before a file's text that does not fit, so each ends on a whole
 * record. JSON.parse of the blocks joined reads the same record as signTree's.
 */
export function signTreeJsonChunks(root: string): Buffer[] {
  const chunks: Buffer[] = [];
  let buf = Buffer.allocUnsafe(SIGNATURE_CHUNK);
  let len = 0;
  const put = (text: string): void => {
    const need = Buffer.byteLength(text);
    if (len + need > buf.length) {
      if (len > 0) chunks.push(buf.subarray(0, len));
      buf = Buffer.allocUnsafe(Math.max(need, SIGNATURE_CHUNK));
      len = 0;
    }
    len += buf.write(text, len);
  };
  put('{');
  let first = true;
  walkSignatures(root, (relPath, st) => {
    put(`${first ? '' : ','}${JSON.stringify(relPath)}:[${st.size},"${st.mtimeNs}","${st.ctimeNs}",${st.ino},${st.mode}]`);
    first = false;
  });
  put('}');
  chunks.push(buf.subarray(0, len));
  return chunks;
}

/** signTreeJsonChunks as one buffer. */
export function signTreeJson(root: string): Buffer {
  return Buffer.concat(signTreeJsonChunks(root));
}

/** What differs between two signature sets, by file: changed, deleted and added paths (sorted). */
export function diffSignatures(
  before: Record<string, FileSignature>,
  now: Record<string, FileSignature>,
): { changed: string[]; deleted: string[]; added: string[]; modeOnly: string[] } {
  const changed: string[] = [];
  const deleted: string[] = [];
  const modeOnly: string[] = [];
  for (const [rel, sig] of Object.entries(before)) {
    const cur = now[rel];
    if (!cur) deleted.push(rel);
    // [size, mtime, ctime, inode, mode]: a mode-only change (chmod) is not an edit; other differences may be.
    else if (cur[0] !== sig[0] || cur[1] !== sig[1] || cur[3] !== sig[3] || (cur[2] !== sig[2] && cur[4] === sig[4])) changed.push(rel);
    else if (cur[4] !== sig[4]) modeOnly.push(rel);
  }
  const added = Object.keys(now).filter((rel) => !(rel in before));
  return { changed: changed.sort(), deleted: deleted.sort(), added: added.sort(), modeOnly: modeOnly.sort() };
}

function isSignature(v: unknown): v is FileSignature {
  return (
    Array.isArray(v) &&
    v.length === 5 &&
    typeof v[0] === 'number' &&
    typeof v[1] === 'string' &&
    typeof v[2] === 'string' &&
    typeof v[3] === 'number' &&
    typeof v[4] === 'number'
  );
}

/** The recorded state, or undefined when there is none or it is unreadable (a cache: re-hash instead). */
export function readTreeState(paths: Paths, name: string): TreeState | undefined {
  let text: string | undefined;
  try {
    text = readRegularTextSync(treeStateFile(paths, name), 'The stat signature', { maxBytes: 64 * 1024 * 1024 });
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    const s = JSON.parse(text) as TreeState;
    if (s.format !== 1 || s.name !== name || typeof s.dir !== 'string' || typeof s.content_hash !== 'string') return undefined;
    if (s.binary_file_sha256 !== null && typeof s.binary_file_sha256 !== 'string') return undefined;
    if (typeof s.files !== 'object' || s.files === null || !Object.values(s.files).every(isSignature)) return undefined;
    return s;
  } catch {
    return undefined;
  }
}

/** Record the state (caller holds the installer lock). A cache: a failed write is not an error worth failing a command for. */
export async function writeTreeState(paths: Paths, state: TreeState): Promise<void> {
  const { files, ...head } = state;
  await writeTreeStateText(paths, head, JSON.stringify(files));
}

/**
 * Record the state with `files` already as its JSON (signTreeJson): the same
 * record, once parsed, as writeTreeState's. The bytes are the same too unless a
 * name is integer-like (`2`, `10`): JSON.stringify of a record puts those keys
 * first, in numeric order, while signTreeJson keeps the walk's order; readers
 * parse the file, so the order does not matter.
 */
export async function writeTreeStateText(paths: Paths, head: Omit<TreeState, 'files'>, filesJson: string | Buffer | Buffer[]): Promise<void> {
  assertLockKept(paths);
  const file = treeStateFile(paths, head.name);
  // The keys in TreeState's order, `files` last, as JSON.stringify(state) writes them.
  const open = Buffer.from(
    `${JSON.stringify({ format: head.format, name: head.name, dir: head.dir, content_hash: head.content_hash, binary_file_sha256: head.binary_file_sha256 }).slice(0, -1)},"files":`,
  );
  const close = Buffer.from('}\n');
  const files = typeof filesJson === 'string' ? [Buffer.from(filesJson)] : Buffer.isBuffer(filesJson) ? [filesJson] : filesJson;
  try {
    // No mkdir system call when the directory is there (each one is a crash point); a linked one is refused.
    await makeOwnedDir(storeCustody(paths, 'state'), 0o700);
    if (files.length === 1) {
      // One block (any tree of up to ~700 files): one buffer, one write, as always.
      await writeFileAtomic(file, Buffer.concat([open, files[0]!, close]), { what: 'The stat signature', mode: 0o600, durable: false });
    } else {
      // The blocks as they are: no joined copy of a large tree's signatures.
      await writeStreamAtomic(file, blocks([open, ...files, close]), { what: 'The stat signature', mode: 0o600, durable: false });
    }
  } catch {
    // Next time costs a re-hash; nothing else depends on it.
  }
}

async function* blocks(list: Buffer[]): AsyncGenerator<Buffer> {
  yield* list;
}

/**
 * Forget the state of a removed extension. Through removeOwned, as every other unlink of a
 * removal: all on the main thread, so the crash-point suite reaches each one (strace counts
 * calls per thread).
 */
export async function removeTreeState(paths: Paths, name: string): Promise<void> {
  await removeOwned(storeCustody(paths, 'state'), `${assertValidName(name)}.json`);
}
