/**
 * The one install pipeline (pacote's shape): every source kind feeds it a tree in
 * private staging; only this module reads the manifest, hashes, reports the
 * contribution summary, and places the package with a crash-safe transaction.
 * Fetching happens outside the installer lock (so concurrent installs download in
 * parallel); only the read-modify-write of store + lock is serialised.
 * Plan, then apply: each spec is fetched, verified and planned as data
 * (install-plan.ts) before the lock; `--dry-run` stops there.
 */
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import pMap from 'p-map';
import type { Context } from '../context.js';
import { YepError, isYepError, stopIfInterrupted } from '../errors.js';
import { recoverIfStore, withInstallLock } from '../store/install-lock.js';
import { findEntry, loadStoreLock, type LockEntry, type LockSource, type Lockfile } from '../store/lockfile.js';
import type { Manifest } from '../package/manifest.js';
import { parseSpec, stageLabel, type Spec } from '../sources/spec.js';
import { followNote, samePinAndFollow, sourceFor, type ValidSpec } from '../sources/index.js';
import { withNotes } from '../sources/source.js';
import { makePlanningDir, removeDir } from '../store/staging.js';
import { noteCreated } from '../store/created-dirs.js';
import type { GrantDiff, GrantSummary } from '../package/grants.js';
import { judgeGrant, recordApproval, type GrantJudgement } from './grant-approval.js';
import { commitPackage, type FetchResult, type PrepareOptions, type PreparedPackage } from './prepare.js';
import { describeBinaryStep } from '../binary/binary-describe.js';
import { certainReplacement, decideInstall, replaceRefusal, type InstallDecision, type InstallPlan, type ReplaceVia } from './install-plan.js';
import { ENGINES_WALK_CAP, enginesRefusal, prepareForAgent, type CandidateFetch, type EnginesReport } from './agent-walk.js';
import { lstat } from 'node:fs/promises';
import { homeDir, packageDir } from '../paths.js';
import { admit, admitPrepared, specSubject, withPolicy } from './policy-gate.js';
import type { Policy } from '../policy/policy-file.js';
import { alreadyInstalled, type AlreadyCheck } from './install-already.js';
import { commandFinding } from '../package/inspect-command.js';

export type { InstallAction, InstallPlan } from './install-plan.js';

type InstallStatus = 'installed' | 'replaced' | 'repinned' | 'unchanged' | 'reinstalled';

export interface InstallOutcome {
  name: string;
  version?: string;
  status: InstallStatus;
  content_hash: string;
  /** Fingerprint of the grant recorded in the lock. */
  grant: string;
  source: LockSource;
  /** The lock entry this replaced, if any. */
  previous?: LockEntry;
  manifest: Manifest;
  /** Where the server command resolves, or why it does not (install still succeeds). */
  command: { found: boolean; detail: string };
  notes: string[];
  /** `engines.yolop` against the installed agent, and the newer versions skipped for it. */
  engines: EnginesReport;
}

/** What a caller is told before anything is placed (the consent-by-action moment). */
export interface InstallPreview {
  spec: Spec;
  manifest: Manifest;
  /** The grant the user approves by installing, with its fingerprint and warnings. */
  grant: GrantSummary;
  /** Contribution diff against the installed package, when this replaces one. */
  diff?: GrantDiff;
  source: LockSource;
  content_hash: string;
  /** Present when an extension of that name is already installed. */
  previous?: LockEntry;
  /** What happens to the server binary (a verified prebuilt, or a build from source after consent). */
  binary?: string;
}

export interface InstallHooks {
  /** Shown the manifest before anything is placed (print the contribution summary here). */
  onPreview?: (preview: InstallPreview) => void | Promise<void>;
  /**
   * Asked when the install would replace an extension of the same name from a
   * different source or at another version. Return true to go ahead.
   */
  confirmReplace?: (preview: InstallPreview, why: string) => Promise<boolean>;
  /**
   * Asked when the new package's grant is wider than the approved one (the diff is in
   * the preview). Return true to approve. Without it a widening install is refused.
   */
  confirmWiden?: (preview: InstallPreview) => Promise<boolean>;
  /**
   * The caller's decision (--ignore-engines): take the newest candidate even when
   * its `engines.yolop` excludes the installed agent (still reported, as a warning).
   */
  ignoreEngines?: boolean;
  /** Passed on to the pipeline (`--build`, `--no-build` and `--allow-build` travel in ctx.packageCode). */
  prepare?: PrepareOptions;
  /** `--force`: place the fetched package even when exactly this is installed (repair). */
  force?: boolean;
  /**
   * Nobody can approve a replacement (no TTY and no --yes): refuse it as soon as the
   * plan knows it, from the lock before any download when it can, and always before
   * the contribution summary is shown.
   */
  refuseReplace?: boolean;
}

