/**
 * `update`: re-resolve each extension from its recorded source, then decide on
 * the grant diff (data, never rendered text): hash-identical -> silent no-op;
 * narrowing or neutral -> applied; widening -> applied only with consent (a TTY
 * answer, --yes, or --accept naming exactly the new grant's fingerprint).
 * Read -> plan (no writes) -> apply; `--dry-run` stops after the plan. The new
 * tree is fully fetched, verified and unpacked before the old one is swapped out.
 */
import pMap from 'p-map';
import type { Context } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { grantOf, type Grant, type GrantDiff } from '../package/grants.js';
import { loadManifest } from '../package/manifest.js';
import { packageDir } from '../paths.js';
import { recoverIfStore, withInstallLock } from '../store/install-lock.js';
import { findEntry, loadStoreLock, type LockEntry, type LockSource } from '../store/lockfile.js';
import { lockEntriesNamed } from '../store/locked-entries.js';
import { sourceFor } from '../sources/index.js';
import { newerOutside, updateCandidates, upstreamOf, type NewerOutside } from './offer.js';
import { makePlanningDir, removeDir } from '../store/staging.js';
import { commitPackage, lockEntryFor, type PrepareOptions, type PreparedPackage } from './prepare.js';
import { prepareForAgent, type EnginesReport } from './agent-walk.js';
import { describeBinaryStep } from '../binary/binary-describe.js';
import { admit, admitPrepared, withPolicy } from './policy-gate.js';
import { checkEntry, editedInPlace, needsRefetch, repairHint } from '../store/entry-check.js';
import type { Policy } from '../policy/policy-file.js';
import { installedBeforeText, judgeGrant, recordApproval } from './grant-approval.js';

/** held: newer versions exist, but each one tried needs a newer yolop (`engines.skipped` says which). */
type UpdateStatus = 'up-to-date' | 'updated' | 'would-update' | 'held' | 'refused' | 'failed';

export interface UpdateItem {
  name: string;
  status: UpdateStatus;
  from: { version?: string; content_hash: string; source: LockSource; grant?: string };
  to?: { version?: string; content_hash: string; source: LockSource; grant: string };
  /** The contribution diff; `widens` decides whether consent is needed. */
  diff?: GrantDiff;
  /**
   * The lock records no approved grant (an entry written by the host) and the content
   * changed: consent is asked for the whole new grant, as for a new install.
   */
  first_approval?: boolean;
  /** With first_approval: the new package's full grant (the contribution summary). */
  contributions?: Grant;
  consent_needed: boolean;
  /** `engines.yolop` of the version moved to (or, when held, of the newest skipped) and what was skipped. */
  engines?: EnginesReport;
  /** What happens to the server binary (a verified prebuilt, or a build from source after consent). */
  binary?: string;
  /** The one "newer outside the requirement" answer (offer.ts), as `outdated` and `info` give it. */
  newer_outside?: NewerOutside;
  error?: ReturnType<YepError['toJSON']>;
}

export interface UpdateOptions {
  /** The extensions to update; none = every one the lock pins (as `all`). */
  names: string[];
  all?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  /** Fingerprints of new grants approved in advance (`--accept`). */
  accept?: string[];
  /** Asked on a TTY for each widening update; resolve true to apply it. */
  confirm?: (item: UpdateItem) => Promise<boolean>;
  /** Called with each planned item before anything is applied (print the diff here). */
  onPlan?: (item: UpdateItem) => void;
  /** Move to the newest version even when its `engines.yolop` excludes the installed agent. */
  ignoreEngines?: boolean;
  /** Passed on to the pipeline (`--build`, `--no-build` and `--allow-build` travel in ctx.packageCode). */
  prepare?: PrepareOptions;
}

interface Planned {
  item: UpdateItem;
  /**
   * Unchanged content under an entry with no recorded grant, or one named by a format-1
   * fingerprint: the entry as judged, and the grant to record silently.
   */
  record?: { entry: LockEntry; grant: Grant };
  prepared?: PreparedPackage;
  stage?: string;
}

/** What the entry is now (the item's `from`, failed items included). */
function fromOf(entry: LockEntry): UpdateItem['from'] {
  return {
    ...(entry.version !== undefined ? { version: entry.version } : {}),
    content_hash: entry.content_hash,
    source: entry.source,
    ...(entry.grant ? { grant: entry.grant } : {}),
  };
}

