/**
 * `outdated`: for every locked extension, what its origin offers now, without
 * downloading a package: a crate's index (one read), a git ref's commit
 * (ls-remote). `wanted` is what `update` would move to (within the recorded
 * requirement or ref), `latest` the newest at all; path installs are `local`
 * (edited in place: nothing upstream to compare). Lookups run in parallel,
 * bounded; one failing is reported on its row, never fatal for the others.
 *
 * "Newer, but needs a newer yolop": a candidate's `engines.yolop` is known only
 * after its download, so for a crate with newer versions the newest are fetched
 * and verified as install does (outdated-engines.ts; the shared download cache
 * makes a second run free) and the row names the newest the agent can run and
 * the newer ones it cannot (`newer_engines`). When none can, the row is `held`,
 * which `--exit-code` does not count (an update nobody can take is not a CI
 * failure). The installed version's own verdict is reported (`engines`), as `list` does.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pMap from 'p-map';
import type { Context } from '../context.js';
import { loadLockAsRecorded } from '../store/custody.js';
import { YepError, isYepError } from '../errors.js';
import type { LockEntry } from '../store/lockfile.js';
import { lockEntriesNamed } from '../store/locked-entries.js';
import { unlockedSince } from '../store/unlocked-packages.js';
import { INSTALL_MOVED_DIR } from '../store/installed-manifest.js';
import { describeSource, isLinked, sourceFor, type Kind } from '../sources/index.js';
import type { Upstream } from '../sources/source.js';
import type { EnginesVerdict } from '../agent/engines.js';
import type { Manifest } from '../package/manifest.js';
import { installedEngines } from './list.js';
import { packageDir } from '../paths.js';
import {
  checkEntry,
  editedInPlace,
  misdirectedProblem,
  missingProblem,
  needsRefetch,
  repairCommand,
  repairHint,
  type VerifyProblem,
} from '../store/entry-check.js';
import { fetchBudget, walkNewer, type NewerEngines } from './outdated-engines.js';
import { newerOutside, upstreamOf, type NewerOutside } from './offer.js';
import { withPolicy } from './policy-gate.js';

export type { NewerEngines } from './outdated-engines.js';

/** Lookups at once: each is a request or a `git ls-remote` child. */
const OUTDATED_CONCURRENCY = 4;

/**
 * up-to-date; update: `yep-ext update <name>` moves it (within the recorded
 * requirement or ref; `newer_outside` may name a newer release beyond it too);
 * beyond: only a release outside the recorded requirement is newer (`hint` is the
 * install that takes it); held: newer versions exist, but each one tried needs a
 * newer yolop (`newer_engines`); local: a path install; damaged: what is installed
 * is not what the lock pins (gone from the store, edited files, a drifted binary, a
 * broken manifest: verify.ts `needsRefetch`), so "current" is not what the host loads
 * (`error` says what, `hint` repairs it); failed: the lookup failed (`error`).
 */
export type OutdatedStatus = 'up-to-date' | 'update' | 'beyond' | 'held' | 'local' | 'damaged' | 'failed';

export interface OutdatedItem {
  name: string;
  kind: Kind;
  /** One line for people (`crates.io:yolop-extension-x@0.1.0`, the URL and commit, the path). */
  source: string;
  /** The installed pin: a crate version, a git commit; a path install's manifest version (or null). */
  current: string | null;
  wanted: string | null;
  latest: string | null;
  /** The recorded intent: a crate requirement, a git ref; null = the newest / the default branch. */
  requirement: string | null;
  status: OutdatedStatus;
  /** The installed version's `engines.yolop` against the installed agent (null: the manifest is unreadable). */
  engines: EnginesVerdict | null;
  /**
   * The newer versions' `engines.yolop` against the installed agent (crates with a
   * newer version; null otherwise): the newest the agent can run, and the newer ones it cannot.
   */
  newer_engines: NewerEngines | null;
  /** The command that moves it: `yep-ext update <name>` within the requirement, else the install outside it; null when none. */
  hint: string | null;
  /** The one "newer outside the requirement" answer (offer.ts; `update` gives the same): `{version, requirement, spec}`. */
  newer_outside: NewerOutside | null;
  /** The git tag the recorded ref names (git; null otherwise): the table shows it in place of the commit it pins. */
  tag: string | null;
  error: ReturnType<YepError['toJSON']> | null;
}

