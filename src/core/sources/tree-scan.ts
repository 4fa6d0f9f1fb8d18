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

function unsafe(message: string, rel: string): YepError {
  return new YepError('E_UNSAFE_PACKAGE', message, {
    hint: 'yep-ext installs only regular files and directories. Ask the extension author to replace links with real files.',
    details: { path: sanitize(rel, { max: 300 }) },
  });
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
      if (st.isSymbolicLink()) {
        const what = relPath === MANIFEST_FILE ? `the manifest ${MANIFEST_FILE} is a symbolic link` : `"${sanitize(relPath)}" is a symbolic link`;
        throw unsafe(`Refusing the package: ${what}${await describeLink(abs)}.`, relPath);
      }
      if (st.isDirectory()) {
        stats.dirs++;
        await walk(abs, relPath);
      } else if (st.isFile()) {
        stats.files++;
        stats.bytes += st.size;
        if (stats.files > limits.maxFiles) {
          throw unsafe(`Refusing the package: it has more than ${limits.maxFiles} files.`, relPath);
        }
        if (stats.bytes > limits.maxBytes) {
          throw unsafe(`Refusing the package: its files add up to more than ${limits.maxBytes} bytes.`, relPath);
        }
      } else {
        throw unsafe(`Refusing the package: "${sanitize(relPath)}" is a special file (fifo, socket or device).`, relPath);
      }
    }
  }
  const top = await lstat(root);
  if (!top.isDirectory()) throw unsafe('Refusing the package: its root is not a directory.', '.');
  await walk(root, '');
  return stats;
}
