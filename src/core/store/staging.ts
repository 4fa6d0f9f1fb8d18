/**
 * Private staging inside the store (a dot-directory, so the host never takes it
 * for a package, and the same filesystem, so placing is one atomic rename).
 * Each run gets its own directory named after its pid; directories of dead
 * processes are swept at the next start.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isYepError, stateIoError } from '../errors.js';
import { ANY_NAME, makeOwnedDir, removeOwned, removeWork, type Custody } from '../fs/custody.js';
import type { Context } from '../context.js';
import { storeCustody } from '../paths.js';
import { deadStages } from './stage-journal.js';
import { recoverStage } from './transaction.js';

/**
 * Recover then remove staging directories whose owning process is gone
 * (crash recovery; caller holds the installer lock). Returns what was done.
 */
export async function sweepStaging(ctx: Context): Promise<string[]> {
  const swept: string[] = [];
  const custody = storeCustody(ctx.paths, 'staging');
  for (const stage of deadStages(ctx)) {
    // A stage that is not a real directory (a link to the user's directory) is never read through: its
    // journal would move what it names. The link itself goes, as a link.
    if (!stage.owned) {
      await removeOwned(custody, stage.name);
      continue;
    }
    let recovered: string | undefined;
    try {
      recovered = await recoverStage(ctx, stage);
    } catch (err) {
      // Not finishable now (settings.toml cannot be written while it still enables
      // a removed extension): keep the journal for the next command, and go on.
      if (!isYepError(err) || err.details?.pending !== true) throw err;
      ctx.log.warn(`Could not finish an interrupted change yet (${err.message}); the next yep-ext command tries again.`);
      continue;
    }
    if (recovered) swept.push(recovered);
    await removeOwned(custody, stage.name);
  }
  return swept;
}

let counter = 0;

/** A fresh, empty, private staging directory (path returned; it exists). */
export async function makeStagingDir(ctx: Context, label: string): Promise<string> {
  const dir = join(ctx.paths.stagingDir, `${process.pid}-${Date.now().toString(36)}-${counter++}-${label.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}`);
  try {
    // Level by level, each checked by the custody guard (a linked .yep-staging is refused).
    await makeOwnedDir(storeCustody(ctx.paths, 'staging'), 0o700);
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if (isYepError(e)) throw e;
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

/** The custody of what a transaction keeps inside its stage (`.yep-staging/<stage>/…`): every entry is its own. */
export function stageCustody(stage: string): Custody {
  const staging = dirname(stage);
  return { base: dirname(staging), owned: [basename(staging), basename(stage)], names: ANY_NAME, what: 'The staging directory' };
}

/** Remove a directory `makeStagingDir` or `makePlanningDir` made (through the custody guard). */
export async function removeDir(dir: string): Promise<void> {
  await removeWork(dir);
}
