/**
 * Crash recovery, run by the first holder of the installer lock in each command run
 * (install-lock.ts), so whichever command runs next after a crash recovers:
 *   1. finish or undo the transactions of dead processes (staging journals);
 *   2. remove package versions no store entry points at, of extensions still
 *      installed (package-versions.ts; those of a name the host removed are reported
 *      by `list` and `verify`, and deleted by `yep-ext remove <name>`);
 *   3. remove temp files of dead writers beside every state file: the lock, the
 *      keychain index, approved grants and index cache entries in the store, and
 *      settings.toml and connections.toml in the config directory (a temp of
 *      connections.toml may hold a secret). Only yep-ext's own temp names whose
 *      writer is dead are touched (temp-files.ts): a `<base>.<digits>` file is a
 *      user's backup, never a temp;
 *   4. reconcile set-secret's two files: a field both connections.toml and the
 *      keychain index name is the file's, so the index stops naming it;
 *   5. write back the keys of lock entries that a yolop lock write dropped while
 *      the content is still the one yep-ext recorded (custody.ts).
 */
import { lstatSync, readdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Context } from '../context.js';
import { inspectRegularFile } from '../fs/read-regular-file.js';
import { sweepUnreferencedVersions } from './package-versions.js';
import { loadStoreLock } from './lockfile.js';
import { storeCustody } from '../paths.js';
import { sweepStaging } from './staging.js';
import { describeRestored, restoreCustody } from './custody.js';
import { sweepDeadTemps } from '../fs/temp-files.js';
import { isYepError } from '../errors.js';
import { dropShadowedKeychainEntries } from '../settings/secrets.js';

/** Recover the home after crashes. Caller holds the installer lock. Returns what was recovered, for `Recovered: …`. */
export async function recoverHome(ctx: Context): Promise<string[]> {
  const recovered = await sweepStaging(ctx);
  // What a yolop lock write dropped from entries whose content is still the one recorded (custody.ts).
  recovered.push(...describeRestored(await restoreCustody(ctx)));
  // A lock that cannot be read names nothing installed: then nothing is swept (the command reports the lock).
  await sweepUnreferencedVersions(ctx.paths, async () => {
    const lock = await loadStoreLock(ctx.paths).catch(() => undefined);
    return lock ? new Set(lock.entries.map((e) => e.name)) : undefined;
  });
  await sweepStateTemps(ctx);
  try {
    await dropShadowedKeychainEntries(ctx.paths);
  } catch (e) {
    // An unreadable secrets file or index is the next command's to report, not recovery's.
    if (!isYepError(e)) throw e;
  }
  return recovered;
}

/** The directory and name of the file a state file's writes replace (settings.toml may be a symlink). */
async function writtenFile(file: string): Promise<{ dir: string; base: string }> {
  try {
    if (inspectRegularFile(file, 'The settings file')?.symlinkTarget !== undefined) {
      const real = realpathSync(file);
      return { dir: dirname(real), base: basename(real) };
    }
  } catch {
    // Not a readable regular file: nothing was written through it.
  }
  return { dir: dirname(file), base: basename(file) };
}

async function sweepStateTemps(ctx: Context): Promise<void> {
  const { paths } = ctx;
  // The store: any dead yep-ext temp (the lock's, the keychain index's).
  await sweepDeadTemps(paths.storeDir);
  await sweepDeadTemps(storeCustody(paths, 'grants'));
  // Stat signatures (tree-state.ts): a cache, but its temps are a dead writer's leftovers all the same.
  await sweepDeadTemps(storeCustody(paths, 'state'));
  // What doctor last saw contributed MCP servers offer (mcp-record.ts).
  await sweepDeadTemps(storeCustody(paths, 'mcp'));
  // The config directory: settings.toml and connections.toml (and the file a symlinked settings.toml points at).
  await sweepDeadTemps(paths.configDir);
  const settings = await writtenFile(paths.settingsFile);
  if (settings.dir !== paths.configDir) await sweepDeadTemps(settings.dir, { base: settings.base });
  // Index cache entries (written outside the lock, so only temps whose writer is dead).
  const index = join(paths.cacheDir, 'index');
  let shards: string[] = [];
  try {
    shards = readdirSync(index);
  } catch {
    shards = [];
  }
  // A shard that is not a real directory is not one yep-ext made: left alone, not followed.
  const shard = (n: string): boolean => /^[0-9a-f]{2}$/.test(n) && lstatSync(join(index, n), { throwIfNoEntry: false })?.isDirectory() === true;
  for (const s of shards.filter(shard)) await sweepDeadTemps(storeCustody(paths, 'cache', { owned: ['index', s], names: /$^/ }));
}
