/**
 * The mirror's layout and its one write rule. Layout (docs/fleet.md):
 *
 *   index/config.json                      {"dl": "<base>/crates/{crate}/{crate}-{version}.crate"}
 *   index/<cargo path>                     the locked versions' index lines, byte-for-byte
 *   crates/<name>/<name>-<version>.crate   verified against cksum
 *   mirror.json                            manifest (mirror-manifest.ts)
 *
 * Write-once: a pinned file is written when missing, kept when it holds the same
 * bytes, and never replaced with other bytes (that is a changed upstream or a
 * tampered mirror: E_INTEGRITY). Writes are atomic (fs-atomic.ts), so a crash
 * or a concurrent reader never sees a torn file.
 */
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { YepError } from '../../errors.js';
import { ensureDir, writeFileAtomic } from '../../fs/fs-atomic.js';
import { readRegularFileSync } from '../../fs/read-regular-file.js';
import { assertCrateName, indexPath } from '../crates-io/index-path.js';

export const MIRROR_MANIFEST = 'mirror.json';

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `index/yo/lo/yolop-extension-lsp` */
export function indexFileRel(crate: string): string {
  return `index/${indexPath(crate)}`;
}

/** `crates/<name>/<name>-<version>.crate`: the path the `dl` template names. */
export function crateFileRel(name: string, version: string): string {
  assertCrateName(name);
  if (!/^[0-9A-Za-z.+-]{1,128}$/.test(version)) throw new YepError('E_STATE', `The locked version ${JSON.stringify(version.slice(0, 80))} of ${name} is not a version.`);
  return `crates/${name}/${name}-${version}.crate`;
}

/** The `dl` template for a mirror whose root is `base` (a URL ending in `/`). */
export function dlTemplate(base: string): string {
  return `${base}crates/{crate}/{crate}-{version}.crate`;
}

/** The mirror's base URL: `--base-url` (with a trailing `/`), else the directory as `file://`. */
export function mirrorBase(dir: string, baseUrl?: string): string {
  const base = baseUrl ?? pathToFileURL(dir).href;
  return base.endsWith('/') ? base : `${base}/`;
}

/** The bytes of a mirror file, or undefined when missing (anything but a regular file is refused). */
export function readMirrorFile(root: string, rel: string, maxBytes = 1024 * 1024 * 1024): Buffer | undefined {
  return readRegularFileSync(join(root, rel), 'The mirror file', { followSymlinks: false, maxBytes, code: 'E_STATE' });
}

/**
 * Write `data` at `rel` under the mirror once: kept when the same bytes are there,
 * refused (E_INTEGRITY) when other bytes are. Returns whether it was written.
 */
export async function writeOnce(root: string, rel: string, data: Uint8Array, what: string): Promise<boolean> {
  const have = readMirrorFile(root, rel);
  if (have !== undefined) {
    if (Buffer.compare(have, Buffer.from(data)) === 0) return false;
    throw new YepError('E_INTEGRITY', `${what}: the mirror already holds ${rel} with other bytes (sha256 ${sha256Hex(have).slice(0, 16)}…, now ${sha256Hex(data).slice(0, 16)}…); a pinned file is never rewritten.`, {
      hint: 'Either the origin changed a published file or the mirror was altered. Find out which before trusting either; to start over, build the mirror into an empty directory.',
      details: { file: rel, have: sha256Hex(have), now: sha256Hex(data) },
    });
  }
  await ensureDir(dirname(join(root, rel)));
  await writeFileAtomic(join(root, rel), data, { mode: 0o644, what: 'The mirror file' });
  return true;
}
