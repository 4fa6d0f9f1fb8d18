/**
 * What an installed entry's origin offers now: the one answer `update`, `outdated`
 * and `info` read (Source.upstream: one index read or one ls-remote; the crate
 * rules are crates-io/pick-version.ts), so "can be updated" in one of them is
 * "updated" in the other, under the same cooldown and the same "newer outside the
 * requirement" rule.
 */
import type { Context } from '../context.js';
import { sourceFor, type LockSource } from '../sources/index.js';
import { crateInstallSpec, requirementFor } from '../sources/crate-install-spec.js';
import type { Upstream } from '../sources/source.js';
import type { LockEntry } from '../store/lockfile.js';

/** The newest release outside the recorded requirement, and what to type after `yep-ext install` to take it. */
export interface NewerOutside {
  version: string;
  /** The recorded requirement it is outside of. */
  requirement: string;
  /** The install spec that reaches it, naming the installed crate (`hello@^0.4`, `crates.io:some-crate@^2`). */
  spec: string;
}

/**
 * `entry`'s upstream, or undefined for a kind without one (a path install). Its notes
 * (the versions a cooldown kept out) are said here, once, for every caller.
 */
export async function upstreamOf(ctx: Context, entry: LockEntry): Promise<Upstream<LockSource> | undefined> {
  const source = sourceFor(entry.source.type);
  if (!source.upstream) return undefined;
  const up = (await source.upstream(ctx, entry.source)) as Upstream<LockSource>;
  for (const note of up.notes) ctx.log.warn(`${entry.name}: ${note}`);
  return up;
}

/**
 * The records `update` would fetch for `entry`, best first (empty: nothing to move to), from
 * the same answer. A kind without an upstream (a linked directory) is re-read as recorded:
 * its content hash decides whether anything changed.
 */
export function updateCandidates(entry: LockEntry, up: Upstream<LockSource> | undefined): LockSource[] {
  return up ? up.candidates : [entry.source];
}

/**
 * The one "newer outside the requirement" answer for `entry`, or null: `up.outside`, or
 * `version` when the caller knows better which outside release a command should take
 * (outdated's engines walk: the newest one the agent can run).
 */
export function newerOutside(entry: LockEntry, up: Pick<Upstream, 'outside'> | undefined, version = up?.outside?.version): NewerOutside | null {
  const { crate_name: crate, requirement: recorded } = entry.source;
  const requirement = up?.outside?.requirement ?? (typeof recorded === 'string' ? recorded : undefined);
  if (version === undefined || requirement === undefined || typeof crate !== 'string') return null;
  return { version, requirement, spec: crateInstallSpec(entry.name, crate, requirementFor(version)) };
}
