/**
 * SHA-256 of a file, read in 1 MiB chunks into one reused buffer (crates and
 * binaries can be large; a fresh buffer per chunk is garbage that raises the peak
 * RSS, docs/performance.md): the one file hasher of the download cache, the
 * binary step and `verify`. Light on purpose: `list` imports it.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

const CHUNK = 1 << 20;

/** Hex SHA-256 and byte count of `file`. */
export async function sha256FileWithSize(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const fh = await open(file, 'r');
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
