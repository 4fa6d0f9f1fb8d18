/**
 * The stages dead processes left in `.yep-staging`, and the journal each holds: the one reading
 * shared by the sweep that finishes them (staging.ts, under the installer lock) and the
 * read-only report of what they were doing (interrupted-changes.ts, for list, verify, info and
 * remove). Kept apart from transaction.ts, which writes the journals, so that `list` reads them
 * without loading the writers.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { isOwnedDir } from '../fs/custody.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { isProcessAlive } from '../fs/temp-files.js';
import { oneStageCustody, storeCustody } from '../paths.js';

/** transaction.ts's journal file in each stage. */
export const JOURNAL_FILE = 'journal.json';

export interface DeadStage {
  /** Its name in `.yep-staging` (`<pid>-...`). */
  name: string;
  path: string;
  /**
   * False for a stage that is not a real directory of yep-ext's (a link to the user's directory):
   * never read through, since its journal would move what it names; the sweep removes the link itself.
   */
  owned: boolean;
}

/** The stages whose process is gone, by the names yep-ext gives its stages only; none without a staging dir. */
export function deadStages(ctx: Context): DeadStage[] {
  let entries: string[];
  try {
    entries = readdirSync(ctx.paths.stagingDir);
  } catch {
    return [];
  }
  const names = storeCustody(ctx.paths, 'staging').names;
  const dead: DeadStage[] = [];
  for (const name of entries) {
    const digits = /^(\d+)-/.exec(name)?.[1];
    if (digits === undefined || !names.test(name)) continue;
    // No process has pid 0 (kill(0) would ask about this process group): such a stage is a dead one's.
    const pid = Number(digits);
    if (pid > 0 && isProcessAlive(pid)) continue;
    dead.push({ name, path: join(ctx.paths.stagingDir, name), owned: isOwnedDir(oneStageCustody(ctx.paths, name)) });
  }
  return dead;
}

/**
 * The journal in an owned stage, parsed: undefined when there is none or it is not JSON (a
 * stage killed before its journal was whole holds nothing that was moved). A journal that is
 * not a regular file is refused (E_STATE) rather than read: a FIFO would block.
 */
export function readStageJournal(stage: DeadStage): unknown {
  const text = readRegularTextSync(join(stage.path, JOURNAL_FILE), 'The transaction journal', { followSymlinks: false });
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