/**
 * An update that moves nothing (up to date, or held) leaves the installed tree as it
 * is. When that tree is not what the lock pins (the one intact rule, verify.ts
 * `needsRefetch`: gone from the store, edited files, a drifted binary, a broken
 * manifest), the item fails instead of saying "up to date" while the host loads
 * something else or nothing. For a local directory (linked) only the link counts: its
 * update re-hashed the pinned directory just now (a difference there is an update, not
 * damage), but a store link that leads elsewhere, or nowhere, loads something else.
 */
async function assertIntact(ctx: Context, entry: LockEntry): Promise<void> {
  // A linked entry's files were re-read just now; what remains is whether yolop loads that
  // directory at all: a store link swapped to another one is not an update (nothing moved).
  // A copy of a path package (a real directory, as the host installs one) is a tree like any other.
  const inPlace = editedInPlace(ctx, entry);
  const { result } = await checkEntry(ctx, entry, { mode: 'cheap', ...(inPlace ? { skipHashes: true } : {}) });
  if (inPlace ? !result.problems.some((p) => p.kind === 'missing') : !needsRefetch(entry, result)) return;
  throw new YepError(
    'E_INTEGRITY',
    `${entry.name} has no newer version to move to, but what is installed does not match its lock entry (${result.problems.map((p) => p.message).join('; ')}); nothing was changed.`,
    {
      hint: repairHint(ctx, entry, 'then run `yep-ext verify`'),
      details: { name: entry.name, problems: result.problems },
    },
  );
}

async function planOne(ctx: Context, entry: LockEntry, policy: Policy, ignoreEngines: boolean, prepare: PrepareOptions, dryRun: boolean): Promise<Planned> {
  const from = fromOf(entry);
  // The kind resolves the recorded intent (requirement, ref) to a pin, or says "up to date".
  const source = sourceFor(entry.source.type);
  // Asking the origin (or the run's mirror) is fetching from it: ruled before any request.
  admit(ctx, policy, { name: entry.name, source: entry.source }, 'fetch');
  // The one answer outdated and info read too (offer.ts), so the three agree.
  const up = await upstreamOf(ctx, entry);
  const all = updateCandidates(entry, up);
  const candidates = ignoreEngines ? all.slice(0, 1) : all;
  const outside = newerOutside(entry, up);
  const base: UpdateItem = { name: entry.name, status: 'up-to-date', from, consent_needed: false, ...(outside ? { newer_outside: outside } : {}) };
  if (candidates.length === 0) {
    await assertIntact(ctx, entry);
    return { item: base, ...(await unchangedGrant(ctx, entry)) };
  }
  const stage = await makePlanningDir(ctx, `update-${entry.name}`, dryRun);
  try {
    const walk = await prepareForAgent(
      ctx,
      stage,
      candidates.map((rec) => (into: string) => source.fetchExactly(ctx, rec, into)),
      { ignoreEngines, doing: 'updating to', prepare },
    );
    if (!walk.prepared) {
      // Newer versions exist, and none tried runs on this agent: keep what is installed.
      await removeDir(stage);
      await assertIntact(ctx, entry);
      return { item: { ...base, status: 'held', engines: walk.engines }, ...(await unchangedGrant(ctx, entry)) };
    }
    const prepared = walk.prepared;
    if (prepared.name !== entry.name) {
      throw new YepError('E_MANIFEST', `The new version of ${entry.name} calls itself "${prepared.name}".`, {
        hint: `Renaming is not an update: \`yep-ext remove ${entry.name}\` and install the new name.`,
      });
    }
    // The policy file decides on the verified new version before anything is planned.
    await admitPrepared(ctx, policy, prepared);
    // Same pin, same bytes (a republished crate): the kind decides.
    source.checkRepin(entry, { content_hash: prepared.content_hash, source: prepared.fetched.source }, entry.name);
    // The host writes no `grant`: unchanged bytes are up to date, and the grant is recorded silently
    // (so is one a lock named by its format-1 fingerprint: same bytes, same words).
    const unrecorded = typeof entry.grant !== 'string';
    const judged = unrecorded ? undefined : await judgeGrant(ctx, entry.name, entry, { grant: prepared.grant.grant, content_hash: prepared.content_hash });
    if (prepared.content_hash === entry.content_hash && (unrecorded || judged?.approved)) {
      await removeDir(stage);
      await assertIntact(ctx, entry);
      return { item: base, ...(unrecorded || judged?.record ? { record: { entry, grant: prepared.grant.grant } } : {}) };
    }
    // Nothing was ever approved through yep-ext (no grant recorded): ask for the whole grant.
    // Otherwise the one comparison decides; without an approved grant to diff against it asks.
    const diff = judged?.diff;
    const widens = unrecorded || judged?.widens === true;
    const next = lockEntryFor(prepared);
    // A build withheld (no consent, --no-build, the policy) is said in the plan: the new version comes without its server.
    const withheld = prepared.binary?.withheld;
    const binaryLine = describeBinaryStep(prepared.binary) ?? (withheld ? `server binary: ${withheld}` : undefined);
    const item: UpdateItem = {
      ...base,
      status: 'would-update',
      to: {
        ...(next.version !== undefined ? { version: next.version } : {}),
        content_hash: next.content_hash,
        source: next.source,
        grant: prepared.grant.fingerprint,
      },
      ...(diff ? { diff } : {}),
      ...(unrecorded ? { first_approval: true, contributions: prepared.grant.grant } : {}),
      consent_needed: widens,
      engines: walk.engines,
      ...(binaryLine ? { binary: binaryLine } : {}),
    };
    return { item, prepared, stage };
  } catch (e) {
    await removeDir(stage);
    throw e;
  }
}

