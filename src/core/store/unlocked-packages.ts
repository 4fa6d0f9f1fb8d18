/**
 * Store entries the lock does not know: `<store>/<name>/plugin.json` with no lock
 * entry for `name` (placed by hand, by an older tool, or a lock that lost its entry).
 * The host discovers packages by listing the store, not the lock, so it loads these:
 * `list` shows them and `verify` fails on them. Dot-directories (staging, state) and
 * names the host's grammar refuses are never packages.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isValidName } from '../package/names.js';
import type { Paths } from '../paths.js';

/** Sorted names of the store's packages that are not in `known` (the lock's names). */
export function unlockedPackages(paths: Paths, known: ReadonlySet<string>): string[] {
  let names: string[];
  try {
    names = readdirSync(paths.storeDir);
  } catch {
    return [];
  }
  return names
    .filter((n) => !n.startsWith('.') && !known.has(n) && isValidName(n))
    .filter((n) => {
      try {
        lstatSync(join(paths.storeDir, n, 'plugin.json'));
        return true;
      } catch {
        return false;
      }
    })
    .sort();
}
