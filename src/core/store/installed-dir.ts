/**
 * Where an installed extension's files really are: `<store>/<name>` followed
 * through its symlink (a path install links to the user's directory; a store
 * entry may itself be a link to an immutable versioned directory). Every check
 * of an installed tree (verify, list, the stat signature) goes through here, so
 * a change of store layout changes one function. Undefined when it is gone.
 */
import { realPathOf } from '../fs/real-path.js';
import type { Paths } from '../paths.js';
import { packageDir } from '../paths.js';

export function resolveInstalledDir(paths: Paths, name: string): string | undefined {
  return realPathOf(packageDir(paths, name));
}
