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
import { YepError, isYepError } from '../errors.js';
import { loadLock, type LockEntry, type Lockfile } from '../store/lockfile.js';
import { unlockedSince } from '../store/unlocked-packages.js';
import { INSTALL_MOVED_DIR } from '../store/installed-manifest.js';
import { describeSource, isLinked, sourceFor, type Kind } from '../sources/index.js';
import { crateInstallSpec, requirementFor } from '../sources/crate-install-spec.js';
import type { Upstream } from '../sources/source.js';
import type { EnginesVerdict } from '../agent/engines.js';
import type { Manifest } from '../package/manifest.js';
import { installedEngines } from './list.js';
import { packageDir } from '../paths.js';
import { checkEntry, editedInPlace, misdirectedProblem, missingProblem, needsRefetch, repairCommand, repairHint, type VerifyProblem } from './verify.js';
import { fetchBudget, walkNewer, type NewerEngines } from './outdated-engines.js';

export type { NewerEngines } from './outdated-engines.js';

/** Lookups at once: each is a request or a `git ls-remote` child. */
export const OUTDATED_CONCURRENCY = 4;

/**
 * up-to-date; update: `yep-ext update` moves it (wanted is newer); beyond: only a
 * newer version outside the recorded requirement exists; held: newer versions
 * exist, but each one tried needs a newer yolop (`newer_engines`); local: a path
 * install; damaged: what is installed is not what the lock pins (gone from the
 * store, edited files, a drifted binary, a broken manifest: verify.ts `needsRefetch`),
 * so "current" is not what the host loads (`error` says what, `hint` repairs it);
 * failed: the lookup failed (`error`).
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
  /** The command that gets the newer version; null when there is none. */
  hint: string | null;
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
 * The row for `entry` given what its origin offers (pure). With `walk` (the newer
 * versions' ranges were checked), the status and hint follow the versions the
 * agent can run: `update` when the requirement selects one, else `beyond` (the
 * install of the newest), else `held`.
 */
export function outdatedRow(entry: LockEntry, up: Upstream | undefined, engines: EnginesVerdict | null, walk?: NewerEngines, damage?: YepError): OutdatedItem {
  const source = sourceFor(entry.source.type);
  const rec = entry.source as Record<string, unknown>;
  const requirement = typeof rec.requirement === 'string' ? rec.requirement : typeof rec.requested_ref === 'string' ? rec.requested_ref : null;
  const current = source.linked ? (entry.version ?? null) : source.pin(entry.source) || null;
  const row = (wanted: string | null, latest: string | null, status: OutdatedStatus, hint: string | null): OutdatedItem => ({
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
    error: null,
  });
  // Whatever the origin offers, "up to date" (or "update" from `current`, or "local") would describe a tree the host does not load.
  if (damage) return { ...row(up?.wanted ?? null, up?.latest ?? null, 'damaged', repairOf(entry, damage)), error: damage.toJSON() };
  if (!up) return row(null, null, 'local', null);
  const checked = walk?.status === 'checked' ? walk : undefined;
  let status: OutdatedStatus = up.update ? 'update' : up.beyond ? 'beyond' : 'up-to-date';
  if (checked) status = checked.runnable_in_requirement !== null ? 'update' : checked.runnable !== null ? 'beyond' : 'held';
  const crate = typeof rec.crate_name === 'string' ? rec.crate_name : undefined;
  const target = checked?.runnable ?? up.latest;
  const hint =
    status === 'update'
      ? `yep-ext update ${entry.name}`
      : status === 'beyond' && crate && target
        ? `yep-ext install ${crateInstallSpec(entry.name, crate, requirementFor(target))}`
        : null;
  return row(up.wanted, up.latest, status, hint);
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

/** `name`'s upstream, or undefined for a kind without one (path). Throws what the lookup throws. */
export async function upstreamOf(ctx: Context, entry: LockEntry): Promise<Upstream | undefined> {
  const source = sourceFor(entry.source.type);
  return source.upstream ? source.upstream(ctx, entry.source) : undefined;
}

/** `outdated`'s answer: a row per lock entry, and the store's packages no entry pins (the host loads them; nothing says their origin). */
export interface OutdatedReport {
  items: OutdatedItem[];
  unlocked: string[];
}

export async function outdatedReport(ctx: Context): Promise<OutdatedReport> {
  const lock = await loadLock(ctx.paths.lockFile);
  const items = await outdatedRows(ctx, lock);
  return { items, unlocked: await unlockedSince(ctx.paths, lock) };
}

async function outdatedRows(ctx: Context, lock: Lockfile): Promise<OutdatedItem[]> {
  // The installed versions' engines verdicts, as list computes them (a manifest read each, nothing more).
  // Each owned tree checked once (cheap: the stat signature stands for the hash), its manifest reused for engines.
  const checks = new Map(await pMap(lock.entries, async (entry) => [entry.name, await treeCheck(ctx, entry)] as const, { concurrency: 8 }));
  const known = new Map([...checks].filter(([, c]) => c !== undefined).map(([name, c]) => [name, c!.manifest]));
  const enginesOf = await installedEngines(ctx, lock.entries, known);
  const budget = fetchBudget();
  const items = await pMap(
    lock.entries,
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
