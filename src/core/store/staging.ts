/**
 * Private staging inside the store (a dot-directory, so the host never takes it
 * for a package, and the same filesystem, so placing is one atomic rename).
 * Each run gets its own directory named after its pid; directories of dead
 * processes are swept at the next start.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stateIoError } from '../errors.js';
import type { Context } from '../context.js';
import { recoverStage } from './transaction.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

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
    if (pid && pid !== process.pid && isAlive(pid)) continue;
    if (pid === process.pid) continue;
    const recovered = await recoverStage(ctx, join(ctx.paths.stagingDir, e));
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
    throw stateIoError('create a staging directory in', ctx.paths.stagingDir, e);
  }
  return dir;
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 2 });
}
