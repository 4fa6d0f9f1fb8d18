/**
 * Names of yep-ext's temp files, and the sweep of those whose writer died.
 *
 * A temp file for `<dir>/<base>` is `<dir>/.<base>.yep-<pid>-<n>.tmp`: in the same
 * directory (so the final rename is atomic), a dot-file (the host never takes it
 * for a package), naming the writing process (so a sweep can tell a crashed
 * writer's leftover from a live writer's file: only the first is removed) and a
 * per-process counter (two writes in one process never share a name).
 *
 * Only names of this exact form are ever swept. A `<base>.<digits>` file beside a
 * state file (`settings.toml.1`, `extensions.lock.2`) is what users and backup tools
 * name their copies: it is never taken for a temp, whoever wrote it.
 */
import { readdirSync } from 'node:fs';
import { custodyDir, removeOwned, type Custody } from './custody.js';

const TEMP = /^\.(.+)\.yep-(\d+)-(\d+)\.tmp$/;

let counter = 0;

/** The temp file name for `base` in this process (unique per call). */
export function tempNameFor(base: string): string {
  return `.${base}.yep-${process.pid}-${counter++}.tmp`;
}

/** Whether process `pid` exists (EPERM: it does, owned by someone else). */
export function isProcessAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The writer pid of a yep-ext temp file name, or undefined when `name` is not one (of `base`, when given). */
function tempWriter(name: string, base?: string): number | undefined {
  const m = TEMP.exec(name);
  if (!m || (base !== undefined && m[1] !== base)) return undefined;
  const pid = Number(m[2]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

export interface SweepOptions {
  /** Only temps of this file name (default: any yep-ext temp in the directory). */
  base?: string;
}

/** Where temps are swept: a directory of the user's (the config dir, the store), or one of yep-ext's own (fs/custody.ts). */
export type SweepPlace = string | Omit<Custody, 'names'>;

/**
 * Remove the temp files in `place` whose writer is dead. Returns the names removed.
 * A missing directory is nothing to sweep; one yep-ext owns that is a symlink is refused
 * (fs/custody.ts), and each removal goes through that guard.
 */
export async function sweepDeadTemps(place: SweepPlace, options: SweepOptions = {}): Promise<string[]> {
  const where: Omit<Custody, 'names'> = typeof place === 'string' ? { base: place, owned: [], what: 'The directory' } : place;
  const dir = custodyDir({ ...where, names: /$^/ });
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const dead = names.filter((n) => {
    const pid = tempWriter(n, options.base);
    return pid !== undefined && !isProcessAlive(pid);
  });
  const custody: Custody = { ...where, names: { test: (n) => dead.includes(n) } };
  const removed: string[] = [];
  for (const n of dead) if (await removeOwned(custody, n, { keep: (st) => st.isDirectory() })) removed.push(n);
  return removed;
}
