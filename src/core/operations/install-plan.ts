/**
 * Install's plan as data (changesets' read -> plan -> apply): what installing a
 * fetched package would do to what is installed, decided on structured data (lock
 * records, content hashes, the grant diff), never on rendered text. Pure: the
 * pipeline decides once before the installer lock (the plan `--dry-run` prints)
 * and again under it against the state it is about to change.
 */
import type { GrantDiff } from '../package/grants.js';
import type { GrantJudgement } from './grant-approval.js';
import type { EnginesReport } from './agent-walk.js';
import { YepError } from '../errors.js';
import { sameOrigin, samePin, samePinAndFollow, sourceFor, sourceLabel } from '../sources/index.js';
import type { LockEntry, LockSource } from '../store/lockfile.js';

/** new: nothing of that name; unchanged: exactly this is installed; repinned: same pin, other bytes or grant; replaced: another origin or pin. */
export type InstallAction = 'new' | 'unchanged' | 'repinned' | 'replaced';

/** What installing one spec would do (`install --dry-run` prints it; `--json` as is). */
export interface InstallPlan {
  /** The spec as typed. */
  spec: string;
  name: string;
  version?: string;
  action: InstallAction;
  /** The lock record it would pin. */
  source: LockSource;
  content_hash: string;
  /** Fingerprint of the grant it would record. */
  grant: string;
  /** The installed entry it would replace or re-pin. */
  previous?: LockEntry;
  /** Contribution diff against the approved (or installed) grant, when there is one. */
  diff?: GrantDiff;
  /** For `replaced`: why it asks first (without a TTY it needs --yes). */
  replace_reason?: string;
  /**
   * For `replaced`: it asks first (without a TTY it needs --yes). False for a move forward
   * that `update` would make too (the newest `hello` over an older one that follows the newest).
   */
  replace_asks: boolean;
  /** The grant widens what was approved: it needs a TTY answer, `--accept <grant>` or --yes. */
  consent_needed: boolean;
  /** `engines.yolop` against the installed agent, and the newer versions skipped for it. */
  engines: EnginesReport;
}

export interface InstallDecision {
  action: InstallAction;
  /** For `replaced`: the question asked (and the refusal given without a yes). */
  why?: string;
  /** For `replaced`: what the refusal's hint offers besides --yes. */
  via: ReplaceVia;
  /** For `replaced`: it needs a yes (a TTY answer or --yes); never for a move `update` would make. */
  asks: boolean;
  consent_needed: boolean;
}

/**
 * What a refused replacement's hint offers besides --yes: `update` when it would move
 * the installed pin forward toward this one; a note that `update` keeps an exact pin
 * where it is; nothing more for a downgrade, another ref or another origin.
 */
export type ReplaceVia = 'update' | 'pinned-exactly' | 'yes-only';

/** `ReplaceVia` for replacing the installed `previous` with `next`, from the two records alone. */
export function replaceVia(previous: LockSource, next: LockSource): ReplaceVia {
  if (!sameOrigin(previous, next)) return 'yes-only';
  const kind = sourceFor(previous.type);
  if (kind.pinnedExactly(previous)) return 'pinned-exactly';
  return kind.updateReaches(previous, next) ? 'update' : 'yes-only';
}

export interface Candidate {
  source: LockSource;
  content_hash: string;
  /** Grant fingerprint. */
  grant: string;
}

/**
 * Decide what installing `next` as `name` does, given the lock entry of that name
 * (if any), whether `<store>/<name>` exists, and the grant as judged against the
 * approved one (grant-approval.ts). Throws E_INTEGRITY when the kind says the same
 * pin came back with other bytes.
 */
