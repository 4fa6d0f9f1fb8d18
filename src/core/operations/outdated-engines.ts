/**
 * `outdated`'s "newer, but needs a newer yolop": a newer version's
 * `engines.yolop` is in its manifest, known only after its download. So, for an
 * entry with newer versions, the newest ones are fetched exactly as install
 * fetches them (`Source.fetchExactly`: the registry cksum verified, the shared
 * download cache used, so a second run downloads nothing): first the versions the
 * recorded requirement selects, newest first, as `update`'s own walk tries them, until
 * one the agent can run (where `update` moves: the two cannot disagree), then the
 * newer versions outside the requirement, newest first, until one it can run; at
 * most ENGINES_WALK_CAP in all, the install walk's cap. Only the manifest's `engines` value is
 * needed: once read it is remembered by the registry cksum (cache/engines-memo.ts),
 * so a later run fetches nothing for that version (not even from the download
 * cache). What was fetched is said on stderr (info); what was remembered, with --verbose.
 * Nothing enters the store: each tree is unpacked in a private staging directory
 * and removed. The agent is asked first; an unknown agent means nothing is
 * downloaded and the row says so. A failed download or a broken manifest ends the
 * walk and is reported on the row (never fatal for `outdated`).
 */
import { join } from 'node:path';
import type { Context } from '../context.js';
import { isYepError } from '../errors.js';
import { detectAgentVersion } from '../agent/agent-version.js';
import { checkEngines, describeVerdict } from '../agent/engines.js';
import { loadManifest } from '../package/manifest.js';
import { sourceFor, type LockSource } from '../sources/index.js';
import type { Upstream } from '../sources/source.js';
import type { LockEntry } from '../store/lockfile.js';
import { makeStagingDir, removeDir } from '../store/staging.js';
import { ENGINES_WALK_CAP } from './agent-walk.js';
import { recallEngines, rememberEngines } from '../cache/engines-memo.js';
import { logVerbose } from '../log.js';

/**
 * checked: newer versions were downloaded and their ranges read; unknown-agent: not
 * checked (the agent's version is unknown; nothing downloaded); failed: the walk
 * stopped on an error (`detail`), the row keeps what the index says.
 */
type NewerEnginesStatus = 'checked' | 'unknown-agent' | 'failed';

/** `newer_engines` of an `outdated` row (`--json`). */
export interface NewerEngines {
  status: NewerEnginesStatus;
  /** The installed agent's version; null when unknown. */
  agent: string | null;
  /** The newest version newer than the installed one that the agent can run; null when none of those tried can (or not checked). */
  runnable: string | null;
  /** The newest of those the recorded requirement selects: where `update` moves (null: none tried). */
  runnable_in_requirement: string | null;
  /** The versions tried whose `engines.yolop` excludes the agent, newest first. */
  needs_newer_agent: { version: string; requires: string | null; reason: string }[];
  /** Versions downloaded (at most ENGINES_WALK_CAP) of `candidates` newer ones. */
  tried: number;
  candidates: number;
  /** One line for people. */
  detail: string;
}

/**
 * Fetches one `outdated` run may make for the whole store (the per-extension cap
 * is ENGINES_WALK_CAP): 50 extensions must not mean 250 downloads in one go.
 * A walk that would need more stops as `failed` (its row keeps the index's answer);
 * what it read is remembered, so the next run goes on from there.
 */
const OUTDATED_FETCH_BUDGET = 4 * ENGINES_WALK_CAP;

/** The run's fetch budget, shared by every walk of one `outdated`: each walk reserves what it may need, and gives back what it did not use. */
export interface FetchBudget {
  left: number;
  /** Extensions whose walk stopped on it. */
  stopped: string[];
  /** Fetches reserved by walks still running (given back in part when they end). */
  held: number;
  /** Walks waiting for those to end before deciding. */
  waiters: Array<() => void>;
}

export function fetchBudget(size = OUTDATED_FETCH_BUDGET): FetchBudget {
  return { left: size, stopped: [], held: 0, waiters: [] };
}

/**
 * Reserve `n` fetches. While other walks hold reservations they may give back, wait for
 * them rather than refuse: a refusal says the budget is spent, which must be true
 * (used by finished fetches), not merely reserved by concurrent walks.
 */
export async function reserve(budget: FetchBudget, n: number): Promise<boolean> {
  while (n > budget.left && budget.held > 0) await new Promise<void>((resolve) => budget.waiters.push(resolve));
  if (n > budget.left) return false;
  budget.left -= n;
  budget.held += n;
  return true;
}

/** Give back what a walk reserved and did not use, and wake the walks waiting on it. */
export function release(budget: FetchBudget, reserved: number, used: number): void {
  budget.held -= reserved;
  budget.left += reserved - used;
  for (const wake of budget.waiters.splice(0)) wake();
}

/** The manifest's `engines` of `rec`: fetched exactly into `into` (removed again), verified, and remembered by its cksum. */
async function fetchRange(ctx: Context, rec: LockSource, cksum: string | undefined, into: string): Promise<{ engines?: unknown }> {
  try {
    const fetched = await sourceFor(rec.type).fetchExactly(ctx, rec, into);
    const declared = await loadManifest(fetched.dir);
    if (cksum !== undefined) await rememberEngines(ctx, cksum, declared.engines);
    return declared;
  } finally {
    await removeDir(into);
  }
}