/**
 * `input` read as a source, or the usage error its text is: a source that parses as
 * nothing, or a crate requirement cargo refuses (`lsp@^^1`). Said before any request,
 * so an unreachable registry never turns a typo into a network error.
 */
export function readSpec(input: string | Spec, cwd: string = process.cwd(), home?: string): ValidSpec {
  const spec = typeof input === 'string' ? parseSpec(input, cwd, home) : input;
  if (spec.kind === 'invalid') throw invalidSpec(spec, cwd);
  sourceFor(spec.kind).checkSpec?.(spec);
  return spec;
}

/** A source that parses as nothing; when it names a directory here (`examples/echo-node`), say to write ./ before it. */
function invalidSpec(spec: Extract<Spec, { kind: 'invalid' }>, cwd?: string): YepError {
  let isDir = false;
  try {
    isDir = cwd !== undefined && spec.raw.trim() !== '' && statSync(join(cwd, spec.raw.trim())).isDirectory();
  } catch {
    // Not a directory here: the generic hint.
  }
  return new YepError('E_USAGE', `Cannot install "${spec.raw}": ${spec.reason}.`, {
    hint: isDir
      ? `"${spec.raw.trim()}" is a directory here: a path needs ./ (or ../, /, ~/) in front, so run \`yep-ext install ./${spec.raw.trim()}\`.`
      : 'Sources: a bare name (lsp), crates.io:<crate>[@req], a git URL [@rev|#ref], or an explicit path (./dir).',
  });
}

/**
 * What the spec could install, best first, as fetches (a linked kind ignores the
 * directory). A kind with several versions lists them, so the engines walk can
 * pass over those the agent cannot run; --ignore-engines takes the first. A kind
 * with one candidate has the Source's own `fetch`.
 */
async function specCandidates(ctx: Context, spec: ValidSpec, ignoreEngines: boolean): Promise<SpecCandidates> {
  const source = sourceFor(spec.kind);
  if (!source.candidates) {
    const { fetch } = source;
    if (!fetch) throw new YepError('E_INTERNAL', `The ${spec.kind} source has neither candidates nor fetch.`);
    return { fetches: [(into) => fetch.call(source, ctx, spec, into)], records: [], notes: [] };
  }
  const { records, notes } = await source.candidates(ctx, spec);
  const chosen = ignoreEngines ? records.slice(0, 1) : records;
  return {
    records: chosen,
    notes: notes ?? [],
    fetches: chosen.map(
      (rec) =>
        async (into: string): Promise<FetchResult> =>
          withNotes(await source.fetchExactly(ctx, rec, into), notes),
    ),
  };
}

/** A spec's candidates: fetches best first, their records (none for a kind that resolves by fetching), the resolver's notes. */
interface SpecCandidates {
  fetches: CandidateFetch[];
  records: LockSource[];
  notes: string[];
}

async function pathExists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the store holds what `entry` pins (the cheap shared check and the one
 * `needsRefetch` rule of verify.ts, as --frozen and list use them): a damaged tree is
 * not "already installed", so installing the same pin again places it afresh (a
 * repair, status 'reinstalled') instead of reporting success over it.
 * Without an entry: whether anything is at `target`.
 */
async function installedIntact(ctx: Context, entry: LockEntry | undefined, target: string): Promise<boolean> {
  if (!entry) return pathExists(target);
  const { checkEntry, needsRefetch } = await import('../store/entry-check.js');
  const check = await checkEntry(ctx, entry, { mode: 'cheap' });
  return !needsRefetch(entry, check.result);
}

/** A kind without candidates: the record it would install now, when resolving it needs no download and the lock has its origin. */
async function installedPinOf(ctx: Context, spec: ValidSpec): Promise<LockSource[]> {
  const source = sourceFor(spec.kind);
  if (!source.installedPin) return [];
  const rec = await source.installedPin(ctx, spec, (await loadStoreLock(ctx.paths)).entries);
  return rec ? [rec] : [];
}

/** A fetched, verified package and what installing it would do (before the installer lock). */
interface Planned {
  plan: InstallPlan;
  prepared: PreparedPackage;
  /** The intact verdict the plan was decided on: apply reuses it while the lock entry is the same record. */
  intact: boolean;
  /** The decision's refusal (same pin, other bytes), raised after the preview as an install would. */
  problem?: unknown;
  /** For `replaced`: what the refusal's hint offers besides --yes. */
  via: ReplaceVia;
  /** The grant judged against the entry the plan read (grant-approval.ts). */
  judged: GrantJudgement;
  /** What to show before a prompt; `now` is the grant diff against the entry as it is at apply, when that differs from the plan's. */
  preview(previous?: LockEntry, now?: { diff: GrantDiff | undefined }): InstallPreview;
}

