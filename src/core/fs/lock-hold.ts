/**
 * Whether this process still holds the installer lock of a store it took: the check every
 * write of shared state makes before it changes the disk (the lock, a transaction's journal,
 * settings.toml, connections.toml, the keychain index, approved grants, custody and MCP records). A holder loses its lock when the lock's directory is
 * removed, or when its heartbeat stalled past the stale limit (a machine that slept, a process
 * stopped with SIGSTOP) and another process took the lock over as a dead one's; from then on
 * the other process may be writing the same files, so this one must stop before its next
 * write, not finish its work and overwrite the other's. Each change is a journaled
 * transaction, so stopping between two is as safe as a kill. Here (fs) because the settings
 * writers sit below the store that takes the lock (docs/architecture.md, levels).
 */
import { YepError } from '../errors.js';
import type { Paths } from '../paths.js';

/** Lock files (Paths.installLockFile) this process held and lost, with why; cleared when the hold ends. */
const lost = new Map<string, unknown>();

/** The holder of `paths`' lock learned it lost it (proper-lockfile's onCompromised). */
export function markLockLost(paths: Paths, why: unknown): void {
  if (!lost.has(paths.installLockFile)) lost.set(paths.installLockFile, why);
}

/** The hold is over (released, or ended by the loss): what was lost, if it was. */
export function endLockHold(paths: Paths): unknown {
  const why = lost.get(paths.installLockFile);
  lost.delete(paths.installLockFile);
  return why;
}

/** The error a lost hold ends its command with. */
export function lockLostError(paths: Paths, why: unknown): YepError {
  return new YepError(
    'E_LOCKED',
    `The installer lock ${paths.installLockFile} was lost while this command held it (${(why as Error)?.message ?? String(why)}); it stopped before its next change.`,
    {
      cause: why,
      hint: 'Another yep-ext process may have taken the lock over and changed the store meanwhile; every change is whole. Run `yep-ext verify` to check the store, then run this command again.',
      details: { file: paths.installLockFile },
    },
  );
}

/** Before a write of shared state: refuse it when this process held `paths`' lock and lost it. */
export function assertLockKept(paths: Paths): void {
  if (lost.has(paths.installLockFile)) throw lockLostError(paths, lost.get(paths.installLockFile));
}
