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
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { YepError } from '../../errors.js';
import { copyFileAtomic } from '../../fs/fs-atomic.js';
import { sha256File } from '../../fs/file-digest.js';
import { inspectRegularFile, readRegularFileSync } from '../../fs/read-regular-file.js';
import { assertCrateName, indexPath } from '../crates-io/index-path.js';

export const MIRROR_MANIFEST = 'mirror.json';

/** `index/yo/lo/yolop-extension-lsp` */
export function indexFileRel(crate: string): string {
  return `index/${indexPath(crate)}`;
}

/** `crates/<name>/<name>-<version>.crate`: the path the `dl` template names. */
export function crateFileRel(name: string, version: string): string {
  assertCrateName(name);
  if (!/^[0-9A-Za-z.+-]{1,128}$/.test(version))
    throw new YepError('E_STATE', `The locked version ${JSON.stringify(version.slice(0, 80))} of ${name} is not a version.`);
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
 * Whether the mirror holds the pinned file `rel` (a `.crate`) already: true when its bytes hash (1 MiB reads) to
 * `sha256`, false when absent, E_INTEGRITY when they are other bytes.
 */
export async function holdsPinnedFile(root: string, rel: string, sha256: string, what: string): Promise<boolean> {
  const target = join(root, rel);
  if (!inspectRegularFile(target, 'The mirror file', { followSymlinks: false, code: 'E_STATE' })) return false;
  const have = await sha256File(target);
  if (have === sha256) return true;
  throw new YepError('E_INTEGRITY', `${what}: the mirror's ${rel} does not match the locked cksum; it is never rewritten.`, {
    hint: 'The mirror was altered (or a different upstream file was mirrored). Remove that file only after finding out why, then run mirror again.',
    details: { file: rel, wanted: sha256, got: have },
  });
}

/**
 * Copy `source` (a download verified in scratch) to `rel` (its directories made by the
 * mirror's custody, MirrorPlan.makeDirsOf), hashing while copying: it
 * is renamed into place only when the copy hashes to `sha256`, so what was verified
 * is what lands, and the file is never held whole in memory.
 */
export async function copyPinnedFile(root: string, rel: string, source: string, sha256: string, what: string): Promise<void> {
  const target = join(root, rel);
  await copyFileAtomic(source, target, {
    mode: 0o644,
    what: 'The mirror file',
    sourceWhat: what,
    check: ({ sha256: got }) => {
      if (got !== sha256)
        throw new YepError(
          'E_INTEGRITY',
          `${what}: the verified download changed before it reached the mirror (sha256 ${got.slice(0, 16)}…, locked ${sha256.slice(0, 16)}…); nothing was written.`,
          { details: { file: rel, wanted: sha256, got } },
        );
    },
  });
}
