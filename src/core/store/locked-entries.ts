/**
 * The lock entries a command over installed extensions acts on (`update NAME…`,
 * `outdated NAME…`): all of them without names; else each name as typed (the crate
 * spelling works, and so does a source: `update .` in a path install's directory), and a name no entry pins is an error that says what it is: not
 * installed, or in the store with no entry (yolop loads it, and nothing records
 * where it came from, so there is nothing to compare or update it against).
 */
import { YepError } from '../errors.js';
import { notInstalled } from './installed-manifest.js';
import type { Context } from '../context.js';
import { installedNameIn } from './installed-name.js';
import { findEntry, type LockEntry, type Lockfile } from './lockfile.js';
import { unlockedPackages } from './unlocked-packages.js';

export function lockEntriesNamed(ctx: Pick<Context, 'paths' | 'env' | 'cwd'>, lock: Lockfile, names: readonly string[]): LockEntry[] {
  const { paths } = ctx;
  if (names.length === 0) return lock.entries;
  return names.map((n) => {
    const name = installedNameIn(ctx, lock, n);
    const entry = findEntry(lock, name);
    if (entry) return entry;
    // In the store but pinned by nothing: installed for yolop, and `install <name>` would look up another package (the crate).
    if (unlockedPackages(paths, new Set(lock.entries.map((e) => e.name))).includes(name)) {
      throw new YepError(
        'E_NOT_INSTALLED',
        `${name} is in the store (yolop finds it) but no lock entry pins it: nothing records where it came from, so there is nothing to compare or update it against.`,
        { hint: `Install it from its source to pin it (\`yep-ext install <its source>\`), or remove it (\`yep-ext remove ${name}\`).` },
      );
    }
    throw notInstalled(name, `Run \`yep-ext list\` to see what is installed (\`yep-ext install ${name}\` installs it).`);
  });
}
