/**
 * `list`: what the lock pins and what the store holds, with problems found on the
 * way (missing package, broken manifest, hash drift, unmanaged directories).
 * A broken package is reported, never fatal. File-system checks are synchronous:
 * `list` runs at the start of host sessions and scripts, and a thread-pool round
 * trip per stat costs more than the stat.
 */
import { join } from 'node:path';
import pMap from 'p-map';
import type { Context } from '../context.js';
import { loadLockAsRecorded } from '../store/custody.js';
import { checkEntry } from '../store/entry-check.js';
import type { ProgramChecks } from '../package/inspect-command.js';
import { weakBinaryProblem } from '../binary/binary-record.js';
import { isYepError } from '../errors.js';
import type { LockEntry, Lockfile, LockSource } from '../store/lockfile.js';
import { enabledButAbsent, enabledButAbsentMessage, interruptedMessage, interruptedPinnedMessage, unlockedSince } from '../store/unlocked-packages.js';
import { interruptedChanges, type InterruptedChange } from '../store/interrupted-changes.js';
import { findLeftovers, leftoverMessage } from '../store/leftovers.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { packageDir } from '../paths.js';
import { isLinked } from '../sources/index.js';
import { loadProfileLayer, loadSettingsText, settingsLookup, type SettingsLookup } from '../settings/settings.js';
import { configStatus, missingFields, type FieldStatus } from '../settings/config-status.js';
import { NO_ENGINES, declaresEngines } from '../agent/engines-declared.js';
import type { EnginesVerdict } from '../agent/engines.js';

export interface ListedExtension {
  name: string;
  version?: string;
  description?: string;
  /** Undefined when settings could not be read. */
  enabled?: boolean;
  source?: LockSource;
  content_hash?: string;
  grant?: string;
  /** Where the package lives in the store (a link for path installs). */
  dir: string;
  problems: string[];
  /** Each declared config field as set/unset (never a value). */
  config?: FieldStatus[];
  /** `engines.yolop` against the installed agent (absent when the manifest could not be read). */
  engines?: EnginesVerdict;
  /** Not installed, but yep-ext's files of it remain (store/leftovers.ts): which, and their size. */
  leftovers?: { paths: string[]; bytes: number };
  manifest?: Manifest;
}

export interface ListOptions {
  /** Re-hash crate and git packages to detect drift (default true). */
  verify?: boolean;
  /** Only these lock entries (`info`): the store's unmanaged directories are not scanned. */
  only?: string[];
  /** Read enabled state and config as yolop does under `--profile <name>` (settings.ts). */
  profile?: string;
}

/**
 * `engines.yolop` of every readable manifest. The agent is asked (a cached
 * `yolop --version`) only when some manifest declares a range: most stores cost nothing.
 */
async function addEngines(ctx: Context, items: ListedExtension[]): Promise<void> {
  if (!items.some((i) => i.manifest && declaresEngines(i.manifest.engines))) {
    for (const item of items) if (item.manifest) item.engines = { ...NO_ENGINES };
    return;
  }
  // Loaded only now: semver and the agent probe are not paid for by stores without ranges.
  const [{ detectAgentVersion }, { checkEngines }] = await Promise.all([import('../agent/agent-version.js'), import('../agent/engines.js')]);
  const agent = await detectAgentVersion(ctx);
  for (const item of items) {
    if (!item.manifest) continue;
    item.engines = checkEngines(item.manifest, agent);
    if (item.engines.status === 'excludes') item.problems.push(`engines: ${item.engines.detail} (yolop cannot run it)`);
    if (item.engines.status === 'malformed') item.problems.push(`engines: ${item.engines.detail}`);
  }
}

/**
 * `engines.yolop` of each installed entry (null when its manifest cannot be read),
 * as `list` computes it, and nothing else of list: one manifest read per entry (none
 * for an entry in `known`), no settings, hashing or server inspection (`outdated`).
 */
