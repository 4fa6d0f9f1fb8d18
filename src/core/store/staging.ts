/**
 * Private staging inside the store (a dot-directory, so the host never takes it
 * for a package, and the same filesystem, so placing is one atomic rename).
 * Each run gets its own directory named after its pid; directories of dead
 * processes are swept at the next start.
 */
import { mkdir, mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { errnoCode, isYepError, stateIoError } from '../errors.js';
import { isProcessAlive } from '../fs/temp-files.js';
import type { Context } from '../context.js';
import { recoverStage } from './transaction.js';

/**
 * Recover then remove staging directories whose owning process is gone
 * (crash recovery; caller holds the installer lock). Returns what was done.
 */
export async function sweepStaging(ctx: Context): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(ctx.paths.stagingDir);
  } catch {
    return [];
  }
  const swept: string[] = [];
  for (const e of entries) {
    const pid = Number(/^(\d+)-/.exec(e)?.[1]);
    if (pid && isProcessAlive(pid)) continue;
    let recovered: string | undefined;
    try {
      recovered = await recoverStage(ctx, join(ctx.paths.stagingDir, e));
    } catch (err) {
      // Not finishable now (settings.toml cannot be written while it still enables
      // a removed extension): keep the journal for the next command, and go on.
      if (!isYepError(err) || err.details?.pending !== true) throw err;
      ctx.log.warn(`Could not finish an interrupted change yet (${err.message}); the next yep-ext command tries again.`);
      continue;
    }
    if (recovered) swept.push(recovered);
    await rm(join(ctx.paths.stagingDir, e), { recursive: true, force: true });
  }
  return swept;
}

let counter = 0;

/** A fresh, empty, private staging directory (path returned; it exists). */
export async function makeStagingDir(ctx: Context, label: string): Promise<string> {
  const dir = join(ctx.paths.stagingDir, `${process.pid}-${Date.now().toString(36)}-${counter++}-${label.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    // The first write of a home (the store does not exist yet): name what could not be made.
    if (!existsSync(ctx.paths.storeDir)) throw stateIoError('create the extension store at', ctx.paths.storeDir, e);
    throw stateIoError('create a staging directory in', ctx.paths.stagingDir, e);
  }
  return dir;
}

/**
 * Where a plan fetches and checks: the store's staging directory, or for a dry run a
 * private directory under the system's temp dir, so that a run that promises to change
 * nothing leaves the store (even .yep-staging's mtime, or its creation) as it was.
 */
export async function makePlanningDir(ctx: Context, label: string, dryRun: boolean): Promise<string> {
  return dryRun ? mkdtemp(join(tmpdir(), 'yep-ext-plan-')) : makeStagingDir(ctx, label);
}

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
  if (created.includes(ctx.paths.storeDir)) await rm(ctx.paths.cacheDir, { recursive: true, force: true }).catch(() => undefined);
  for (const dir of created) {
    try {
      await rmdir(dir);
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') continue; // never made (a dry run stages elsewhere)
      return; // not empty: it and its ancestors stay
    }
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 2 });
}
