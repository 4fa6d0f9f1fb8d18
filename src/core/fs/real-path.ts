/**
 * The one realpath of a path yep-ext checks, as fs's realpathSync gives it. On Linux that is
 * realpath(3) in one call, where the JavaScript walk lstats every component, for every entry a
 * `list` or `verify` checks; elsewhere the walk: realpath(3) differs there (the volume's case
 * on macOS, a mapped drive's target and RAM disks' EISDIR on Windows).
 */
import { realpathSync } from 'node:fs';

const realPathSync: (path: string) => string = process.platform === 'linux' ? realpathSync.native : realpathSync;

/** realPathSync, or undefined when `path` is gone (or cannot be resolved). */
export function realPathOf(path: string): string | undefined {
  try {
    return realPathSync(path);
  } catch {
    return undefined;
  }
}