/** Whether any item counts as outdated (for `--exit-code`; a damaged row is answered by its own exit, 5). */
export function anyOutdated(items: OutdatedItem[]): boolean {
  return items.some((i) => i.status === 'update' || i.status === 'beyond');
}

/** The command a damaged row names: the repair its damage records (damageError), else `install --force`. */
function repairOf(entry: LockEntry, damage: YepError): string {
  const repair = (damage.details as { repair?: unknown } | undefined)?.repair;
  return typeof repair === 'string' ? repair : `yep-ext install --force ${entry.name}`;
}

/**
 * The row for `entry` given what its origin offers (pure): the same answer `update`
 * reads (offer.ts), so a row that says `update` is one `yep-ext update` moves. With
 * `walk` (the newer versions' ranges were checked), the status and the commands follow
 * the versions the agent can run: `update` when the requirement selects one, else
 * `beyond` (the install of the newest runnable), else `held`.
 */
export function outdatedRow(entry: LockEntry, up: Upstream | undefined, engines: EnginesVerdict | null, walk?: NewerEngines, damage?: YepError): OutdatedItem {
  const source = sourceFor(entry.source.type);
  const rec = entry.source as Record<string, unknown>;
  const requirement = typeof rec.requirement === 'string' ? rec.requirement : typeof rec.requested_ref === 'string' ? rec.requested_ref : null;
  const current = source.linked ? (entry.version ?? null) : source.pin(entry.source) || null;
  const row = (
    wanted: string | null,
    latest: string | null,
    status: OutdatedStatus,
    hint: string | null,
    outside: NewerOutside | null = null,
  ): OutdatedItem => ({
    name: entry.name,
    kind: entry.source.type,
    source: describeSource(entry.source),
    current,
    wanted,
    latest,
    requirement,
    status,
    engines,
    newer_engines: walk ?? null,
    hint,
    newer_outside: outside,
    tag: up?.tag ?? null,
    error: null,
  });
  // Whatever the origin offers, "up to date" (or "update" from `current`, or "local") would describe a tree the host does not load.
  if (damage) return { ...row(up?.wanted ?? null, up?.latest ?? null, 'damaged', repairOf(entry, damage)), error: damage.toJSON() };
  if (!up) return row(null, null, 'local', null);
  const checked = walk?.status === 'checked' ? walk : undefined;
  // The newest release outside the requirement that a command would take: with a walk, the newest the agent can run.
  const outside = checked
    ? checked.runnable !== null && checked.runnable !== checked.runnable_in_requirement
      ? newerOutside(entry, up, checked.runnable)
      : null
    : newerOutside(entry, up);
  const within = checked ? checked.runnable_in_requirement !== null : up.update;
  const status: OutdatedStatus = within ? 'update' : outside ? 'beyond' : checked && checked.candidates > 0 ? 'held' : 'up-to-date';
  const hint = status === 'update' ? `yep-ext update ${entry.name}` : status === 'beyond' && outside ? `yep-ext install ${outside.spec}` : null;
  // What `update` moves to: with a walk, the newest the requirement selects that the agent runs (else nothing moves).
  const wanted = checked ? (checked.runnable_in_requirement ?? current) : up.wanted;
  return row(wanted, up.latest, status, hint, outside);
}

/**
 * Why the installed tree of `entry` is not what its lock entry pins (the one intact
 * rule, verify.ts `needsRefetch`, checked cheaply as `list` does), or undefined when it
 * is. A local directory (linked) is edited in place, so only its absence counts: a store
 * link or a directory that is gone leaves yolop nothing to load.
 */
export async function damageOf(ctx: Context, entry: LockEntry): Promise<YepError | undefined> {
  return (await treeCheck(ctx, entry))?.damage;
}

/** `damageOf`, with the manifest the check read (none for a linked entry: only its presence is checked). */
async function treeCheck(ctx: Context, entry: LockEntry): Promise<{ damage?: YepError; manifest?: Manifest } | undefined> {
  // A copy of a path package (a real directory, as the host installs one) is checked as any tree below.
  if (isLinked(entry.source) && (editedInPlace(ctx, entry) || !existsSync(packageDir(ctx.paths, entry.name)))) {
    // plugin.json through the store's link: the link and the directory it points at are both
    // there, and the link leads to the directory the lock pins (not another one, which yolop would load).
    if (!existsSync(join(packageDir(ctx.paths, entry.name), 'plugin.json'))) return { damage: damageError(ctx, entry, [missingProblem(ctx, entry)]) };
    const misdirected = misdirectedProblem(ctx, entry);
    return misdirected ? { damage: damageError(ctx, entry, [misdirected]) } : undefined;
  }
  const { result, manifest } = await checkEntry(ctx, entry, { mode: 'cheap' });
  if (!needsRefetch(entry, result)) return { ...(manifest ? { manifest } : {}) };
  return { damage: damageError(ctx, entry, result.problems), ...(manifest ? { manifest } : {}) };
}