/**
 * Fetch `spec` into `stage`, verify it, compare it with what is installed. Writes
 * nothing outside `stage`. With `refuseReplace`, a replacement the lock already
 * proves (every candidate another version of an installed crate) is refused before
 * any download.
 */
async function planSpec(
  ctx: Context,
  spec: ValidSpec,
  candidates: SpecCandidates,
  stage: string,
  policy: Policy,
  ignoreEngines: boolean,
  options: PrepareOptions = {},
  refuseReplace = false,
  known: AlreadyCheck = {},
): Promise<Planned> {
  const { fetches, records } = candidates;
  // The lock as read for the "already installed" check or the early check serves the plan
  // too (apply reads it again under the installer lock).
  let lock: Lockfile | undefined = known.lock;
  if (refuseReplace && records.length > 0) {
    lock ??= await loadStoreLock(ctx.paths);
    const early = certainReplacement(lock.entries, records.slice(0, ENGINES_WALK_CAP));
    if (early) throw replaceRefusal(early.previous.name, packageDir(ctx.paths, early.previous.name), early.previous, early.why, early.via);
  }
  const walk = await prepareForAgent(ctx, stage, fetches, { ignoreEngines, prepare: options });
  if (!walk.prepared) throw enginesRefusal(spec.raw.trim(), walk);
  const prepared = walk.prepared;
  // The policy file (docs/policy.md) decides on the verified package, before any plan or placement.
  await admitPrepared(ctx, policy, prepared);
  const binaryLine = describeBinaryStep(prepared.binary);
  const { fetched, manifest, name, grant } = prepared;
  const before = findEntry(lock ?? (await loadStoreLock(ctx.paths)), name);
  const target = packageDir(ctx.paths, name);
  const judged = await judgeGrant(ctx, name, before, { grant: grant.grant, content_hash: prepared.content_hash });
  const diff = judged.diff;
  const candidate = { source: fetched.source, content_hash: prepared.content_hash, grant: grant.fingerprint };
  let decision: InstallDecision | undefined;
  let problem: unknown;
  // The "already installed" check's verdict on this very entry stands (one check per install).
  const intact = before !== undefined && known.checked?.entry === before ? known.checked.intact : await installedIntact(ctx, before, target);
  try {
    decision = decideInstall(name, target, before, candidate, intact, judged);
  } catch (e) {
    problem = e;
  }
  const plan: InstallPlan = {
    spec: spec.raw,
    name,
    ...(manifest.version !== undefined ? { version: manifest.version } : {}),
    action: decision?.action ?? 'repinned',
    ...candidate,
    ...(before ? { previous: before } : {}),
    ...(diff ? { diff } : {}),
    ...(decision?.why !== undefined ? { replace_reason: decision.why } : {}),
    replace_asks: decision?.action === 'replaced' && decision.asks,
    consent_needed: decision?.consent_needed ?? false,
    engines: walk.engines,
  };
  return {
    plan,
    prepared,
    intact,
    judged,
    via: decision?.via ?? 'yes-only',
    ...(problem !== undefined ? { problem } : {}),
    preview: (previous, now) => ({
      spec,
      manifest,
      grant,
      ...((now ? now.diff : diff) ? { diff: now ? now.diff : diff } : {}),
      source: fetched.source,
      content_hash: prepared.content_hash,
      ...(previous ? { previous } : {}),
      ...(binaryLine ? { binary: binaryLine } : {}),
    }),
  };
}

/**
 * Apply a plan under the installer lock: decide again against the lock and store
 * as they are now (another process may have installed meanwhile), ask what the
 * decision needs (replace, widen), then commit through the transaction.
 */
