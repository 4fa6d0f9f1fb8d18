/**
 * `remove`: the store entry (only the link, for a path install), the lock entry, settings and secrets.
 * A name with neither a store entry nor a lock entry but a settings table, secrets or yep-ext's
 * own files of it left behind (yolop's `remove`, which deletes `<store>/<name>` only; a store
 * deleted by hand; a crash of an older version) is cleaned up too: the host still reads that
 * table, and no other command would remove them (store/leftovers.ts).
 */
import { resolveInstalled } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { storeExists, withInstallLock } from '../store/install-lock.js';
import { notInstalled as notInstalledError } from '../store/installed-manifest.js';
import { findEntry, loadStoreLock, type LockEntry } from '../store/lockfile.js';
import { packageDir } from '../paths.js';
import { makeStagingDir, removeDir, sweepStaging } from '../store/staging.js';
import { removePackage } from '../store/transaction.js';
import { interruptedChanges } from '../store/interrupted-changes.js';
import { lstat } from 'node:fs/promises';
import { applySettingsEdit, loadSettingsText } from '../settings/settings.js';
import { secretStatus } from '../settings/secrets.js';
import { disableForRemoval, removeGrantAndSecrets } from '../store/state-cleanup.js';
import { findLeftovers, formatBytes, removeLeftovers, type Leftover } from '../store/leftovers.js';

export interface RemoveOutcome {
  name: string;
  /** What this run took away, each read from the files before and after (not what it tried). */
  removed: { store: boolean; lock: boolean; settings: boolean; secrets: boolean; files: boolean };
  previous?: LockEntry;
  /** yep-ext's files of a name that was not installed (version directories, grant, stat signature), as found before. */
  leftovers?: { paths: string[]; bytes: number };
}

interface Leftovers {
  settings: boolean;
  secrets: boolean;
  /** yep-ext's own files of it remain (store/leftovers.ts): only for a name neither the lock nor the store has. */
  files?: Leftover;
}

/** A state file yep-ext reports as unreadable or uneditable counts as nothing found; anything else is a bug and is thrown. */
function nothingFound(e: unknown): false {
  if (!isYepError(e)) throw e;
  return false;
}

/** Whether settings.toml has a table for `name` and whether any secret of it is stored. An unreadable file counts as nothing found (the commands that edit it report it). */
async function leftoversOf(ctx: Context, name: string): Promise<Leftovers> {
  // A file this tool cannot edit (an inline capabilities array) counts as nothing found too:
  // the removal itself decides on it, refusing while it still enables the extension.
  const settings = await loadSettingsText(ctx.paths)
    .then((text) => applySettingsEdit(text, name, { op: 'remove' }, ctx.paths.settingsFile).changed)
    .catch(nothingFound);
  const secrets = await secretStatus(ctx.paths, name)
    .then((s) => s.file.length + s.keychain.length > 0)
    .catch(nothingFound);
  const [files] = findLeftovers(ctx.paths, new Set(), name);
  return { settings, secrets, ...(files ? { files } : {}) };
}

/** "settings and secrets", "settings, secrets and files (1.2 MB)", "files (1.2 MB)". */
export function describeLeftovers(l: { settings: boolean; secrets: boolean; files?: boolean | Leftover }, bytes?: number): string {
  const size = typeof l.files === 'object' ? l.files.bytes : bytes;
  const parts = [l.settings ? 'settings' : '', l.secrets ? 'secrets' : '', l.files ? `files${size !== undefined ? ` (${formatBytes(size)})` : ''}` : ''].filter(
    Boolean,
  );
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : (parts[0] ?? '');
}

// One wording for every command (installed-manifest.ts); remove's hint never suggests installing.
const notInstalled = (name: string): YepError => notInstalledError(name, 'Run `yep-ext list` to see what is installed.');

export async function removeExtension(ctx: Context, input: string): Promise<RemoveOutcome> {
  const name = await resolveInstalled(ctx, input);
  // No store and nothing left behind: refused without creating the store for its lock.
  if (!storeExists(ctx)) {
    const left = await leftoversOf(ctx, name);
    if (!left.settings && !left.secrets) throw notInstalled(name);
  }
  // A transaction of this very name that a dead process left behind (a removal committed but
  // not finished, an install not yet pinned): the lock's recovery below finishes the removal or
  // rolls the install back, and taking it away so is this command's work, not "not installed"
  // (exit 3). What the files held is read now, before the recovery changes them.
  const interrupted = interruptedChanges(ctx).has(name)
    ? {
        store: await lstat(packageDir(ctx.paths, name)).then(
          () => true,
          () => false,
        ),
        ...(await leftoversOf(ctx, name)),
      }
    : undefined;
  return withInstallLock(ctx, async () => {
    for (const m of await sweepStaging(ctx)) ctx.log.info(`Recovered: ${m}.`);
    const lock = await loadStoreLock(ctx.paths);
    const entry = findEntry(lock, name);
    const inStore = await lstat(packageDir(ctx.paths, name)).then(
      () => true,
      () => false,
    );
    const before = await leftoversOf(ctx, name);
    if (!entry && !inStore && !before.settings && !before.secrets && !before.files && interrupted && !interruptedChanges(ctx).has(name)) {
      // Taken away by the recovery: say what it took (the lock did not pin it by then).
      const removed = {
        store: interrupted.store,
        lock: false,
        settings: interrupted.settings,
        secrets: interrupted.secrets,
        files: Boolean(interrupted.files),
      };
      if (removed.store || removed.settings || removed.secrets || removed.files) return { name, removed };
    }
    if (!entry && !inStore) {
      if (!before.settings && !before.secrets && !before.files) throw notInstalled(name);
      // Each step is idempotent: a crash part-way leaves less for the next `remove` to do.
      await disableForRemoval(ctx, name);
      await removeGrantAndSecrets(ctx, name);
      if (before.files) await removeLeftovers(ctx.paths, before.files);
    } else {
      const stage = await makeStagingDir(ctx, `remove-${name}`);
      try {
        await removePackage(ctx, stage, name);
      } finally {
        await removeDir(stage);
      }
    }
    const after = await leftoversOf(ctx, name);
    const removed = {
      store: inStore,
      lock: Boolean(entry),
      settings: before.settings && !after.settings,
      secrets: before.secrets && !after.secrets,
      // yep-ext's own files of a name that was not installed (an installed one's go with it, unreported as leftovers).
      files: !entry && !inStore && Boolean(before.files) && !after.files,
    };
    if (!entry && !inStore && (after.settings || after.secrets || after.files)) {
      throw new YepError('E_STATE', `${name} is not installed, and its ${describeLeftovers(after)} could not be removed.`, {
        hint: `See the warnings above; remove the ext:${name} tables by hand.`,
      });
    }
    return {
      name,
      removed,
      ...(entry ? { previous: entry } : {}),
      ...(!entry && !inStore && before.files ? { leftovers: { paths: before.files.paths, bytes: before.files.bytes } } : {}),
    };
  });
}
