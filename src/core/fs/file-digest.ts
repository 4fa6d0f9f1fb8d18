/**
 * SHA-256 of a file, read in 1 MiB chunks into one reused buffer (crates and
 * binaries can be large; a fresh buffer per chunk is garbage that raises the peak
 * RSS): the one file hasher of the download cache, the
 * binary step and `verify`. Light on purpose: `list` imports it.
 */
import { openRegularFile } from './read-regular-file.js';
import { newHash } from './hash.js';

const CHUNK = 1 << 20;

/**
 * Hex SHA-256 and byte count of `file`, opened through the regular-file guard: a FIFO or
 * device put where a package's binary was (`verify` hashes it) is refused at once, never
 * read forever. A missing file rejects with ENOENT, as `open` would.
 */
export async function sha256FileWithSize(file: string): Promise<{ sha256: string; size: number }> {
  const { hex, size } = await digestFileWithSize(file, 'sha256');
  return { sha256: hex, size };
}

/** Hex digest of `file` with `algorithm` (the download cache's content of other algorithms). */
export async function fileDigest(file: string, algorithm: string): Promise<string> {
  return (await digestFileWithSize(file, algorithm)).hex;
}

async function digestFileWithSize(file: string, algorithm: string): Promise<{ hex: string; size: number }> {
  const hash = newHash(algorithm);
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
  return { hex: hash.digest('hex'), size };
}

export async function sha256File(file: string): Promise<string> {
  return (await sha256FileWithSize(file)).sha256;
}
