/**
 * Everything on disk in a home's config directory (store, versions, lock, grants,
 * staging, settings, secrets, keychain index, installer lock), as sorted lines
 * `path/`, `path -> link text`, `path mode digest`, comparable across homes (no
 * absolute paths: owned store entries are relative links). Two things are left
 * out on purpose, and checked on their own: the download and index cache (not
 * state: a later fetch may refresh it), whose files must still never be temp
 * files; and empty yep-ext dot-directories, which a run creates on its way and
 * which hold nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

const CACHE = 'extensions/.yep-cache';
/**
 * Stat signatures (store/tree-state.ts): a cache of "this tree was hashed", believed
 * only while it names the lock's content hash and directory, so a kill between the lock
 * and its signature costs one re-hash, not a wrong answer. Like the download cache it
 * is checked for stray temps, not compared.
 */
const STATE_CACHE = 'extensions/.yep-state';
/** Temp and partial files of any writer (yep-ext's, write-file-atomic's, downloads). */
const STRAY = /(\.yep-\d+-\d+\.tmp|\.partial|^(settings\.toml|connections\.toml|extensions\.lock|[^/]+\.json)\.\d+)$/;

function walk(dir: string, rel: string, out: string[], cache: string[], digests: boolean): void {
  for (const n of readdirSync(dir).sort()) {
    const p = join(dir, n);
    const r = rel ? `${rel}/${n}` : n;
    const st = lstatSync(p);
    if (r === CACHE || r.startsWith(`${CACHE}/`) || r === STATE_CACHE || r.startsWith(`${STATE_CACHE}/`)) {
      if (st.isDirectory()) walk(p, r, out, cache, digests);
      else cache.push(r);
      continue;
    }
    if (st.isSymbolicLink()) out.push(`${r} -> ${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      const inner: string[] = [];
      walk(p, r, inner, cache, digests);
      if (inner.length > 0 || !n.startsWith('.yep-')) out.push(`${r}/`, ...inner);
    } else if (!digests) out.push(`${r} ${(st.mode & 0o777).toString(8)}`);
    else out.push(`${r} ${(st.mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(p)).digest('hex').slice(0, 16)}`);
  }
}

export interface HomeState {
  /** Every entry outside the cache. */
  files: string[];
  /** Cache files (paths only). */
  cache: string[];
}

/**
 * The home's state; with `digests: false`, its files' lines without their contents' digest
 * (`path mode`), for a caller that compares names only: no file is read.
 */
export function homeState(configDir: string, { digests = true }: { digests?: boolean } = {}): HomeState {
  const files: string[] = [];
  const cache: string[] = [];
  if (existsSync(configDir)) walk(configDir, '', files, cache, digests);
  return { files, cache };
}

/** Temp or partial files anywhere in the home, the cache included. */
export function strayFiles(state: HomeState): string[] {
  return [...state.files.map((l) => l.split(' ')[0] as string), ...state.cache].filter((p) => STRAY.test(p.split('/').pop() ?? '') || STRAY.test(p));
}
