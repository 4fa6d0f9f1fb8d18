/**
 * `mirror.json`: what a mirror holds, from which lock, and the SHA-256 of every
 * file in it, so a copy of the tree (rsync, an S3 sync, a CDN) can be checked
 * with nothing but sha256sum. Merged on every run: entries of earlier locks stay
 * (a mirror keeps what was pinned), the newest lock is named in `lock`.
 */
import { join } from 'node:path';
import { YepError } from '../../errors.js';
import { MIRROR_MANIFEST, readMirrorFile } from './mirror-tree.js';

export interface MirrorManifest {
  format: 1;
  /** The mirror's root as `config.json`'s `dl` names it. */
  base_url: string;
  /** The lock of the latest run: where it was read and its SHA-256. */
  lock: { path: string; sha256: string };
  crates: Array<{ crate: string; version: string; cksum: string; file: string; index_file: string; origin: string }>;
  /** Bare repositories (served by dumb HTTP) and the locked commits each holds. */
  git: Array<{ url: string; commit: string; path: string }>;
  /** Entries not mirrored (path sources) and why, from the latest run. */
  skipped: Array<{ name: string; reason: string }>;
  /** Relative path -> SHA-256 of every index file and `.crate` (git repositories verify themselves: objects are named by their hashes, and installs check the locked commit id). */
  files: Record<string, string>;
}

export function readManifest(root: string): MirrorManifest | undefined {
  const bytes = readMirrorFile(root, MIRROR_MANIFEST, 64 * 1024 * 1024);
  if (bytes === undefined) return undefined;
  try {
    const m = JSON.parse(bytes.toString('utf8')) as MirrorManifest;
    if (m.format !== 1 || typeof m.files !== 'object' || !Array.isArray(m.crates)) throw new Error('unknown format');
    return { ...m, git: Array.isArray(m.git) ? m.git : [] };
  } catch (e) {
    throw new YepError('E_STATE', `${join(root, MIRROR_MANIFEST)} is not a mirror manifest yep-ext can read (${(e as Error).message}).`, {
      hint: 'Build the mirror into an empty directory, or remove the file if the directory is not a mirror.',
    });
  }
}

/** `mirror.json`'s bytes: lists sorted, so a re-run over the same locks writes the same file. */
export function manifestBytes(m: MirrorManifest): Buffer {
  const sorted: MirrorManifest = {
    ...m,
    crates: [...m.crates].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)),
    git: [...m.git].sort((a, b) => (`${a.path} ${a.commit}` < `${b.path} ${b.commit}` ? -1 : 1)),
    files: Object.fromEntries(Object.entries(m.files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
  return Buffer.from(`${JSON.stringify(sorted, null, 2)}\n`);
}
