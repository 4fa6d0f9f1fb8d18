/**
 * What a command that places nothing must not leave behind in a never-used home: the
 * directories it may create on its way (the config dir, the store, .yep-staging, the caches
 * written into a store it created). Noted before anything is read, taken away after.
 * Small on purpose: read-only commands (info, search) load it.
 */
import { existsSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Context } from '../context.js';
import { errnoCode } from '../errors.js';

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

/**
 * Undo `missingForStage`'s directories after a run that placed nothing: each is removed
 * only while empty (rmdir, innermost first), so what anything else put there (another
 * run's stage, a package committed meanwhile) keeps it. A store this run created loses its
 * caches first (the agent's version, index files: caches, written on the way). An install
 * that failed before it placed anything leaves the home as it found it.
 */
export async function pruneCreated(ctx: Context, created: string[]): Promise<void> {
  // Caches only while the store holds nothing else (a package committed meanwhile keeps the store, and its caches).
  if (created.includes(ctx.paths.storeDir) && (await storeHoldsOnlyCaches(ctx))) await rm(ctx.paths.cacheDir, { recursive: true, force: true }).catch(() => undefined);
  for (const dir of created) {
    try {
      await rmdir(dir);
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
async function storeHoldsOnlyCaches(ctx: Context): Promise<boolean> {
  const names = await readdir(ctx.paths.storeDir).catch(() => [] as string[]);
  const scratch = new Set([basename(ctx.paths.cacheDir), basename(ctx.paths.stagingDir)]);
  if (!names.every((n) => scratch.has(n))) return false;
  return (await readdir(ctx.paths.stagingDir).catch(() => [] as string[])).length === 0;
}
