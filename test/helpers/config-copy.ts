/**
 * A config directory kept in memory and put back: for a file whose tests each start from
 * the directory one set-up left (an install), made once, instead of making it again per
 * test. Every entry is put back as it was: directories, files with their bytes and
 * modes, symlinks with their link text (the store link of a path install).
 *
 * Not prepared-home.ts (a whole prepared home copied on disk and re-signed): the settings
 * property tests put back the config dir alone, once per generated case (hundreds per file),
 * so its bytes are held in memory instead of read again from a copy each time, and nothing is
 * re-signed (the subject is settings, secrets and enablement, not the store's fast path).
 */
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeTree } from './file-walk.js';

/** One entry of a config directory: its path, mode, and bytes or link text. */
export type ConfigEntry = { rel: string; mode: number } & ({ kind: 'dir' } | { kind: 'file'; bytes: Buffer } | { kind: 'link'; target: string });

/** Every entry under `dir`, parents before children. */
export function configEntries(dir: string, rel = ''): ConfigEntry[] {
  return readdirSync(join(dir, rel))
    .sort()
    .flatMap((name): ConfigEntry[] => {
      const r = join(rel, name);
      const p = join(dir, r);
      const st = lstatSync(p);
      const mode = st.mode & 0o7777;
      if (st.isSymbolicLink()) return [{ rel: r, mode, kind: 'link', target: readlinkSync(p) }];
      if (st.isDirectory()) return [{ rel: r, mode, kind: 'dir' }, ...configEntries(dir, r)];
      if (st.isFile()) return [{ rel: r, mode, kind: 'file', bytes: readFileSync(p) }];
      throw new Error(`${p}: neither a directory, a file nor a link`);
    });
}

/** `dir` made exactly `entries` again: whatever was done in it since is gone. */
export function restoreConfig(dir: string, entries: readonly ConfigEntry[]): void {
  removeTree(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const e of entries) {
    const p = join(dir, e.rel);
    if (e.kind === 'dir') mkdirSync(p);
    else if (e.kind === 'file') writeFileSync(p, e.bytes);
    else symlinkSync(e.target, p);
    if (e.kind !== 'link') chmodSync(p, e.mode);
  }
}
