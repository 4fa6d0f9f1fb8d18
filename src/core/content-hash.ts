/**
 * The host's content hash (host-compat §4): regular files only (symlinks and
 * special files are not followed or hashed), every `.git` directory skipped,
 * paths relative with `/`, sorted by UTF-8 bytes; SHA-256 over
 * `path 0x00 len(u64 LE) content` per file. Files are streamed in 1 MiB reads.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const CHUNK = 1024 * 1024;

/** Relative paths (with `/`) of the regular files the hash covers, in hash order. */
export async function listHashedFiles(root: string): Promise<string[]> {
  const out: Buffer[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const e of entries) {
      const relPath = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name === '.git') continue;
        await walk(join(dir, e.name), relPath);
      } else if (e.isFile()) {
        out.push(Buffer.from(relPath, 'utf8'));
      }
    }
  }
  await walk(root, '');
  out.sort(Buffer.compare);
  return out.map((b) => b.toString('utf8'));
}

async function feedFile(hash: Hash, file: string, buf: Buffer): Promise<void> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(size));
    hash.update(len);
    let read = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
      read += bytesRead;
    }
    if (read !== size) throw new Error(`${file} changed size while hashing`);
  } finally {
    await fh.close();
  }
}

/**
 * `sha256:<hex>` content hash of the package tree at `root`. `exclude` names
 * relative paths left out (a provisioned binary, which the host does not hash).
 */
export async function contentHash(root: string, exclude: ReadonlySet<string> = new Set()): Promise<string> {
  const files = (await listHashedFiles(root)).filter((f) => !exclude.has(f));
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(CHUNK);
  for (const rel of files) {
    hash.update(Buffer.from(rel, 'utf8'));
    hash.update(Buffer.from([0]));
    await feedFile(hash, join(root, ...rel.split('/')), buf);
  }
  return `sha256:${hash.digest('hex')}`;
}
