/**
 * Where an installed extension's files really are: `<store>/<name>` followed
 * through its symlink (a path install links to the user's directory; a store
 * entry may itself be a link to an immutable versioned directory). Every check
 * of an installed tree (verify, list, the stat signature) goes through here, so
 * a change of store layout changes one function. Undefined when it is gone.
 */
import { realpathSync } from 'node:fs';
import type { Paths } from '../paths.js';
import { packageDir } from '../paths.js';

export function resolveInstalledDir(paths: Paths, name: string): string | undefined {
  try {
    // realpath(3) in one call: fs's JavaScript realpathSync lstats every component of the
    // path, for every entry a `list` or `verify` checks.
    return realpathSync.native(packageDir(paths, name));
  } catch {
    return undefined;
  }
}