async function applyPlanned(ctx: Context, planned: Planned, hooks: InstallHooks): Promise<InstallOutcome> {
  const { prepared, plan } = planned;
  const { name, manifest, grant, fetched } = prepared;
  return withInstallLock(ctx, async () => {
    const lock = await loadStoreLock(ctx.paths);
    const previous = findEntry(lock, name);
    const target = packageDir(ctx.paths, name);
    // The tree was checked when planning (checkEntry once per install): the verdict stands while the
    // lock holds the same record. Another process that changed the entry meanwhile means a fresh check.
    const sameRecord = previous !== undefined && plan.previous !== undefined && isDeepStrictEqual(previous, plan.previous);
    const intact = sameRecord ? planned.intact : await installedIntact(ctx, previous, target);
    // Consent is judged against what is approved now: an entry another process changed since the
    // plan (during the download or a prompt) may have narrowed the grant this one widens.
    const judged = isDeepStrictEqual(previous, plan.previous)
      ? planned.judged
      : await judgeGrant(ctx, name, previous, { grant: grant.grant, content_hash: plan.content_hash });
    const now = judged === planned.judged ? undefined : { diff: judged.diff };
    const diff = judged.diff;
    const decision = decideInstall(name, target, previous, { source: plan.source, content_hash: plan.content_hash, grant: plan.grant }, intact, judged);
    if (decision.action === 'replaced' && decision.asks) {
      const ok = !hooks.refuseReplace && ((await hooks.confirmReplace?.(planned.preview(previous, now), decision.why ?? '')) ?? false);
      if (!ok) throw replaceRefusal(name, target, previous, decision.why, decision.via);
    }
    if (decision.consent_needed) {
      const approved = (await hooks.confirmWiden?.(planned.preview(previous, now))) ?? false;
      if (!approved) {
        throw new YepError('E_CONSENT_REQUIRED', `${name}: this package asks for more than the installed one was approved for; nothing was changed.`, {
          hint: `Review the changes above, then re-run with --accept ${grant.fingerprint} (exactly this grant) or --yes.`,
          details: { diff },
        });
      }
    }
    // Same pin, ref, bytes and grant as the lock, yet not "unchanged": the installed tree was damaged, so this puts it back (no pin moves).
    const repaired =
      decision.action === 'repinned' &&
      previous !== undefined &&
      samePinAndFollow(previous.source, fetched.source) &&
      previous.content_hash === plan.content_hash &&
      judged.approved;
    const reinstall = (decision.action === 'unchanged' && hooks.force === true) || repaired;
    if (decision.action !== 'unchanged' || reinstall) await commitPackage(ctx, prepared, undefined, {}, lock);
    // Exactly this is installed under a format-1 fingerprint: its grant, words included, is recorded once.
    else if (judged.record && previous) await recordApproval(ctx, lock, previous, grant.grant);
    // Read after the commit: a build from source runs there and changes both.
    const { command } = prepared;
    return {
      name,
      ...(manifest.version !== undefined ? { version: manifest.version } : {}),
      status: decision.action === 'new' ? 'installed' : reinstall ? 'reinstalled' : decision.action,
      content_hash: plan.content_hash,
      grant: grant.fingerprint,
      source: fetched.source,
      ...(previous ? { previous } : {}),
      manifest,
      command: commandFinding(command),
      notes: [...(fetched.notes ?? []), ...followNote(previous?.source, fetched.source)],
      engines: plan.engines,
    };
  });
}

/**
 * Parse, fetch and plan one spec, show its preview, then hand the plan to `use`.
 * A dry run stages in the OS temp directory and skips crash recovery: it writes
 * nothing in the store (the download cache aside) and takes no lock.
 */
async function withPlan<T>(
  runCtx: Context,
  input: string | Spec,
  hooks: InstallHooks,
  cwd: string,
  dryRun: boolean,
  use: (planned: Planned) => Promise<T>,
  already?: (outcome: InstallOutcome) => T,
): Promise<T> {
  const spec = readSpec(input, cwd, homeDir(runCtx.env));
  const { ctx, policy } = withPolicy(runCtx);
  // Where it would come from (its kind, origin, and a mirror this run uses) is ruled before anything is fetched.
  admit(ctx, policy, specSubject(ctx, spec), 'fetch');
  sourceFor(spec.kind).preflight?.(ctx, spec, cwd);
  // What this run may create in a never-used home (the config dir, the store, its caches and
  // .yep-staging): a plan that places nothing (it failed, or a dry run) takes it away again.
  const done = noteCreated(ctx);
  let placed = false;
  let stage: string | undefined;
  try {
    if (!dryRun) for (const m of await recoverIfStore(ctx)) ctx.log.info(`Recovered: ${m}.`);
    const candidates = await specCandidates(ctx, spec, hooks.ignoreEngines === true);
    // Exactly this already installed and intact: said from the lock and the store, before any download or summary.
    let known: AlreadyCheck = {};
    if (already && !dryRun && hooks.force !== true) {
      const records = candidates.records.length > 0 ? candidates.records : await installedPinOf(ctx, spec);
      known = await alreadyInstalled(ctx, policy, records, candidates.notes, { ignoreEngines: hooks.ignoreEngines === true });
      if (known.outcome) {
        placed = true; // installed before: nothing of this run to take away
        return already(known.outcome);
      }
    }
    stage = await makePlanningDir(ctx, stageLabel(spec), dryRun);
    const planned = await planSpec(
      ctx,
      spec,
      candidates,
      stage,
      policy,
      hooks.ignoreEngines === true,
      hooks.prepare,
      !dryRun && hooks.refuseReplace === true,
      known,
    );
    const { plan } = planned;
    // A replacement nobody can approve is refused before its summary; "already installed" has none to show.
    if (!dryRun && hooks.refuseReplace && plan.action === 'replaced' && plan.replace_asks && planned.problem === undefined) {
      throw replaceRefusal(plan.name, packageDir(ctx.paths, plan.name), plan.previous, plan.replace_reason, planned.via);
    }
    if (dryRun || plan.action !== 'unchanged' || planned.problem !== undefined || hooks.force === true) await hooks.onPreview?.(planned.preview(plan.previous));
    const result = await use(planned);
    placed = !dryRun;
    return result;
  } finally {
    if (stage !== undefined) await removeDir(stage);
    await done(placed);
  }
}

