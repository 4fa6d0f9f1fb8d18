/**
 * SHA-256 of a file, streamed in 1 MiB reads (crates and binaries can be large):
 * the one file hasher of the download cache, the binary step and `verify`.
 * Light on purpose: `list` imports it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Hex SHA-256 and byte count of `file`. */
export async function sha256FileWithSize(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

export async function sha256File(file: string): Promise<string> {
  return (await sha256FileWithSize(file)).sha256;
}
