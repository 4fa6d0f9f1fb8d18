/**
 * The regular files under a directory (symlinks followed as stat does, as the
 * cache tests always walked): absolute paths, sorted; and the same as a
 * relative-path -> hex-bytes map, to show that nothing in a tree changed.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  rmdirSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
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

/**
 * `src` copied to `dest` as `cpSync(src, dest, { recursive: true, verbatimSymlinks: true })`
 * copies it (file bytes and modes, directory modes set after their contents, symlinks as
 * they read), without cpSync's stat of both sides and of every parent for each entry: a
 * test that copies a prepared home for each of a hundred cases pays that per file.
 */
export function copyTree(src: string, dest: string): void {
  const mode = statSync(src).mode & 0o7777;
  mkdirSync(dest);
  for (const e of readdirSync(src, { withFileTypes: true })) {
    const from = join(src, e.name);
    const to = join(dest, e.name);
    if (e.isDirectory()) copyTree(from, to);
    else if (e.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (e.isFile()) copyFileSync(from, to);
    else throw new Error(`copyTree: ${from} is neither a file, a directory nor a symlink`);
  }
  chmodSync(dest, mode);
}

/**
 * `dir` and everything under it removed, symlinks not followed, with the file types the
 * directory listing already gives (rmSync lstats every entry first); whatever that cannot
 * remove goes to rmSync, as before.
 */
export function removeTree(dir: string): void {
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else unlinkSync(p);
    }
    rmdirSync(d);
  };
  try {
    walk(dir);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}
