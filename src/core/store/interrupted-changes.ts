/**
 * Read-only, without the installer lock: which transactions a dead process left half done
 * (transaction.ts writes the journals and recoverStage finishes them).
 */
import type { Context } from '../context.js';
import { deadStages, readStageJournal } from './stage-journal.js';
/** What a dead process was doing to a name: a removal, or placing a package for an install or an update. */
export type InterruptedChange = 'remove' | 'install' | 'update';

/**
 * The names a dead process left a transaction of behind (a journal in staging), with its
 * kind: `remove`, committed (the lock no longer pins it) but not finished (a killed
 * `remove`, or one whose settings.toml write failed), which the next command that takes
 * the installer lock completes; `install` or `update` (a place, and what it was part of),
 * killed part-way, which that command completes when the lock has its entry and otherwise
 * rolls back (a fresh install not yet pinned is taken away; an update goes back to the
 * pinned version). Read only, without the lock, for the readers that would otherwise call
 * such a package "placed by hand" or "edited" (list, verify, info) and for `remove`,
 * whose own recovery may then be what takes it away.
 */
export function interruptedChanges(ctx: Context): Map<string, InterruptedChange> {
  const names = new Map<string, InterruptedChange>();
  for (const stage of deadStages(ctx)) {
    if (!stage.owned) continue;
    try {
      const journal = readStageJournal(stage) as { op?: unknown; name?: unknown; intent?: unknown } | undefined;
      if (typeof journal?.name !== 'string') continue;
      if (journal.op === 'remove') names.set(journal.name, 'remove');
      else if (journal.op === 'place') names.set(journal.name, journal.intent === 'update' ? 'update' : 'install');
    } catch {
      // Unreadable: recovery reports it when it takes the lock.
    }
  }
  return names;
}
