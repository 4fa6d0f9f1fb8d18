/**
 * Read-only, without the installer lock: which removals a dead process left half done
 * (transaction.ts writes the journals and recoverStage finishes them). Kept out of
 * transaction.ts so that `list` reads it without loading the writers.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { isProcessAlive } from '../fs/temp-files.js';

/** transaction.ts's journal file name in each staging directory. */
const JOURNAL = 'journal.json';

/**
 * The names whose removal a dead process committed (the lock no longer pins them) but did not
 * finish: a killed `remove`, or one whose settings.toml write failed. Their packages and
 * settings are still there, and the next command that takes the installer lock completes
 * each removal (recoverStage). Read only, without the lock, for the readers that would
 * otherwise call such a package "placed by hand" (list, verify, info) and for `remove`,
 * whose own recovery may then be what removes it.
 */
export function interruptedRemovals(ctx: Context): Set<string> {
  const names = new Set<string>();
  let stages: string[];
  try {
    stages = readdirSync(ctx.paths.stagingDir);
  } catch {
    return names;
  }
  for (const e of stages) {
    const pid = Number(/^(\d+)-/.exec(e)?.[1]);
    if (!pid || isProcessAlive(pid)) continue;
    try {
      const text = readRegularTextSync(join(ctx.paths.stagingDir, e, JOURNAL), 'The transaction journal', { followSymlinks: false });
      const journal = text === undefined ? undefined : (JSON.parse(text) as { op?: unknown; name?: unknown });
      if (journal?.op === 'remove' && typeof journal.name === 'string') names.add(journal.name);
    } catch {
      // Unreadable: recovery reports it when it takes the lock.
    }
  }
  return names;
}