export function decideInstall(
  name: string,
  target: string,
  previous: LockEntry | undefined,
  next: Candidate,
  targetExists: boolean,
  judged: Pick<GrantJudgement, 'approved' | 'widens'>,
): InstallDecision {
  if (!previous) {
    if (!targetExists) return { action: 'new', via: 'yes-only', asks: false, consent_needed: false };
    return { action: 'replaced', why: `${target} exists but is not in the lock (placed by hand?)`, via: 'yes-only', asks: true, consent_needed: false };
  }
  const origin = sameOrigin(previous.source, next.source);
  const pin = samePin(previous.source, next.source);
  // Another ref or requirement to the same pin is a re-pin: the lock records what `update` now follows.
  const unchanged = samePinAndFollow(previous.source, next.source) && previous.content_hash === next.content_hash && judged.approved && targetExists;
  if (unchanged) return { action: 'unchanged', via: 'yes-only', asks: false, consent_needed: false };
  // Same pin, same bytes (a republished crate, an altered checkout): the kind decides.
  if (previous.source.type === next.source.type) sourceFor(next.source.type).checkRepin(previous, next, name);
  // The manifest is the approval boundary: a wider grant (a reworded description included) is never taken silently.
  const consent_needed = judged.widens;
  if (pin) return { action: 'repinned', via: 'yes-only', asks: false, consent_needed };
  const why = origin
    ? `${name} is installed at ${sourceLabel(previous.source)}; this would replace it with ${sourceLabel(next.source)}`
    : `${name} is already installed from ${sourceLabel(previous.source)}; this would replace it with ${sourceLabel(next.source)}`;
  // A move forward that `update` would make (npm's and cargo's `install` of a newer version) asks
  // nothing beyond the grant; a downgrade, another ref or another origin asks first.
  const via = replaceVia(previous.source, next.source);
  return { action: 'replaced', why, via, asks: via !== 'update', consent_needed };
}

/** What a replacement decided before any download would be: the entry replaced, and why. */
export interface EarlyReplacement {
  previous: LockEntry;
  why: string;
  via: ReplaceVia;
}

/**
 * Decided from the lock and the candidate records alone (before any download): the
 * installed entry from the same origin (a crate of that name) that every candidate
 * would replace after asking, since none pins what it pins. Undefined when a candidate
 * is the installed pin or a move forward `update` would make (that asks nothing), when
 * nothing of that origin is installed, or when there are no records to compare (a kind
 * that resolves only by fetching).
 */
export function certainReplacement(entries: readonly LockEntry[], records: readonly LockSource[]): EarlyReplacement | undefined {
  const first = records[0];
  if (!first) return undefined;
  const previous = entries.find((e) => sameOrigin(e.source, first));
  if (!previous || records.some((r) => !sameOrigin(previous.source, r) || samePin(previous.source, r) || replaceVia(previous.source, r) === 'update'))
    return undefined;
  const targets = records.map((r) => sourceLabel(r));
  const target = targets.length === 1 ? targets[0] : `one of ${targets.slice(0, 3).join(', ')}${targets.length > 3 ? ', …' : ''}`;
  return {
    previous,
    why: `${previous.name} is installed at ${sourceLabel(previous.source)}; this would replace it with ${target}`,
    // The best candidate decides the hint: it is what the install would have taken.
    via: replaceVia(previous.source, first),
  };
}

/** The refusal of a replacement nobody approved (no TTY and no --yes, or declined). */
export function replaceRefusal(name: string, target: string, previous: LockEntry | undefined, why: string | undefined, via: ReplaceVia): YepError {
  if (!previous) {
    return new YepError('E_CONFLICT', `${target} already exists and yep-ext did not install it.`, { hint: 'Move it aside, or pass --yes to replace it.' });
  }
  return new YepError('E_CONFLICT', `${why}.`, {
    hint: {
      update: `Pass --yes to replace it, or run \`yep-ext update ${name}\` to move it forward within what it follows.`,
      'pinned-exactly': 'Pass --yes to replace it (it was installed at an exact pin, so `update` keeps it there).',
      'yes-only': 'Pass --yes to replace it.',
    }[via],
  });
}
