/**
 * `yep-ext verify`: every named (default: every locked) extension checked against its
 * lock entry by the store's one check (store/entry-check.ts, always re-hashing), plus
 * the `engines.yolop` finding (verify-engines.ts), the packages no entry pins, the names
 * settings.toml enables that nothing installs, and the leftovers.
 */
import type { ProgramChecks } from '../package/inspect-command.js';
import type { Context } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { contentHash } from '../package/content-hash.js';
import { packageDir } from '../paths.js';
import { findEntry, loadStoreLock, type LockEntry, type Lockfile } from '../store/lockfile.js';
import { enabledButAbsentMessage, enabledButAbsentNow, interruptedMessage, unlockedPackages, unlockedSince } from '../store/unlocked-packages.js';
import { interruptedChanges, type InterruptedChange } from '../store/interrupted-changes.js';
import { custodyOf, custodyReport, type CustodyReport } from '../store/custody.js';
import { findLeftovers, leftoverMessage, type Leftover } from '../store/leftovers.js';
import { installedNameIn } from '../store/installed-name.js';
import { resolveInstalledDir } from '../store/installed-dir.js';
import { INSTALL_MOVED_DIR, notInstalled } from '../store/installed-manifest.js';
import { checkEntry, editedInPlace, repairCommand, type EntryVerification, type VerifyProblem } from '../store/entry-check.js';
import type { EnginesVerdict } from '../agent/engines.js';

/** What `verify` reports per extension: the check, plus the `engines.yolop` finding. */
interface VerifiedExtension extends EntryVerification {
  /** The installed version's verdict (null: the manifest could not be read). */
  engines: EnginesVerdict | null;
  /** Listed, not failing: the range of an extension that is not enabled excludes the agent. */
  warnings: VerifyProblem[];
}

export interface VerifyReport {
  ok: boolean;
  extensions: VerifiedExtension[];
  /** Lock entries whose keys a yolop lock write dropped, written back from yep-ext's record before the check (store/custody.ts). */
  custody_restored: { name: string; keys: string[] }[];
  /**
   * Not installed, but yep-ext's files of it remain (store/leftovers.ts; yolop's own
   * `remove` leaves them): listed, not failing, without names. `yep-ext remove <name>` deletes them.
   */
  leftovers: Leftover[];
}

/**
 * What to run next. A local directory is referenced in place, so its edits cannot be
 * "repaired" from a source: `update` reviews them and re-pins (`install --force` would
 * re-pin without the review, and `install --frozen` refuses the drift).
 */