/** Install one spec. Throws YepError on failure; leaves no trace in that case. */
export async function installSpec(ctx: Context, input: string | Spec, hooks: InstallHooks = {}, cwd = process.cwd()): Promise<InstallOutcome> {
  return withPlan(
    ctx,
    input,
    hooks,
    cwd,
    false,
    (planned) => applyPlanned(ctx, planned, hooks),
    (outcome) => outcome,
  );
}

/**
 * What installing one spec would do, as data: fetched and verified like an
 * install, compared with what is installed, and nothing placed (`install --dry-run`).
 * Throws what the install would throw before asking anything.
 */
export async function planInstall(
  ctx: Context,
  input: string | Spec,
  hooks: Pick<InstallHooks, 'onPreview' | 'ignoreEngines'> = {},
  cwd = process.cwd(),
): Promise<InstallPlan> {
  return withPlan(ctx, input, hooks, cwd, true, async (planned) => {
    if (planned.problem !== undefined) throw planned.problem;
    return planned.plan;
  });
}

export type BatchResult = { spec: string; ok: true; outcome: InstallOutcome } | { spec: string; ok: false; error: YepError };
export type PlanResult = { spec: string; ok: true; plan: InstallPlan } | { spec: string; ok: false; error: YepError };

/**
 * Run `fn` over specs (bounded), each failure a result; non-YepErrors (bugs) propagate.
 * After Ctrl-C (`signal`) no spec starts: each not yet begun is an interruption too.
 */
function eachSpec<T>(
  specs: string[],
  concurrency: number,
  signal: AbortSignal,
  fn: (text: string) => Promise<T>,
): Promise<Array<{ spec: string; ok: true; value: T } | { spec: string; ok: false; error: YepError }>> {
  return pMap(
    specs,
    async (text) => {
      try {
        stopIfInterrupted(signal);
        return { spec: text, ok: true as const, value: await fn(text) };
      } catch (e) {
        if (!isYepError(e)) throw e;
        return { spec: text, ok: false as const, error: e };
      }
    },
    { concurrency },
  );
}

/**
 * Install several specs: fetched concurrently (bounded), each committed on its
 * own, every failure reported. Unexpected (non-YepError) failures propagate: bugs
 * must not be dressed up as per-item errors.
 */
export async function installMany(ctx: Context, specs: string[], hooks: InstallHooks = {}, cwd = process.cwd(), concurrency = 4): Promise<BatchResult[]> {
  // --force: a name of an installed extension is fetched again exactly as locked (repair.ts).
  const one = hooks.force ? (await import('./repair.js')).forceInstall : installSpec;
  const results = await eachSpec(specs, concurrency, ctx.signal, (text) => one(ctx, text, hooks, cwd));
  return results.map((r) => (r.ok ? { spec: r.spec, ok: true, outcome: r.value } : r));
}

/** Plan several specs (`install --dry-run`): like installMany, and nothing is placed. */
export async function planMany(
  ctx: Context,
  specs: string[],
  hooks: Pick<InstallHooks, 'onPreview' | 'ignoreEngines'> = {},
  cwd = process.cwd(),
  concurrency = 4,
): Promise<PlanResult[]> {
  const results = await eachSpec(specs, concurrency, ctx.signal, (text) => planInstall(ctx, text, hooks, cwd));
  return results.map((r) => (r.ok ? { spec: r.spec, ok: true, plan: r.value } : r));
}