export async function installedEngines(
  ctx: Context,
  entries: LockEntry[],
  known?: Map<string, Manifest | undefined>,
): Promise<Map<string, EnginesVerdict | null>> {
  const items = await pMap(
    entries,
    async (entry): Promise<ListedExtension> => {
      const dir = packageDir(ctx.paths, entry.name);
      // A manifest the caller already read (outdated's tree check) is not read again.
      const manifest = known?.has(entry.name) ? known.get(entry.name) : await loadManifest(dir).catch(() => undefined);
      return { name: entry.name, dir, problems: [], ...(manifest ? { manifest } : {}) };
    },
    { concurrency: 8 },
  );
  await addEngines(ctx, items);
  return new Map(items.map((i) => [i.name, i.engines ?? null]));
}

export async function listExtensions(ctx: Context, options: ListOptions = {}): Promise<ListedExtension[]> {
  const verify = options.verify ?? true;
  const lock = await loadLockAsRecorded(ctx, { notice: options.only === undefined });
  const { settingsOf, settingsProblem } = await readSettingsOnce(ctx, options.profile);
  const entries = options.only ? lock.entries.filter((e) => options.only!.includes(e.name)) : lock.entries;
  // A killed install or update leaves the new version in the store under the old lock entry: said as such, not as drift.
  const interrupted = interruptedChanges(ctx);
  // Damage is judged by verify.ts's checkEntry, the check behind `verify`, `install --frozen` and a
  // plain `install` (their `needsRefetch` is true exactly when this row shows a tree problem:
  // test/cli/intact-rule.test.ts holds the table).
  // One look at each program outside the packages (an interpreter, PATH's directories) for all the rows.
  const programs: ProgramChecks = new Map();
  const listed = await pMap(entries, (entry) => listEntry(ctx, entry, { settingsOf, settingsProblem, interrupted, verify, programs }), { concurrency: 8 });
  await addEngines(ctx, listed);
  if (options.only) return listed;
  await addUnlistedRows(ctx, lock, listed, settingsOf, interrupted);
  return listed.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * settings.toml, read and parsed once for every row (a parse per extension dominated `list`
 * with 50); a broken one makes `enabled` unknown, not the listing fatal.
 */
async function readSettingsOnce(ctx: Context, profileName: string | undefined): Promise<{ settingsOf?: SettingsLookup; settingsProblem?: string }> {
  let settingsText: string | undefined;
  let settingsProblem: string | undefined;
  // A profile that does not exist is an error of the command line, not a problem of each row.
  const profile = profileName === undefined ? undefined : await loadProfileLayer(ctx.paths, profileName);
  try {
    settingsText = await loadSettingsText(ctx.paths);
  } catch (e) {
    if (!isYepError(e)) throw e;
    settingsProblem = e.message;
  }
  let settingsOf: SettingsLookup | undefined;
  if (settingsText !== undefined) {
    try {
      settingsOf = settingsLookup(settingsText, ctx.paths.settingsFile, profile);
    } catch (e) {
      if (!isYepError(e)) throw e;
      settingsProblem = e.message;
    }
  }
  return { ...(settingsOf ? { settingsOf } : {}), ...(settingsProblem !== undefined ? { settingsProblem } : {}) };
}

/** One locked entry's row: what the lock pins, its settings, and the problems its check finds. */
async function listEntry(
  ctx: Context,
  entry: LockEntry,
  run: {
    settingsOf?: SettingsLookup | undefined;
    settingsProblem?: string | undefined;
    interrupted: Map<string, InterruptedChange>;
    verify: boolean;
    programs: ProgramChecks;
  },
): Promise<ListedExtension> {
  const { settingsOf, settingsProblem, interrupted, verify, programs } = run;
  const dir = packageDir(ctx.paths, entry.name);
  const item: ListedExtension = {
    name: entry.name,
    ...(entry.version !== undefined ? { version: entry.version } : {}),
    source: entry.source,
    content_hash: entry.content_hash,
    ...(typeof entry.grant === 'string' ? { grant: entry.grant } : {}),
    dir,
    problems: settingsProblem ? [`enabled state unknown: ${settingsProblem}`] : [],
  };
  // Enabled and config exactly as the host reads them (host-reading.ts).
  const settings = settingsOf?.(entry.name);
  if (settings) {
    item.enabled = settings.enabled;
    const kept = Object.keys(settings.kept);
    if (settings.enabled && kept.length > 0) {
      item.problems.push(
        `config not in effect: settings.toml keeps ${kept.join(', ')} on an entry yolop ignores (a later \`enabled = false\` entry for ext:${entry.name} cancels it); run \`yep-ext enable ${entry.name}\` to apply it`,
      );
    }
  }
  // The one check shared with `verify` (operations/verify.ts), cheap: an unchanged stat
  // signature stands for the hash; only a changed tree is re-hashed.
  const check = await checkEntry(ctx, entry, { mode: 'cheap', skipHashes: !verify, programs });
  if (check.manifest) {
    item.manifest = check.manifest;
    if (item.manifest.description) item.description = item.manifest.description;
    const config = await configStatus(ctx.paths, item.manifest, settingsOf?.(item.manifest.name)).catch(() => undefined);
    if (config && config.length > 0) {
      item.config = config;
      const missing = missingFields(config);
      if (missing.length > 0 && item.enabled) item.problems.push(`setup incomplete: ${missing.map((f) => f.key).join(', ')} unset`);
    }
  }
  const halfDone = interrupted.get(entry.name);
  if (halfDone && halfDone !== 'remove' && check.result.problems.length > 0) {
    item.problems.push(interruptedPinnedMessage(entry.name, halfDone));
    return item;
  }
  // An unresolvable command of a fetched package is doctor's and verify's to report (a
  // package-only install is normal); a server file in the package that cannot run is a
  // problem everywhere, and so is a local package whose server is not built yet.
  const linked = isLinked(entry.source);
  for (const p of check.result.problems) if (p.kind !== 'command' || linked) item.problems.push(p.message);
  if (check.result.problems.some((p) => p.kind === 'missing')) return item;
  const weak = weakBinaryProblem(entry.source);
  if (weak) item.problems.push(weak);
  return item;
}

/**
 * The rows of what the lock does not pin: store directories it does not know, names
 * settings.toml enables with nothing installed, and yep-ext's files left of a removed one.
 */
async function addUnlistedRows(
  ctx: Context,
  lock: Lockfile,
  listed: ListedExtension[],
  settingsOf: SettingsLookup | undefined,
  interrupted: Map<string, InterruptedChange>,
): Promise<void> {
  // Directories in the store the lock does not know (placed by hand, or by an older tool).
  // The host loads them all the same: whether it does (settings.toml) is known, not "?".
  const unlocked = await unlockedSince(ctx.paths, lock);
  for (const n of unlocked) {
    const settings = settingsOf?.(n);
    const op = interrupted.get(n);
    const problem = op ? interruptedMessage(n, op) : 'not in extensions.lock (placed by hand?): reinstall it to pin it';
    listed.push({ name: n, dir: join(ctx.paths.storeDir, n), ...(settings ? { enabled: settings.enabled } : {}), problems: [problem] });
  }
  // Enabled for the host, but nothing of it is installed: the host is told to load what is not there.
  if (settingsOf) {
    for (const n of enabledButAbsent(ctx.paths, settingsOf, lock))
      listed.push({ name: n, dir: join(ctx.paths.storeDir, n), enabled: true, problems: [enabledButAbsentMessage(n)] });
  }
  // Not installed, but yep-ext's files of it remain (yolop's own `remove` leaves them): their size, and how to delete them.
  const leftovers = findLeftovers(ctx.paths, new Set(lock.entries.map((e) => e.name)));
  // A name a killed transaction holds is the next lock-taking command's to finish, not a leftover.
  const pending = leftovers.length > 0 ? interruptedChanges(ctx) : new Map<string, 'remove' | 'place'>();
  for (const l of leftovers.filter((x) => !pending.has(x.name))) {
    const row = listed.find((i) => i.name === l.name);
    const files = { paths: l.paths, bytes: l.bytes };
    if (row) {
      row.leftovers = files;
      row.problems.push(leftoverMessage(l));
    } else {
      const settings = settingsOf?.(l.name);
      listed.push({
        name: l.name,
        dir: join(ctx.paths.storeDir, l.name),
        ...(settings ? { enabled: settings.enabled } : {}),
        problems: [leftoverMessage(l)],
        leftovers: files,
      });
    }
  }
}
