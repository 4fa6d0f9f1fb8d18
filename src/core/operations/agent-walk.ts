/**
 * Resolution that respects `engines.yolop` (cargo's MSRV-aware resolver, for the
 * agent): a package's agent requirement is known only after its download, so
 * install and update try candidates newest first, each fetched and verified
 * through the one pipeline (prepare.ts), and keep the first whose range admits the
 * installed agent. The walk is capped (ENGINES_WALK_CAP downloads) and names every
 * version it passed over and why. The agent is asked only once a candidate
 * declares a range, and an unknown agent never blocks anything.
 */
import { removeWork } from '../fs/custody.js';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import { describeVerdict, type EnginesVerdict } from '../agent/engines.js';
import type { Manifest } from '../package/manifest.js';
import { sourceFor, type LockSource } from '../sources/index.js';
import { preparePackage, type FetchResult, type PrepareOptions, type PreparedPackage } from './prepare.js';

/** At most this many candidates are downloaded looking for one the agent can run. */
export const ENGINES_WALK_CAP = 5;

/** A newer candidate passed over. */
export interface SkippedCandidate {
  /** The manifest version (else the source's pin, shortened). */
  version: string;
  source: LockSource;
  requires: string | null;
  /** "0.5.0 needs yolop >=0.13; you have 0.12.1" */
  reason: string;
}

/** What `--json` of install and update carries: the chosen package's verdict, and the walk. */
export interface EnginesReport extends EnginesVerdict {
  /** Newer candidates skipped because their range excludes the agent, newest first. */
  skipped: SkippedCandidate[];
  /** True when --ignore-engines let a package the range excludes through. */
  ignored: boolean;
}

export interface WalkResult {
  /** The chosen package; undefined when every candidate tried excludes the agent. */
  prepared?: PreparedPackage;
  engines: EnginesReport;
  /** How many candidates there were (the walk tries at most ENGINES_WALK_CAP). */
  total: number;
}

/** Fetch one candidate into `into`. */
export type CandidateFetch = (into: string) => Promise<FetchResult>;

class Excluded extends Error {
  constructor(
    readonly extension: string,
    readonly skipped: SkippedCandidate,
    readonly verdict: EnginesVerdict,
  ) {
    super(skipped.reason);
  }
}

export function versionLabel(manifest: Manifest, source: LockSource): string {
  return manifest.version ?? (sourceFor(source.type).pin(source).slice(0, 12) || '(unversioned)');
}

/**
 * What the walk says of the package it keeps: an exclusion let through (--ignore-engines),
 * an unknown agent, a malformed range. Shared with install's "already installed" check
 * (install-already.ts), which keeps the installed package without a walk.
 */
export function warnVerdict(ctx: Context, label: string, verdict: EnginesVerdict, doing = 'installing'): void {
  if (verdict.status === 'excludes') ctx.log.warn(`${describeVerdict(label, verdict)}; ${doing} it anyway (--ignore-engines).`);
  if (verdict.status === 'unknown-agent') ctx.log.warn(`${describeVerdict(label, verdict)}; not checked.`);
  if (verdict.status === 'malformed') ctx.log.warn(`${describeVerdict(label, verdict)}.`);
}

/**
 * Prepare the first of `candidates` (best first) whose `engines.yolop` admits the
 * installed agent, within the cap. With `ignoreEngines` the first is taken as is
 * (an exclusion is still reported, as a warning). Errors other than an exclusion
 * (a failed download, a bad manifest) end the walk: they are not skipped silently.
 */
export async function prepareForAgent(
  ctx: Context,
  stage: string,
  candidates: CandidateFetch[],
  options: {
    ignoreEngines?: boolean;
    /** For the override warning: "installing" (default), "updating to". */
    doing?: string;
    /** Passed on to preparePackage (the server-binary mode); its `accept` is the walk's own. */
    prepare?: PrepareOptions;
  } = {},
): Promise<WalkResult> {
  const into = join(stage, 'pkg');
  const skipped: SkippedCandidate[] = [];
  let last: EnginesVerdict | undefined;
  for (const fetch of candidates.slice(0, ENGINES_WALK_CAP)) {
    let verdict: EnginesVerdict | undefined;
    try {
      const prepared = await preparePackage(ctx, stage, () => fetch(into), {
        ...options.prepare,
        accept: async (manifest, fetched) => {
          verdict = await checkAgainstAgent(ctx, manifest);
          if (verdict.status === 'excludes' && !options.ignoreEngines) {
            const version = versionLabel(manifest, fetched.source);
            throw new Excluded(
              manifest.name,
              { version, source: fetched.source, requires: verdict.requires, reason: describeVerdict(version, verdict) },
              verdict,
            );
          }
          warnVerdict(ctx, `${manifest.name} ${versionLabel(manifest, fetched.source)}`, verdict, options.doing);
        },
      });
      const v = verdict as EnginesVerdict;
      return { prepared, engines: { ...v, skipped, ignored: options.ignoreEngines === true && v.status === 'excludes' }, total: candidates.length };
    } catch (e) {
      if (!(e instanceof Excluded)) throw e;
      skipped.push(e.skipped);
      last = e.verdict;
      ctx.log.info(`${e.extension}: ${e.skipped.reason}: skipped.`);
      // The next candidate is fetched into the same place.
      await removeWork(into);
    }
  }
  const verdict = last ?? { status: 'none' as const, requires: null, agent: null, detail: 'no candidate' };
  return { engines: { ...verdict, skipped, ignored: false }, total: candidates.length };
}

/**
 * The refusal when no candidate admits the agent (install: exit 4). `what` names
 * what was asked for (`hello`, `hello@^0.5`); a walk of one candidate (an exact
 * version, a git commit, a directory) gets that version's reason alone.
 */
export function enginesRefusal(what: string, walk: WalkResult): YepError {
  const { skipped, agent } = walk.engines;
  const shown = skipped.map((s) => s.reason);
  const capped = walk.total > skipped.length ? ` (tried the ${skipped.length} newest of ${walk.total} candidates)` : '';
  const message =
    walk.total === 1 ? `${what}: ${shown[0]}.` : `No version of ${what} that yep-ext tried supports yolop ${agent}${capped}: ${shown.join('; ')}.`;
  const hint =
    walk.total === 1
      ? `Upgrade yolop, install a version that supports yolop ${agent} (for a crate, leave out the version to get the newest that does), or pass --ignore-engines to install it anyway.`
      : `Upgrade yolop, name an older version exactly (e.g. ${what.split('@')[0]}@<version>), or pass --ignore-engines to take the newest anyway.`;
  return new YepError('E_ENGINES', message, {
    hint,
    details: { agent, skipped: skipped.map(({ version, requires, reason }) => ({ version, requires, reason })) },
  });
}