/**
 * Walk `newer` (from `Upstream.newer`, newest first) for the newest version the agent
 * can run, and the newest the requirement selects that it can run. Never throws a
 * YepError: a failed download or manifest is the report's `failed` status.
 */
export async function walkNewer(
  ctx: Context,
  entry: LockEntry,
  newer: NonNullable<Upstream['newer']>,
  budget: FetchBudget = fetchBudget(),
): Promise<NewerEngines> {
  const agent = await detectAgentVersion(ctx);
  const report: NewerEngines = {
    status: 'checked',
    agent: agent.known ? agent.version : null,
    runnable: null,
    runnable_in_requirement: null,
    needs_newer_agent: [],
    tried: 0,
    candidates: newer.length,
    detail: '',
  };
  if (!agent.known) {
    return {
      ...report,
      status: 'unknown-agent',
      detail: `the installed yolop's version is unknown (${agent.reason}): newer versions' engines.yolop not checked`,
    };
  }
  const kind = sourceFor(entry.source.type);
  const skipped = report.needs_newer_agent;
  // What `update` walks first (the versions the requirement selects, newest first), so that
  // `runnable_in_requirement` is the version `update` moves to; then the newer lines outside
  // it, newest first. One cap for the two.
  const planned = [...newer.filter((n) => n.within).slice(0, ENGINES_WALK_CAP), ...newer.filter((n) => !n.within).slice(0, ENGINES_WALK_CAP)];
  const cksumOf = (c: (typeof planned)[number]): string | undefined => (typeof c.source.cksum === 'string' ? c.source.cksum : undefined);
  // The registry cksum names the exact bytes: a range read from them before needs no download.
  const memo = await Promise.all(planned.map((c) => (cksumOf(c) !== undefined ? recallEngines(ctx, cksumOf(c)!) : undefined)));
  // The fetches this walk may need are reserved up front (all or none, the unused given back
  // at the end), so concurrent walks never leave several half done.
  const reserved = Math.min(ENGINES_WALK_CAP, memo.filter((m) => m === undefined).length);
  if (!(await reserve(budget, reserved))) {
    budget.stopped.push(entry.name);
    return {
      ...report,
      status: 'failed',
      detail: `not checked: this run's budget of ${OUTDATED_FETCH_BUDGET} downloads is spent (run \`yep-ext outdated\` again: what was read is remembered)`,
    };
  }
  let stage: string;
  try {
    stage = await makeStagingDir(ctx, `outdated-${entry.name}`);
  } catch (e) {
    // Never keep a reservation other walks may be waiting on.
    release(budget, reserved, 0);
    throw e;
  }
  const remembered: string[] = [];
  const fetchedVersions: string[] = [];
  let attempts = 0;
  try {
    let outsideRunnable: string | null = null;
    for (const [i, c] of planned.entries()) {
      if (report.tried >= ENGINES_WALK_CAP) break;
      // Each part stops at its first version the agent can run.
      if (c.within ? report.runnable_in_requirement !== null : outsideRunnable !== null) continue;
      const rec = c.source as LockSource;
      const version = kind.pin(rec);
      const known = memo[i];
      if (known) remembered.push(version);
      else attempts++;
      const declared = known ?? (await fetchRange(ctx, rec, cksumOf(c), join(stage, `pkg-${i}`)));
      if (!known) fetchedVersions.push(version);
      report.tried++;
      const verdict = checkEngines(declared, agent);
      if (verdict.status === 'excludes') skipped.push({ version, requires: verdict.requires, reason: describeVerdict(version, verdict) });
      else if (c.within) report.runnable_in_requirement = version;
      else outsideRunnable = version;
    }
    // Newest first, as `newer` is.
    const order = (v: string): number => newer.findIndex((n) => kind.pin(n.source as LockSource) === v);
    skipped.sort((a, b) => order(a.version) - order(b.version));
    report.runnable = [outsideRunnable, report.runnable_in_requirement].filter((v): v is string => v !== null).sort((a, b) => order(a) - order(b))[0] ?? null;
    if (remembered.length > 0) logVerbose(ctx.log, `${entry.name}: engines.yolop of ${remembered.join(', ')} known from an earlier run (nothing fetched)`);
    if (fetchedVersions.length > 0)
      ctx.log.info(`${entry.name}: fetched ${fetchedVersions.join(', ')} (verified, nothing installed) to read engines.yolop; later runs reuse what was read`);
    const reasons = skipped.map((s) => s.reason).join('; ');
    const capped = report.runnable === null && newer.length > report.tried ? ` (tried the ${report.tried} newest of ${newer.length})` : '';
    report.detail =
      report.runnable === null
        ? `no newer version runs on yolop ${agent.version}${capped}: ${reasons}`
        : `the newest yolop ${agent.version} can run is ${report.runnable}${reasons ? `; ${reasons}` : ''}`;
    return report;
  } catch (e) {
    if (!isYepError(e)) throw e;
    const message = e.message.split('\n')[0] ?? e.message;
    ctx.log.warn(`${entry.name}: newer versions' engines.yolop not checked: ${message}`);
    return { ...report, status: 'failed', runnable: null, runnable_in_requirement: null, detail: `not checked: ${message}` };
  } finally {
    release(budget, reserved, attempts);
    await removeDir(stage);
  }
}
