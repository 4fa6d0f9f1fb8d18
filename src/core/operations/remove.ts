/** `remove`: the store entry (only the link, for a path install), the lock entry, settings and secrets. */
import { resolveExtensionName } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { withInstallLock } from '../store/install-lock.js';
import { findEntry, loadLock, type LockEntry } from '../store/lockfile.js';
import { packageDir } from '../paths.js';
import { makeStagingDir, removeDir, sweepStaging } from '../store/staging.js';
import { removePackage } from '../store/transaction.js';
import { lstat } from 'node:fs/promises';

export interface RemoveOutcome {
  name: string;
  removed: { store: boolean; lock: boolean };
  previous?: LockEntry;
}

export async function removeExtension(ctx: Context, input: string): Promise<RemoveOutcome> {
  const name = resolveExtensionName(ctx.paths, input);
  return withInstallLock(ctx, async () => {
    (await sweepStaging(ctx)).forEach((m) => ctx.log.info(`Recovered: ${m}.`));
    const lock = await loadLock(ctx.paths.lockFile);
    const entry = findEntry(lock, name);
    const inStore = await lstat(packageDir(ctx.paths, name)).then(
      () => true,
      () => false,
    );
    if (!entry && !inStore) {
      throw new YepError('E_NOT_INSTALLED', `${name} is not installed.`, { hint: 'Run `yep-ext list` to see installed extensions.' });
    }
    const stage = await makeStagingDir(ctx, `remove-${name}`);
    try {
      await removePackage(ctx, stage, name);
    } finally {
      await removeDir(stage);
    }
    return { name, removed: { store: inStore, lock: Boolean(entry) }, ...(entry ? { previous: entry } : {}) };
  });
}