function integrityHint(ctx: Context, bad: VerifiedExtension[], entries: LockEntry[]): string {
  const linked = new Set(entries.filter((e) => editedInPlace(ctx, e)).map((e) => e.name));
  const edited = bad.filter((e) => linked.has(e.name) && e.problems.some((p) => p.kind === 'content')).map((e) => e.name);
  // A local directory that is gone is the recorded source itself: `install --force` and `--frozen` would fail on it too.
  const gone = bad
    .filter((e) => {
      const entry = entries.find((x) => x.name === e.name);
      return entry !== undefined && repairCommand(ctx, entry) === undefined;
    })
    .map((e) => e.name);
  // Nothing records where an unlocked package came from: it cannot be repaired, only removed or installed from its source.
  const unlocked = bad.filter((e) => e.problems.some((p) => p.kind === 'unlocked')).map((e) => e.name);
  const absent = bad.filter((e) => e.problems.some((p) => p.kind === 'not-installed')).map((e) => e.name);
  // A local directory whose server command is not there (a Rust package not built yet): the store
  // links to that directory, so reinstalling finds the same; the build is the repair.
  const unbuilt = bad
    .filter((e) => linked.has(e.name) && !gone.includes(e.name) && e.problems.length > 0 && e.problems.every((p) => p.kind === 'command'))
    .map((e) => e.name);
  // Intact servers the system refuses to run (a noexec mount): no reinstall changes that, the mount does.
  const refused = bad.filter((e) => e.problems.length > 0 && e.problems.every((p) => p.kind === 'exec-refused')).map((e) => e.name);
  const rest = bad
    .filter(
      (e) =>
        !edited.includes(e.name) &&
        !unlocked.includes(e.name) &&
        !absent.includes(e.name) &&
        !gone.includes(e.name) &&
        !unbuilt.includes(e.name) &&
        !refused.includes(e.name),
    )
    .map((e) => e.name);
  const parts = [
    rest.length ? `repair with \`yep-ext install --force ${rest.join(' ')}\` (or \`yep-ext install --frozen\`)` : '',
    refused.length
      ? `let the server${refused.length === 1 ? '' : 's'} of ${refused.join(', ')} run where ${refused.length === 1 ? 'it is' : 'they are'} installed: remount that file system without noexec (or lift the policy that forbids it), or keep the yolop config directory (YOLOP_CONFIG_DIR) on one that allows running programs; reinstalling places the same files on the same mount`
      : '',
    unbuilt.length
      ? `build or restore the server command in the local ${unbuilt.length === 1 ? 'directory' : 'directories'} of ${unbuilt.join(', ')} (reinstalling finds the same directory; \`yep-ext doctor ${String(entries.find((x) => x.name === unbuilt[0])?.source.path ?? unbuilt[0])}\` shows what is missing and the build step it knows)`
      : '',
    gone.length
      ? `install ${gone.join(' ')} again from where ${gone.length === 1 ? 'its local directory is' : 'their local directories are'} now (\`${INSTALL_MOVED_DIR}\`) or drop ${gone.length === 1 ? 'it' : 'them'} (\`yep-ext remove ${gone.join(' ')}\`)`
      : '',
    edited.length
      ? `re-pin the edited or rebuilt local ${edited.length === 1 ? 'directory' : 'directories'} with \`yep-ext update ${edited.join(' ')}\` (it shows what the new files ask for)`
      : '',
    unlocked.length ? `remove what no lock entry pins (\`yep-ext remove ${unlocked.join(' ')}\`) or install it from its source to pin it` : '',
    absent.length ? `remove the settings of what is enabled but not installed (\`yep-ext remove ${absent.join(' ')}\`) or install it` : '',
  ].filter(Boolean);
  const text = parts.join('; ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}, then run \`yep-ext verify\` again.`;
}

/** A report for each store package the lock does not pin (unlocked-packages.ts). */
async function unlockedReports(ctx: Context, lock: Lockfile, only?: ReadonlySet<string>): Promise<VerifiedExtension[]> {
  const out: VerifiedExtension[] = [];
  // The lock read when verify started is seconds old after the re-hash (unlockedSince reads it again).
  const names = await unlockedSince(ctx.paths, lock);
  const interrupted = names.length > 0 ? interruptedChanges(ctx) : new Map<string, InterruptedChange>();
  for (const name of names) {
    if (only && !only.has(name)) continue;
    const dir = resolveInstalledDir(ctx.paths, name) ?? packageDir(ctx.paths, name);
    const actual = await contentHash(dir).catch(() => null);
    out.push({
      name,
      ok: false,
      dir,
      content_hash: { expected: null, actual, checked: 'hashed' },
      binary: null,
      command: null,
      problems: [
        {
          kind: 'unlocked',
          message: interrupted.has(name)
            ? interruptedMessage(name, interrupted.get(name)!)
            : `not in extensions.lock: yolop finds ${dir}/plugin.json but no lock entry pins it (placed by hand?)`,
          files: null,
        },
      ],
      engines: null,
      warnings: [],
    });
  }
  return out;
}

/** A report for each name settings.toml enables that nothing installs (enabledButAbsent); none when settings.toml cannot be read (list says so). */
async function notInstalledReports(ctx: Context, lock: Lockfile): Promise<VerifiedExtension[]> {
  return (await enabledButAbsentNow(ctx.paths, lock)).map((name) => ({
    name,
    ok: false,
    dir: null,
    content_hash: { expected: null, actual: null, checked: 'skipped' as const },
    binary: null,
    command: null,
    problems: [{ kind: 'not-installed' as const, message: enabledButAbsentMessage(name), files: null }],
    engines: null,
    warnings: [],
  }));
}

/**
 * `yep-ext verify [names…]`: every named (default: every locked) extension,
 * always re-hashed. Throws E_INTEGRITY (exit 5) with the report in `details`
 * when anything does not hold; E_ENGINES (exit 4) when the only problems are
 * enabled extensions the agent cannot run.
 */
/**
 * Before anything is checked: keys of lock entries that a yolop lock write dropped are
 * written back when the content is still the one recorded (store/custody.ts; the
 * installer lock's recovery does it), so the check below holds the entries to
 * everything yep-ext pinned, not to what the host left. On a store that cannot be
 * locked or written, or with an interrupted change pending, nothing is restored and
 * the reduced entries are reported.
 */
async function restoreLostKeys(ctx: Context): Promise<CustodyReport> {
  // Lazily: `list` shares this module, and its start-up keeps the installer lock out.
  const { storeExists, withInstallLock } = await import('../store/install-lock.js');
  // An interrupted change is the next lock-taking command's to finish (list, verify and info
  // only report it): taking the lock here would run that recovery too, so nothing is restored.
  if (!storeExists(ctx) || interruptedChanges(ctx).size > 0) return { restored: [], replaced: [] };
  try {
    await withInstallLock(ctx, async () => undefined);
  } catch (e) {
    if (!isYepError(e)) throw e;
  }
  return custodyReport(ctx);
}

/** A problem for an entry whose custody record the lock no longer matches (custody.ts). */
function custodyProblem(ctx: Context, entry: LockEntry): VerifyProblem | undefined {
  const c = custodyOf(ctx, entry);
  if (c.state === 'reduced')
    return {
      kind: 'custody',
      message: `extensions.lock lost ${c.keys.join(', ')} of this entry (a yolop lock write); the content is still the one yep-ext recorded, and the next yep-ext command that can write the store restores them`,
      files: null,
    };
  if (c.state === 'replaced')
    return {
      kind: 'custody',
      message: `extensions.lock no longer holds what yep-ext approved: the entry was rewritten without its grant (a yolop install) and pins ${entry.content_hash}, not the recorded ${c.record.content_hash}; review it with \`yep-ext update ${entry.name}\` (it asks for the whole grant) or reinstall it`,
      files: null,
    };
  return undefined;
}

export async function verifyExtensions(ctx: Context, names: string[] = []): Promise<VerifyReport> {
  const custody = await restoreLostKeys(ctx);
  const lock = await loadStoreLock(ctx.paths);
  // A named package the store holds but no entry pins is reported as unlocked (yolop finds it), not "not installed".
  const unlockedNamed: string[] = [];
  const entries =
    names.length === 0
      ? lock.entries
      : names.flatMap((n) => {
          const name = installedNameIn(ctx, lock, n);
          const entry = findEntry(lock, name);
          if (entry) return [entry];
          if (unlockedPackages(ctx.paths, new Set(lock.entries.map((e) => e.name))).includes(name)) {
            unlockedNamed.push(name);
            return [];
          }
          const [left] = findLeftovers(ctx.paths, new Set(lock.entries.map((e) => e.name)), name);
          throw notInstalled(name, left ? `${name} is ${leftoverMessage(left)}.` : 'Run `yep-ext list` to see what is installed.');
        });
  const { default: pMap } = await import('p-map');
  const programs: ProgramChecks = new Map();
  const checks = await pMap(entries, (e) => checkEntry(ctx, e, { mode: 'full', programs }), { concurrency: 4 });
  // Lazily: `list` shares this module, and its start-up keeps the agent modules out.
  const { enginesFindings } = await import('./verify-engines.js');
  const findings = await enginesFindings(
    ctx,
    checks.map((c) => ({ name: c.result.name, ...(c.manifest ? { manifest: c.manifest } : {}) })),
  );
  const extensions: VerifiedExtension[] = checks.map(({ result }) => {
    const f = findings.get(result.name);
    const entry = findEntry(lock, result.name);
    const lost = entry ? custodyProblem(ctx, entry) : undefined;
    const problems = [...result.problems, ...(f?.problem ? [f.problem] : []), ...(lost ? [lost] : [])];
    return { ...result, ok: problems.length === 0, problems, engines: f?.engines ?? null, warnings: f?.warning ? [f.warning] : [] };
  });
  // The host loads what the store holds, not what the lock lists: with no names given, a
  // package no entry pins is a difference from the lock (exit 5), not something to skip.
  if (names.length === 0) extensions.push(...(await unlockedReports(ctx, lock)), ...(await notInstalledReports(ctx, lock)));
  else if (unlockedNamed.length > 0) extensions.push(...(await unlockedReports(ctx, lock, new Set(unlockedNamed))));
  const leftovers = names.length === 0 ? findLeftovers(ctx.paths, new Set(lock.entries.map((e) => e.name))) : [];
  // A name a killed transaction holds is the next lock-taking command's to finish, not a leftover.
  const pending = leftovers.length > 0 ? interruptedChanges(ctx) : new Map<string, InterruptedChange>();
  const report: VerifyReport = {
    ok: extensions.every((e) => e.ok),
    extensions: extensions.sort((a, b) => (a.name < b.name ? -1 : 1)),
    custody_restored: custody.restored,
    leftovers: leftovers.filter((l) => !pending.has(l.name)),
  };
  if (!report.ok) {
    const bad = report.extensions.filter((e) => !e.ok);
    if (bad.every((e) => e.problems.every((p) => p.kind === 'engines'))) {
      throw new YepError(
        'E_ENGINES',
        `${bad.length} enabled extension${bad.length === 1 ? '' : 's'} cannot run on the installed yolop:\n${bad.flatMap((e) => e.problems.map((p) => `  - ${e.name}: ${p.message}`)).join('\n')}`,
        {
          hint: `Upgrade yolop, install versions that support it, or disable them (\`yep-ext disable ${bad.map((e) => e.name).join(' ')}\`).`,
          details: report as unknown as Record<string, unknown>,
        },
      );
    }
    // Installed as locked, but not startable here: said so, not as a mismatch with the lock.
    const onlyRefused = bad.every((e) => e.problems.every((p) => p.kind === 'exec-refused'));
    throw new YepError(
      'E_INTEGRITY',
      `${bad.length} of ${report.extensions.length} extensions ${onlyRefused ? 'match their lock entry but cannot start their server here' : 'do not match their lock entry'}:\n${bad.flatMap((e) => e.problems.map((p) => `  - ${e.name}: ${p.message}`)).join('\n')}`,
      {
        hint: integrityHint(ctx, bad, entries),
        details: report as unknown as Record<string, unknown>,
      },
    );
  }
  return report;
}
