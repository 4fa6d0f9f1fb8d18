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
import { loadStoreLock, type Lockfile } from './lockfile.js';
import { loadSettingsText, settingsLookup, type SettingsLookup } from '../settings/settings.js';
import { isYepError } from '../errors.js';
import type { InterruptedChange } from './interrupted-changes.js';

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

/**
 * The store's packages no lock entry pins, for a command that read `lock` a while ago (list
 * and verify check every entry first): only when there is a candidate is the lock read again,
 * so a package an install pinned meanwhile is not called unlocked.
 */
export async function unlockedSince(paths: Paths, lock: Lockfile): Promise<string[]> {
  const candidates = unlockedPackages(paths, new Set(lock.entries.map((e) => e.name)));
  if (candidates.length === 0) return candidates;
  const now = await loadStoreLock(paths).catch(() => lock);
  const pinned = new Set(now.entries.map((e) => e.name));
  return candidates.filter((n) => !pinned.has(n));
}

/**
 * Names settings.toml enables (read as the host reads it) that neither `lock` pins nor the
 * store holds: yolop is told to load a package that is not there (a store deleted by hand,
 * a lock and store restored without settings.toml). `yep-ext remove <name>` removes the table.
 */
export function enabledButAbsent(paths: Paths, settingsOf: SettingsLookup, lock: Lockfile): string[] {
  const pinned = new Set(lock.entries.map((e) => e.name));
  return settingsOf.extNames
    .filter((n) => isValidName(n) && !pinned.has(n) && settingsOf(n).enabled)
    .filter((n) => {
      try {
        lstatSync(join(paths.storeDir, n));
        return false;
      } catch {
        return true;
      }
    })
    .sort();
}

/** enabledButAbsent with settings.toml read now; none when it cannot be read or parsed (`list` and `enable` report that). */
export async function enabledButAbsentNow(paths: Paths, lock: Lockfile): Promise<string[]> {
  try {
    return enabledButAbsent(paths, settingsLookup(await loadSettingsText(paths), paths.settingsFile), lock);
  } catch (e) {
    if (!isYepError(e)) throw e;
    return [];
  }
}

/** The problem line `list` and `verify` show for one of enabledButAbsent's names. */
export const enabledButAbsentMessage = (name: string): string =>
  `enabled in settings.toml but not installed: yolop cannot load it (\`yep-ext remove ${name}\` removes its settings, or install it)`;

/**
 * An unlocked package a dead process's transaction left behind (interrupted-changes.ts): not
 * placed by hand, and reinstalling is not what puts it right; the next command that takes
 * the installer lock finishes a removal, or rolls back an install the lock does not pin yet.
 */
export const interruptedMessage = (name: string, op: InterruptedChange): string =>
  op === 'remove'
    ? `not in extensions.lock: its removal was interrupted after the lock dropped it (yolop still finds it until the removal is finished); \`yep-ext remove ${name}\`, or any yep-ext command that changes something, finishes it`
    : `not in extensions.lock: its ${op} was interrupted before the lock pinned it (yolop finds it until the next yep-ext command that changes something rolls it back); run the ${op} again, or \`yep-ext remove ${name}\``;

/**
 * A pinned extension whose store entry a killed install or update already switched to
 * the new version while the lock still pins the old one: not damage, a half-done change
 * that the next command taking the installer lock rolls back (or completes, when the
 * lock write had happened).
 */
export const interruptedPinnedMessage = (name: string, op: Exclude<InterruptedChange, 'remove'>): string =>
  `its ${op} was interrupted: yolop may load the new version while extensions.lock still pins the old one, until the next yep-ext command that changes something rolls it back (or finishes it); then run the ${op} of ${name} again`;
