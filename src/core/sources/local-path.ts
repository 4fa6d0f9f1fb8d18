/**
 * Local path source: the package is referenced in place (the authoring loop), so
 * the "fetch" is only canonicalising and checking the directory. The store gets
 * a symlink to it, which the host's discovery follows.
 */
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { YepError, errnoCode } from '../errors.js';
import type { PathSpec } from './spec.js';
import type { Fetched } from './source.js';
import { isInside } from '../fs/path-inside.js';
import { realPathOf } from '../fs/real-path.js';

/** A directory as the lock records a path install's (through symlinks when it exists). */
export function canonicalDir(dir: string): string {
  return realPathOf(dir) ?? resolve(dir);
}

export interface PathRecord {
  type: 'path';
  /** Canonical absolute directory the store entry links to. */
  path: string;
  [extra: string]: unknown;
}

/**
 * `storeDir` guards against linking the store to itself: a directory inside the
 * store (a hand-placed package) would be moved aside and deleted by the swap.
 */
export async function fetchPath(spec: PathSpec, storeDir?: string): Promise<Fetched<PathRecord>> {
  let dir: string;
  try {
    dir = await realpath(spec.path);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') {
      throw new YepError('E_NOT_FOUND', `No such directory: ${spec.path}.`, { hint: 'Check the path; local sources are directories holding a plugin.json.' });
    }
    throw new YepError('E_NOT_FOUND', `Cannot read ${spec.path}: ${errnoCode(e) ?? String(e)}`, { cause: e });
  }
  if (!(await stat(dir)).isDirectory()) {
    throw new YepError('E_USAGE', `${spec.path} is not a directory.`, { hint: 'Pass the package directory (the one holding plugin.json).' });
  }
  if (storeDir) {
    const store = await realpath(storeDir).catch(() => storeDir);
    if (isInside(store, dir)) {
      throw new YepError('E_USAGE', `${spec.path} is inside the extension store (${store}); it cannot be installed from there.`, {
        hint: 'Move the package out of the store (e.g. to ~/src/<name>) and install it from there; path installs are linked in place.',
      });
    }
  }
  return { dir, source: { type: 'path', path: dir } };
}
