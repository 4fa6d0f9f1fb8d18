/**
 * `install --force <name|spec>`: re-fetch and replace an entry even when the lock
 * says it is installed (repair after `verify` found drift). A name of an installed
 * crate or git extension is fetched at exactly its locked version or commit
 * (`prepareExactly`: the locked content hash, grant and binary digest must come
 * back, or nothing is placed) and committed with its lock entry as it was; a name
 * of a path install re-reads its directory and re-pins it; anything else is an
 * ordinary install that also replaces an identical one.
 */
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { isLinked } from '../sources/index.js';
import { isValidName } from '../package/names.js';
import { recoverIfStore, withInstallLock } from '../store/install-lock.js';
import { findEntry, loadStoreLock, type LockEntry } from '../store/lockfile.js';
import { resolveExtensionName } from '../store/installed-name.js';
import { makeStagingDir, removeDir } from '../store/staging.js';
import { commitPackage, prepareExactly } from './prepare.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import { admit, admitPrepared, withPolicy } from './policy-gate.js';
import { installSpec, type InstallHooks, type InstallOutcome } from './install.js';
import { commandFinding } from '../package/inspect-command.js';
import { approvalOf } from '../package/grants.js';

/** The lock entry a `--force` argument names, if it is the name of an installed extension. */
async function lockedEntryNamed(ctx: Context, text: string): Promise<LockEntry | undefined> {
  if (text.includes('@') || text.includes(':') || text.includes('/') || !isValidName(text)) return undefined;
  const name = resolveExtensionName(ctx.paths, text);
  return findEntry(await loadStoreLock(ctx.paths), name);
}

export async function forceInstall(ctx: Context, text: string, hooks: InstallHooks = {}, cwd = process.cwd()): Promise<InstallOutcome> {
  const entry = await lockedEntryNamed(ctx, text);
  if (!entry) return installSpec(ctx, text, { ...hooks, force: true }, cwd);
  if (isLinked(entry.source)) return installSpec(ctx, String(entry.source.path), { ...hooks, force: true }, cwd);
  for (const m of await recoverIfStore(ctx)) ctx.log.info(`Recovered: ${m}.`);
  const { policy } = withPolicy(ctx);
  // Where it would be fetched from is ruled before any request.
  admit(ctx, policy, { name: entry.name, source: entry.source }, 'fetch');
  const stage = await makeStagingDir(ctx, `force-${entry.name}`);
  try {
    const prepared = await prepareExactly(ctx, entry, stage).catch((e: unknown) => {
      if (e instanceof YepError)
        throw new YepError(e.code, `${entry.name} cannot be fetched again as locked: ${e.message}`, {
          hint: 'Nothing was changed. If the source really changed, `yep-ext update` reviews it.',
        });
      throw e;
    });
    // The policy file rules a repair as it rules install and --frozen: refused before anything is placed.
    await admitPrepared(ctx, policy, prepared);
    await withInstallLock(ctx, async () => {
      const lock = await loadStoreLock(ctx.paths);
      const now = findEntry(lock, entry.name);
      if (!now || now.content_hash !== entry.content_hash)
        throw new YepError('E_CONFLICT', `${entry.name} changed while it was being fetched again.`, { hint: 'Run the command again.' });
      // An entry still named by its format-1 fingerprint is placed with the grant it approves, words included.
      const recorded = approvalOf(now.grant, prepared.grant.grant) === 'before-text' ? { ...now, grant: prepared.grant.fingerprint } : now;
      await commitPackage(ctx, prepared, recorded, {}, lock);
    });
    const { command } = prepared;
    // A repair puts back what the lock pins: engines is reported, never a reason to refuse.
    const engines = { ...(await checkAgainstAgent(ctx, prepared.manifest)), skipped: [], ignored: false };
    return {
      engines,
      name: entry.name,
      ...(entry.version !== undefined ? { version: entry.version } : {}),
      status: 'reinstalled',
      content_hash: entry.content_hash,
      grant: prepared.grant.fingerprint,
      source: entry.source,
      previous: entry,
      manifest: prepared.manifest,
      command: commandFinding(command),
      notes: [...(prepared.fetched.notes ?? [])],
    };
  } finally {
    await removeDir(stage);
  }
}