/**
 * The grant to record for an entry that stays as it is installed (nothing newer is fetched;
 * the caller just proved the tree intact): one the host wrote, which records no grant, or one
 * still named by its format-1 fingerprint (the migration, docs/grants.md).
 */
async function unchangedGrant(ctx: Context, entry: LockEntry): Promise<Pick<Planned, 'record'>> {
  const grant =
    typeof entry.grant === 'string'
      ? await installedBeforeText(ctx, entry)
      : await loadManifest(packageDir(ctx.paths, entry.name)).then(
          (m) => grantOf(m),
          () => undefined,
        );
  return grant ? { record: { entry, grant } } : {};
}

/** Record the grant of an unchanged entry (host-written, or named by a format-1 fingerprint): one lock write, unless the entry moved meanwhile. */
async function recordGrant(ctx: Context, entry: LockEntry, grant: Grant): Promise<void> {
  await withInstallLock(ctx, async () => {
    await recordApproval(ctx, await loadStoreLock(ctx.paths), entry, grant);
  });
}

export async function updateExtensions(runCtx: Context, options: UpdateOptions): Promise<UpdateItem[]> {
  const { ctx, policy } = withPolicy(runCtx);
  // Crash recovery writes; a dry run only reads.
  if (!options.dryRun) await recoverIfStore(ctx);
  const lock = await loadStoreLock(ctx.paths);
  // No names: every locked extension, within its recorded requirement (npm's and cargo's `update`).
  const entries = options.all ? lock.entries : lockEntriesNamed(ctx, lock, options.names);

  // Plan concurrently (each is mostly one index request or one ls-remote).
  const planned = await pMap(
    entries,
    async (entry): Promise<Planned> => {
      try {
        return await planOne(ctx, entry, policy, options.ignoreEngines === true, options.prepare ?? {}, options.dryRun === true);
      } catch (e) {
        if (!isYepError(e)) throw e;
        return {
          item: { name: entry.name, status: 'failed', from: fromOf(entry), consent_needed: false, error: e.toJSON() },
        };
      }
    },
    { concurrency: 8 },
  );
  for (const p of planned) options.onPlan?.(p.item);

  try {
    if (options.dryRun) return planned.map((p) => p.item);
    for (const p of planned) if (p.record) await recordGrant(ctx, p.record.entry, p.record.grant);
    for (const p of planned) {
      if (p.item.status !== 'would-update' || !p.prepared) continue;
      const item = p.item;
      if (item.consent_needed) {
        const accepted =
          options.yes === true || (options.accept ?? []).includes(item.to?.grant ?? '') || (options.confirm !== undefined && (await options.confirm(item)));
        if (!accepted) {
          item.status = 'refused';
          continue;
        }
      }
      await withInstallLock(ctx, async () => {
        const lock = await loadStoreLock(ctx.paths);
        const current = findEntry(lock, item.name);
        if (!current || current.content_hash !== item.from.content_hash) {
          throw new YepError('E_CONFLICT', `${item.name} changed while this update was being prepared.`, { hint: 'Run the update again.' });
        }
        await commitPackage(ctx, p.prepared as PreparedPackage, undefined, {}, lock, 'update');
      }).then(
        () => {
          item.status = 'updated';
          if (item.to && p.prepared) item.to.source = p.prepared.fetched.source; // a build at commit adds its digest
        },
        (e: unknown) => {
          if (!isYepError(e)) throw e;
          item.status = 'failed';
          item.error = e.toJSON();
        },
      );
    }
    return planned.map((p) => p.item);
  } finally {
    for (const p of planned) if (p.stage) await removeDir(p.stage);
  }
}
