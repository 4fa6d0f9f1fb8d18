/**
 * lstat-scan of a fetched package tree before anything in it is read (hardening
 * C24). Policy: only regular files and directories. Every symlink is refused --
 * not only those that leave the tree -- because the host's content hash skips
 * symlinks, so a link's target could change without changing the pinned hash,
 * and a link to ~/.ssh/id_ed25519 named plugin.json would be read as the manifest.
 * Special files (fifos, sockets, devices) are refused too. Counts and sizes are
 * capped so a small download cannot expand into a disk-filling tree.
 */
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { MANIFEST_FILE } from '../package/manifest.js';
import { sanitize } from '../text/sanitize.js';

export interface TreeLimits {
  /** Most regular files a package may hold. */
  maxFiles: number;
  /** Most bytes (sum of regular file sizes) a package may hold. */
  maxBytes: number;
}

export interface TreeStats {
  files: number;
  dirs: number;
  bytes: number;
}

const ONLY_FILES_HINT = 'yep-ext installs only regular files and directories. Ask the extension author to replace links with real files.';

function unsafe(message: string, rel: string, hint?: string): YepError {
  return new YepError('E_UNSAFE_PACKAGE', message, { ...(hint ? { hint } : {}), details: { path: sanitize(rel, { max: 300 }) } });
}

/**
 * The package rules' refusals, one statement each for both places that check them: this scan
 * of the tree on disk, and git's own listing of a commit before anything is checked out
 * (git.ts inspectTree). `target`: how the link reads on disk (` -> "…"`, or '' when unreadable).
 */
export function symlinkRefusal(rel: string, target?: string): YepError {
  const manifest = rel === MANIFEST_FILE;
  // On disk the link's target is shown; git's listing (before checkout) names no target.
  const what =
    target === undefined
      ? `"${sanitize(rel)}" is a symbolic link${manifest ? ' (the manifest itself)' : ''}`
      : `${manifest ? `the manifest ${MANIFEST_FILE}` : `"${sanitize(rel)}"`} is a symbolic link${target}`;
  return unsafe(`Refusing the package: ${what}.`, rel, ONLY_FILES_HINT);
}

/** More regular files than the cap (`count`: how many, when known). */
export function tooManyFilesRefusal(max: number, rel: string, count?: number): YepError {
  return unsafe(`Refusing the package: it has ${count !== undefined ? `${count} files (more than ${max})` : `more than ${max} files`}.`, rel);
}

/** More bytes than the cap (`total`: how many, when known). */
export function tooManyBytesRefusal(max: number, rel: string, total?: number): YepError {
  return unsafe(`Refusing the package: its files add up to ${total !== undefined ? `${total} bytes (more than ${max})` : `more than ${max} bytes`}.`, rel);
}

async function describeLink(path: string): Promise<string> {
  try {
    return ` -> ${JSON.stringify(sanitize(await readlink(path), { max: 200 }))}`;
  } catch {
    return '';
  }
}

/**
 * Walk `root` with lstat (never following links). Throws E_UNSAFE_PACKAGE on the
 * first symlink or special file and when a limit is exceeded.
 */
export async function scanPackageTree(root: string, limits: TreeLimits): Promise<TreeStats> {
  const stats: TreeStats = { files: 0, dirs: 0, bytes: 0 };
  async function walk(dir: string, rel: string): Promise<void> {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const abs = join(dir, name);
      const relPath = rel === '' ? name : `${rel}/${name}`;
      const st = await lstat(abs);
      if (st.isSymbolicLink()) throw symlinkRefusal(relPath, await describeLink(abs));
      if (st.isDirectory()) {
        stats.dirs++;
        await walk(abs, relPath);
      } else if (st.isFile()) {
        stats.files++;
        stats.bytes += st.size;
        if (stats.files > limits.maxFiles) throw tooManyFilesRefusal(limits.maxFiles, relPath);
        if (stats.bytes > limits.maxBytes) throw tooManyBytesRefusal(limits.maxBytes, relPath);
      } else {
        throw unsafe(`Refusing the package: "${sanitize(relPath)}" is a special file (fifo, socket or device).`, relPath, ONLY_FILES_HINT);
      }
    }
  }
  const top = await lstat(root);
  if (!top.isDirectory()) throw unsafe('Refusing the package: its root is not a directory.', '.', ONLY_FILES_HINT);
  await walk(root, '');
  return stats;
}
