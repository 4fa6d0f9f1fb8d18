/**
 * The regular files under a directory (symlinks followed as stat does, as the
 * cache tests always walked): absolute paths, sorted; and the same as a
 * relative-path -> hex-bytes map, to show that nothing in a tree changed.
 */
import { existsSync, lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under `dir` (absolute paths, sorted); none when `dir` is missing. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d).sort()) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/** Every file under `dir` with its bytes (hex), by path relative to `dir`. */
export function treeBytes(dir: string): Record<string, string> {
  return Object.fromEntries(filesUnder(dir).map((p) => [relative(dir, p), readFileSync(p).toString('hex')]));
}

/**
 * Every entry under `dir` but `skip` (relative paths) with its mtime, symlinks not
 * followed: a command that says it changed nothing rewrote no file (install's
 * "already installed").
 */
export function mtimesUnder(dir: string, skip: readonly string[] = [], rel = ''): string[] {
  return readdirSync(join(dir, rel))
    .sort()
    .flatMap((name) => {
      const r = rel ? `${rel}/${name}` : name;
      if (skip.includes(r)) return [];
      const st = lstatSync(join(dir, r));
      return st.isDirectory() ? mtimesUnder(dir, skip, r) : [`${r} ${st.mtimeMs}`];
    });
}
