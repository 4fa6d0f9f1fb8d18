/**
 * `install --frozen`: make the store match a lockfile exactly, with no
 * resolution. Every entry is fetched at its pinned version/commit (concurrently,
 * bounded) into staging and must hash to the locked content_hash and, when the
 * lock records one, carry the locked grant; any mismatch fails the whole run
 * before anything is placed. Entries already installed with the locked hash cost
 * one stat and no network.
 */
import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { YepError, errnoCode, isYepError, stateIoError } from '../errors.js';
import { withInstallLock } from '../store/install-lock.js';
import { findEntry, loadLock, saveLock, type LockEntry, type Lockfile } from '../store/lockfile.js';
import { packageDir } from '../paths.js';
import { contentHash } from '../package/content-hash.js';
import { fetchPath } from '../sources/local-path.js';
import { fetchCrateExact } from '../sources/crates-io.js';
import { fetchGitCommit } from '../sources/git.js';
import type { FetchResult } from '../sources/types.js';
import { makeStagingDir, removeDir, sweepStaging } from '../store/staging.js';
import { commitPackage, preparePackage, type PreparedPackage } from './prepare.js';

export interface FrozenItem {
  name: string;
  status: 'skipped' | 'installed' | 'failed';
  reason?: string;
}

export interface FrozenOptions {
  /** A lockfile to install from; default: the store's own extensions.lock. */
  lockfile?: string;
  concurrency?: number;
  /** Told as each entry is verified (plain per-extension lines off a TTY). */
  onItem?: (item: FrozenItem) => void;
}

/** Fetch exactly what an entry pins. Adding a source kind = one case here. */
async function fetchLocked(ctx: Context, entry: LockEntry, into: string): Promise<FetchResult> {
  const source = entry.source;
  switch (source.type) {
    case 'path':
      return fetchPath({ kind: 'path', raw: source.path, path: source.path }, ctx.paths.storeDir);
    case 'crate':
      return fetchCrateExact(ctx, source, into);
    case 'git':
      return fetchGitCommit(ctx, source, into);
  }
}

async function isInstalledAsLocked(ctx: Context, current: Lockfile, entry: LockEntry): Promise<boolean> {
  const have = findEntry(current, entry.name);
  if (!have || have.content_hash !== entry.content_hash) return false;
  if (typeof entry.grant === 'string' && have.grant !== entry.grant) return false;
  const dir = packageDir(ctx.paths, entry.name);
  const present = await lstat(dir).then(
    () => true,
    () => false,
  );
  // A path install is linked in place and may have been edited since: re-hash it (local, small).
  if (present && entry.source.type === 'path') return (await contentHash(dir).catch(() => undefined)) === entry.content_hash;
  return present;
}

/**
 * The lockfile given with --lockfile: it must be a file. (The store's own lock
 * may be absent, meaning nothing is installed; a lockfile named on the command
 * line that is absent is a mistyped path, and a directory is not a lockfile.)
 */
async function loadGivenLockfile(file: string): Promise<Lockfile> {
  const st = await stat(file).catch((e: unknown) => {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') throw new YepError('E_NOT_FOUND', `There is no lockfile at ${file}.`, { hint: 'Check the path given to --lockfile (write one with `yep-ext lock export <path>`).' });
    throw stateIoError('read', file, e);
  });
  if (st.isDirectory()) {
    throw new YepError('E_USAGE', `--lockfile ${file} is a directory, not a lockfile.`, { hint: `Give the lock file itself, e.g. --lockfile ${join(file, 'yolop-extensions.lock')}.` });
  }
  return loadLock(file);
}

export async function installFrozen(ctx: Context, options: FrozenOptions = {}): Promise<FrozenItem[]> {
  const target = options.lockfile ? await loadGivenLockfile(options.lockfile) : await loadLock(ctx.paths.lockFile);
  const current = await withInstallLock(ctx, async () => {
    await sweepStaging(ctx);
    return loadLock(ctx.paths.lockFile);
  });
  const items: FrozenItem[] = [];
  const todo: LockEntry[] = [];
  for (const entry of target.entries) {
    if (await isInstalledAsLocked(ctx, current, entry)) {
      const item: FrozenItem = { name: entry.name, status: 'skipped', reason: 'already installed with the locked hash' };
      items.push(item);
      options.onItem?.(item);
    } else todo.push(entry);
  }

  const prepared: PreparedPackage[] = [];
  const failures: FrozenItem[] = [];
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: Math.min(options.concurrency ?? 4, todo.length) }, async () => {
        while (next < todo.length) {
          const entry = todo[next++] as LockEntry;
          const stage = await makeStagingDir(ctx, `frozen-${entry.name}`);
          try {
            const p = await preparePackage(ctx, stage, () => fetchLocked(ctx, entry, `${stage}/pkg`));
            const problems: string[] = [];
            if (p.name !== entry.name) problems.push(`its manifest names it "${p.name}"`);
            if (p.content_hash !== entry.content_hash) problems.push(`content hash ${p.content_hash} differs from the locked ${entry.content_hash}`);
            if (typeof entry.grant === 'string' && p.grant.fingerprint !== entry.grant) problems.push(`its grant ${p.grant.fingerprint} differs from the locked ${entry.grant} (the lock cannot approve a different grant)`);
            if (problems.length > 0) throw new YepError('E_INTEGRITY', problems.join('; '));
            prepared.push(p);
            options.onItem?.({ name: entry.name, status: 'installed' });
          } catch (e) {
            await removeDir(stage);
            if (!isYepError(e)) throw e;
            const item: FrozenItem = { name: entry.name, status: 'failed', reason: e.message };
            failures.push(item);
            options.onItem?.(item);
          }
        }
      }),
    );
    if (failures.length > 0) {
      throw new YepError('E_INTEGRITY', `The lockfile could not be reproduced; nothing was installed:\n${failures.map((f) => `  - ${f.name}: ${f.reason}`).join('\n')}`, {
        hint: 'Each listed extension differs from what the lock pins. If the change is expected, run `yep-ext update <name>` where the lock is maintained and commit the new lock.',
        details: { failed: failures },
      });
    }
    await withInstallLock(ctx, async () => {
      for (const p of prepared) {
        const locked = target.entries.find((e) => e.name === p.name) as LockEntry;
        await commitPackage(ctx, p, locked);
        items.push({ name: p.name, status: 'installed' });
      }
      // The store's lock ends up carrying exactly the target's entries for these names.
      if (options.lockfile) {
        const mine = await loadLock(ctx.paths.lockFile);
        const names = new Set(target.entries.map((e) => e.name));
        await saveLock(ctx.paths.lockFile, { extra: { ...mine.extra, ...target.extra }, entries: [...mine.entries.filter((e) => !names.has(e.name)), ...target.entries] });
      }
    });
    return items.sort((a, b) => (a.name < b.name ? -1 : 1));
  } finally {
    for (const p of prepared) await removeDir(p.stage);
  }
}

/** Write the store's lock to `dest` (for committing to a project repository). */
export async function exportLock(ctx: Context, dest: string): Promise<{ path: string; entries: number }> {
  const lock = await loadLock(ctx.paths.lockFile);
  await saveLock(dest, lock);
  return { path: dest, entries: lock.entries.length };
}