function damageError(ctx: Context, entry: LockEntry, problems: VerifyProblem[]): YepError {
  return new YepError('E_INTEGRITY', `what is installed does not match its lock entry: ${problems.map((p) => p.message).join('; ')}`, {
    hint: repairHint(ctx, entry, 'then run `yep-ext verify`'),
    // The row's hint: for a local directory that is gone, nothing re-reads its recorded source.
    details: { name: entry.name, problems, repair: repairCommand(ctx, entry) ?? INSTALL_MOVED_DIR },
  });
}

/** `outdated`'s answer: a row per lock entry, and the store's packages no entry pins (the host loads them; nothing says their origin). */
export interface OutdatedReport {
  items: OutdatedItem[];
  unlocked: string[];
}

/** `names`: only those extensions' rows (npm's `outdated <pkg>`); none: every lock entry, and the store's unlocked packages. */
export async function outdatedReport(runCtx: Context, names: readonly string[] = []): Promise<OutdatedReport> {
  // The policy's min_age is a floor of the cooldown, as for install and update.
  const { ctx } = withPolicy(runCtx);
  const lock = await loadLockAsRecorded(ctx);
  const entries = lockEntriesNamed(ctx, lock, names);
  const items = await outdatedRows(ctx, entries);
  return { items, unlocked: names.length === 0 ? await unlockedSince(ctx.paths, lock) : [] };
}

async function outdatedRows(ctx: Context, entries: LockEntry[]): Promise<OutdatedItem[]> {
  // The installed versions' engines verdicts, as list computes them (a manifest read each, nothing more).
  // Each owned tree checked once (cheap: the stat signature stands for the hash), its manifest reused for engines.
  const checks = new Map(await pMap(entries, async (entry) => [entry.name, await treeCheck(ctx, entry)] as const, { concurrency: 8 }));
  const known = new Map([...checks].filter(([, c]) => c !== undefined).map(([name, c]) => [name, c!.manifest]));
  const enginesOf = await installedEngines(ctx, entries, known);
  const budget = fetchBudget();
  const items = await pMap(
    entries,
    async (entry): Promise<OutdatedItem> => {
      const engines = enginesOf.get(entry.name) ?? null;
      // Known before any request: what a failed lookup below must not hide.
      const damage = checks.get(entry.name)?.damage;
      try {
        const up = await upstreamOf(ctx, entry);
        // Newer versions' ranges: only after a download (each verified; the download cache keeps them).
        const walk = !damage && up?.newer && up.newer.length > 0 ? await walkNewer(ctx, entry, up.newer, budget) : undefined;
        return outdatedRow(entry, up, engines, walk, damage);
      } catch (e) {
        // A failed lookup is the row's; a usage mistake (an --index or YEP_EXT_INDEX that is no
        // index URL) is the whole run's, exit 2 as for info, install and update, not "failed" rows.
        if (!isYepError(e) || e.code === 'E_USAGE') throw e;
        if (damage) {
          // The tree is known damaged whatever the origin says: the row says so, and the failed
          // lookup is a warning (the repair, install --force, will need the origin too).
          ctx.log.warn(`${entry.name}: its origin could not be asked: ${e.message}`);
          return { ...outdatedRow(entry, undefined, engines), status: 'damaged', hint: repairOf(entry, damage), error: damage.toJSON() };
        }
        return { ...outdatedRow(entry, undefined, engines), status: 'failed', error: e.toJSON() };
      }
    },
    { concurrency: OUTDATED_CONCURRENCY },
  );
  if (budget.stopped.length > 0) {
    ctx.log.info(
      `engines.yolop of ${budget.stopped.sort().join(', ')} not checked: this run's download budget is spent; run \`yep-ext outdated\` again (what was read is remembered).`,
    );
  }
  return items.sort((a, b) => (a.name < b.name ? -1 : 1));
}
