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
    return realPathSync(packageDir(paths, name));
  } catch {
    return undefined;
  }
}

/**
 * The real path of `path`, as fs's realpathSync gives it. On Linux that is realpath(3) in one
 * call, where the JavaScript walk lstats every component, for every entry a `list` or `verify`
 * checks; elsewhere the walk: realpath(3) differs there (the volume's case on macOS, a mapped
 * drive's target and RAM disks' EISDIR on Windows).
 */
export const realPathSync: (path: string) => string = process.platform === 'linux' ? realpathSync.native : realpathSync;
