/**
 * SHA-256 of a file, read in 1 MiB chunks into one reused buffer (crates and
 * binaries can be large; a fresh buffer per chunk is garbage that raises the peak
 * RSS, docs/performance.md): the one file hasher of the download cache, the
 * binary step and `verify`. Light on purpose: `list` imports it.
 */
import { createHash } from 'node:crypto';
import { openRegularFile } from './read-regular-file.js';

const CHUNK = 1 << 20;

/**
 * Hex SHA-256 and byte count of `file`, opened through the regular-file guard: a FIFO or
 * device put where a package's binary was (`verify` hashes it) is refused at once, never
 * read forever. A missing file rejects with ENOENT, as `open` would.
 */
export async function sha256FileWithSize(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const opened = await openRegularFile(file, 'The file');
  if (!opened) throw Object.assign(new Error(`ENOENT: no such file, open '${file}'`), { code: 'ENOENT', path: file });
  const fh = opened.handle;
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      hash.update(bytesRead === CHUNK ? buf : buf.subarray(0, bytesRead));
      size += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return { sha256: hash.digest('hex'), size };
}

export async function sha256File(file: string): Promise<string> {
  return (await sha256FileWithSize(file)).sha256;
}
