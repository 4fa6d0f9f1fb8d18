/**
 * Whether this process still holds the installer lock of a store it took: the check every
 * change of shared state makes before it changes the disk. settings.toml and connections.toml
 * ask assertLockKept (they live outside the store); everything under the store directory is
 * made and deleted through fs/custody.ts, which asks assertLockKeptUnder, and the
 * transaction's renames and atomic writes of store files ask assertLockKept. A holder loses its lock when the lock's directory is
 * removed, or when its heartbeat stalled past the stale limit (a machine that slept, a process
 * stopped with SIGSTOP) and another process took the lock over as a dead one's; from then on
 * the other process may be writing the same files, so this one must stop before its next
 * write, not finish its work and overwrite the other's. Each change is a journaled
 * transaction, so stopping between two is as safe as a kill. Here (fs) because the settings
 * writers sit below the store that takes the lock (docs/architecture.md, levels).
 */
import { sep } from 'node:path';
import { YepError } from '../errors.js';
import type { Paths } from '../paths.js';

/** Lock files (Paths.installLockFile) this process held and lost, with their store and why; cleared when the hold ends. */
const lost = new Map<string, { paths: Paths; why: unknown }>();

/** The holder of `paths`' lock learned it lost it (proper-lockfile's onCompromised). */
export function markLockLost(paths: Paths, why: unknown): void {
  if (!lost.has(paths.installLockFile)) lost.set(paths.installLockFile, { paths, why });
}

/** The hold is over (released, or ended by the loss): what was lost, if it was. */
export function endLockHold(paths: Paths): unknown {
  const why = lost.get(paths.installLockFile)?.why;
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
  const held = lost.get(paths.installLockFile);
  if (held) throw lockLostError(paths, held.why);
}

/** Before a change under `dir`: refuse it when `dir` is in the store of a lock this process held and lost. */
export function assertLockKeptUnder(dir: string): void {
  for (const { paths, why } of lost.values()) {
    if (dir === paths.storeDir || dir.startsWith(`${paths.storeDir}${sep}`)) throw lockLostError(paths, why);
  }
}
