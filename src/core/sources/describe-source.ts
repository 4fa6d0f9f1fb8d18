/** One-line human description of where a locked package comes from (list, install, update output). */
import type { LockSource } from '../store/lockfile.js';

export function describeSource(s: LockSource): string {
  switch (s.type) {
    case 'path':
      return s.path;
    case 'git':
      return `${s.url}#${s.rev.slice(0, 12)}`;
    case 'crate':
      return `crates.io:${s.crate_name}@${s.version}`;
  }
}
