/**
 * What a command that places nothing must not leave behind in a never-used home: the
 * directories it may create on its way (the config dir, the store, .yep-staging, the caches
 * written into a store it created). Noted before anything is read, taken away after.
 * Small on purpose: read-only commands (info, search) load it.
 */
import { existsSync, readdirSync, rmdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Context } from '../context.js';
import { errnoCode } from '../errors.js';
import { removeOwned } from '../fs/custody.js';
import { rootCustody } from '../paths.js';

/**
 * The directories an install could create in a never-used home, innermost first: the
 * staging directory and each ancestor that does not exist yet (on a never-used home:
 * .yep-staging, the store, the config dir).
 */
export function missingForStage(ctx: Context): string[] {
  const missing: string[] = [];
  for (let dir = ctx.paths.stagingDir; !existsSync(dir); dir = dirname(dir)) {
    missing.push(dir);
    if (dirname(dir) === dir) break;
  }
  return missing;
}

/** The runs of this process at work in one home (keyed by its staging directory). */
interface Runs {
  open: number;
  placed: boolean;
  /** Noted by the first of them, before any of them created anything. */
  created: string[];
}
const runsByHome = new Map<string, Runs>();

/**
 * Note what a run may create in this home; call the returned function once when the run
 * ends, saying whether it placed anything. The directories go only when the LAST run of
 * this process in this home has ended and none of them placed anything: `install a b`
 * plans both at once, and the one that fails first must not take the store (and its lock
 * file's directory, its caches) from under the other, which is still fetching.
 */
export function noteCreated(ctx: Context): (placed: boolean) => Promise<void> {
  const key = ctx.paths.stagingDir;
  let runs = runsByHome.get(key);
  if (runs === undefined) {
    runs = { open: 0, placed: false, created: missingForStage(ctx) };
    runsByHome.set(key, runs);
  }
  const mine = runs;
  mine.open++;
  let ended = false;
  return async (placed) => {
    if (ended) return;
    ended = true;
    if (placed) mine.placed = true;
    if (--mine.open > 0) return;
    if (runsByHome.get(key) === mine) runsByHome.delete(key);
    if (!mine.placed) await pruneCreated(ctx, mine.created);
  };
}

/**
 * Undo `missingForStage`'s directories after a run that placed nothing: each is removed
 * only while empty (rmdir, innermost first), so what anything else put there (another
 * run's stage, a package committed meanwhile) keeps it. A store this run created loses its
 * caches first (the agent's version, index files: caches, written on the way). An install
 * that failed before it placed anything leaves the home as it found it.
 */
export async function pruneCreated(ctx: Context, created: string[]): Promise<void> {
  // Caches only while the store holds nothing else (a package committed meanwhile keeps the store, and its caches).
  // Through the custody guard: only a real .yep-cache goes (a link is removed as a link, never followed).
  if (created.includes(ctx.paths.storeDir) && storeHoldsOnlyCaches(ctx))
    await removeOwned(rootCustody(ctx.paths.storeDir, /^\.yep-cache$/, 'The extension store'), basename(ctx.paths.cacheDir)).catch(() => undefined);
  for (const dir of created) {
    try {
      rmdirSync(dir);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') continue; // never made (a dry run stages elsewhere)
      return; // not empty: it and its ancestors stay
    }
  }
}

/**
 * The store holds the caches and an empty staging directory, nothing else. A stage in
 * .yep-staging is another run at work in this same new store (a fleet script's parallel first
 * installs): the caches it is writing stay, as its packages will.
 */
function storeHoldsOnlyCaches(ctx: Context): boolean {
  const scratch = new Set([basename(ctx.paths.cacheDir), basename(ctx.paths.stagingDir)]);
  if (!namesIn(ctx.paths.storeDir).every((n) => scratch.has(n))) return false;
  return namesIn(ctx.paths.stagingDir).length === 0;
}

function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
