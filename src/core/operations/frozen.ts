/**
 * `install --frozen`: make the store match a lockfile exactly, with no
 * resolution. Every entry is fetched at its pinned version/commit (concurrently,
 * bounded) into staging and must hash to the locked content_hash and, when the
 * lock records one, carry the locked grant; any mismatch fails the whole run
 * before anything is placed. Entries already installed with the locked hash cost
 * one stat and no network (and do not load the fetching code: frozen-fetch.ts).
 * Every write of the store's lock goes through the
 * transaction (store/transaction.ts), the lock's only writer.
 */
import type { ProgramChecks } from '../package/inspect-command.js';
import { existsSync } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pMap from 'p-map';
import type { Context } from '../context.js';
import { loadLockAsRecorded } from '../store/custody.js';
import { YepError, errnoCode, isYepError, stateIoError, stopIfInterrupted, type ErrorCode } from '../errors.js';
import { withInstallLock } from '../store/install-lock.js';
import { describeSource, sourceFor } from '../sources/index.js';
import { checkOutputFile } from '../fs/output-file.js';
import { LOCK_HEADER, findEntry, holdsLock, loadStoreLock, parseLock, saveLock, serializeLock, type LockEntry, type Lockfile } from '../store/lockfile.js';
import { hasUrlCredential } from '../text/redact.js';
import { loadSettingsText, settingsLookup } from '../settings/settings.js';
import { checkEntry, needsRefetch, recordCleanState, type EntryCheck } from '../store/entry-check.js';
import { readRegularFileSync } from '../fs/read-regular-file.js';
import { makeStagingDir, removeDir, sweepStaging } from '../store/staging.js';
import { noteCreated } from '../store/created-dirs.js';
import { pinEntries, type LockChanges } from '../store/transaction.js';
import { enabledButAbsentNow, unlockedPackages, unlockedSince } from '../store/unlocked-packages.js';
import type { PreparedPackage } from './prepare.js';
import type { EnginesVerdict } from '../agent/engines.js';
import { NO_ENGINES, declaresEngines } from '../agent/engines-declared.js';
import type { Manifest } from '../package/manifest.js';
import { approvalOf, grantOf, type Grant } from '../package/grants.js';
import { admitAll, applyPolicy, installedViolations, preparedSubject, withPolicy } from './policy-gate.js';
import { policyError, type PolicyViolation } from '../policy/evaluate.js';
import type { Policy } from '../policy/policy-file.js';

export interface FrozenItem {
  name: string;
  status: 'skipped' | 'installed' | 'failed';
  reason?: string;
  /** `engines.yolop` against the installed agent (status `none` when undeclared; a warning at most: the lock rules). */
  engines?: EnginesVerdict;
}

export interface FrozenOptions {
  /** A lockfile to install from; default: the store's own extensions.lock. */
  lockfile?: string;
  /** Where a relative `lockfile` is (the run's working directory); default: this process's. */
  cwd?: string;
  concurrency?: number;
  /** Told as each entry is verified (plain per-extension lines off a TTY); those already in place, once all are checked. */
  onItem?: (item: FrozenItem) => void;
}

/**
 * Is `entry` installed exactly? Same lock record (hash, grant, binary digest) and the
 * shared check (verify.ts) in cheap mode: an unchanged stat signature stands for the
 * hash, anything else is re-hashed. What verify.ts's `needsRefetch` says a fetch
 * repairs is fetched again, the same rule plain `install` and `list` follow.
 */
async function installedAsLocked(ctx: Context, current: Lockfile, entry: LockEntry, programs: ProgramChecks): Promise<EntryCheck | undefined> {
  const have = findEntry(current, entry.name);
  if (!have || have.content_hash !== entry.content_hash) return undefined;
  const otherGrant = typeof entry.grant === 'string' && have.grant !== entry.grant;
  if (otherGrant && typeof have.grant !== 'string') return undefined;
  // A binary built here with cargo is this machine's (builds are not byte-reproducible): its file is
  // checked against the store's own record below, not against another machine's digest in the lock.
  if (have.source.binary_source !== 'cargo' && have.source.binary_file_sha256 !== entry.source.binary_file_sha256) return undefined;
  const check = await checkEntry(ctx, have, { mode: 'cheap', programs });
  if (needsRefetch(have, check.result)) return undefined;
  // Two fingerprints of one grant: a lock written before the grant held the words the model
  // reads names it by its format-1 fingerprint. The intact tree holds the locked bytes, so
  // both approve its manifest's grant, or the entry is fetched again (and prepareExactly judges).
  if (otherGrant && !(check.manifest && bothApprove(have.grant as string, entry.grant as string, grantOf(check.manifest)))) return undefined;
  return check;
}

function bothApprove(a: string, b: string, grant: Grant): boolean {
  return approvalOf(a, grant) !== undefined && approvalOf(b, grant) !== undefined;
}

/**
 * The lock rules a frozen install, so a package whose `engines.yolop` excludes the
 * installed agent is installed as pinned, with a warning (and `enable` refuses it).
 * `manifests` holds those already read (the check of a skipped entry, a prepared
 * package's): each manifest is read once per run.
 */
async function reportEngines(ctx: Context, items: FrozenItem[], manifests: Map<string, Manifest>): Promise<void> {
  for (const item of items) {
    const manifest = manifests.get(item.name);
    if (!manifest) continue;
    // What checkAgainstAgent says of a manifest without `engines.yolop`, without loading
    // semver and the agent probe (child_process): as `list` does, a store without ranges
    // pays nothing for them (a warm run is mostly start-up).
    if (!declaresEngines(manifest.engines)) {
      item.engines = { ...NO_ENGINES };
      continue;
    }
    const [{ checkAgainstAgent }, { describeVerdict }] = await Promise.all([import('../agent/agent-version.js'), import('../agent/engines.js')]);
    const verdict = await checkAgainstAgent(ctx, manifest);
    item.engines = verdict;
    if (verdict.status === 'none') continue;
    const label = `${manifest.name}${manifest.version !== undefined ? ` ${manifest.version}` : ''}`;
    if (verdict.status === 'excludes')
      ctx.log.warn(`${describeVerdict(label, verdict)}: installed as the lock pins it, but yolop cannot run it (\`yep-ext enable\` refuses it).`);
    if (verdict.status === 'malformed') ctx.log.warn(`${describeVerdict(label, verdict)}.`);
  }
}

/**
 * The lockfile given with --lockfile: it must be a file. (The store's own lock
 * may be absent, meaning nothing is installed; a lockfile named on the command
 * line that is absent is a mistyped path, and a directory is not a lockfile.)
 * A relative `file` is read from `cwd` and named as given.
 */
export async function loadGivenLockfile(file: string, cwd: string = process.cwd()): Promise<Lockfile> {
  const path = resolve(cwd, file);
  const st = await stat(path).catch((e: unknown) => {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR')
      throw new YepError('E_NOT_FOUND', `There is no lockfile at ${file}.`, {
        hint: 'Check the path given to --lockfile (write one with `yep-ext lock export <path>`).',
      });
    throw stateIoError('read', file, e);
  });
  if (st.isDirectory()) {
    throw new YepError('E_USAGE', `--lockfile ${file} is a directory, not a lockfile.`, {
      hint: `Give the lock file itself, e.g. --lockfile ${join(file, 'yolop-extensions.lock')}.`,
    });
  }
  const bytes = readRegularFileSync(path, 'The lockfile', {
    hint: `Give --lockfile a lockfile written by \`yep-ext lock export\` (or the store's extensions.lock).`,
  });
  if (bytes === undefined) throw new YepError('E_NOT_FOUND', `There is no lockfile at ${file}.`, { hint: 'Check the path given to --lockfile.' });
  const text = bytes.toString('utf8');
  const lock = parseLock(text, file);
  // A TOML file that is not a lock (a Cargo.toml given by mistake) parses to no entries: refuse
  // it rather than "install" nothing. A lock always has `extensions` unless it is comments only.
  const hasContent = text.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (hasContent && !holdsLock(text, lock)) {
    throw new YepError('E_STATE', `${file} is not a lockfile: it has no \`extensions\` table.`, {
      hint: "Give --lockfile a lockfile written by `yep-ext lock export` (or the store's extensions.lock).",
    });
  }
  return lock;
}

/** For commands that take --lockfile. */
const WITH_LOCKFILE_HINT =
  'Name the lock your project keeps with --lockfile <path> (write one with `yep-ext lock export <path>` where the extensions are installed), or install extensions without --frozen.';

/**
 * The store's own lock, for a command whose whole job is what it pins (`install --frozen`
 * without --lockfile, `mirror`, `lock export`). No lock at all is not an empty lock: `npm
 * ci` without package-lock.json and `cargo build --locked` without Cargo.lock fail, and so
 * do these (exit 3), so that a provisioning script that forgot to put its lock in place is
 * not green with nothing installed, mirrored or exported. A lock that exists and pins
 * nothing (what `remove` of the last extension leaves) is returned: the caller says so.
 */
export async function requireStoreLock(ctx: Context, doing: string, hint: string): Promise<Lockfile> {
  const file = ctx.paths.lockFile;
  const lock = await loadLockAsRecorded(ctx);
  if (lock.entries.length > 0) return lock;
  const exists = await lstat(file).then(
    () => true,
    (e: unknown) => (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR' ? false : Promise.reject(stateIoError('read', file, e))),
  );
  if (!exists) {
    // A store holding packages the host loads is not one where "nothing was installed": name them.
    const unlocked = unlockedPackages(ctx.paths, new Set());
    if (unlocked.length > 0) {
      const one = unlocked.length === 1;
      throw new YepError(
        'E_NOT_FOUND',
        `There is no lockfile at ${file}: ${doing}, and this store has none, though it holds ${unlocked.join(', ')} (yolop finds ${one ? 'it' : 'them'}; no lock pins ${one ? 'it' : 'them'}: placed by hand?).`,
        {
          hint: `Install ${one ? 'it' : 'them'} from ${one ? 'its' : 'their'} source to pin ${one ? 'it' : 'them'} (\`yep-ext verify\` names ${one ? 'it' : 'them'}), then run this again.`,
        },
      );
    }
    throw new YepError('E_NOT_FOUND', `There is no lockfile at ${file}: ${doing}, and this store has none.`, { hint });
  }
  return lock;
}

/**
 * A warning for what a lock taken from this store leaves behind: the store's packages no
 * entry pins, which yolop loads here and a home provisioned from `lock` will not have.
 */
export async function warnUnlockedBeyond(ctx: Context, lock: Lockfile, what: string): Promise<void> {
  const unlocked = await unlockedSince(ctx.paths, lock);
  if (unlocked.length === 0) return;
  const one = unlocked.length === 1;
  ctx.log.warn(
    `${what} does not carry ${unlocked.join(', ')}: this store holds ${one ? 'it' : 'them'} (yolop finds ${one ? 'it' : 'them'} there), but no lock entry pins ${one ? 'it' : 'them'}, so a home provisioned from it will not have ${one ? 'it' : 'them'}; install ${one ? 'it' : 'them'} from ${one ? 'its' : 'their'} source to pin ${one ? 'it' : 'them'}.`,
  );
}

export async function installFrozen(ctx: Context, options: FrozenOptions = {}): Promise<FrozenItem[]> {
  // A run that installs nothing (it failed) leaves a never-used home as it found it: no store made for its lock and stages.
  const done = noteCreated(ctx);
  let placed = false;
  try {
    // Provisioning never asks: a build from source needs the explicit opt-in (--allow-build), even at a terminal.
    const { confirm: _nobodyAsked, ...packageCode } = ctx.packageCode;
    const items = await frozen({ ...ctx, packageCode }, options);
    placed = true;
    return items;
  } finally {
    await done(placed);
  }
}

async function frozen(ctx: Context, options: FrozenOptions): Promise<FrozenItem[]> {
  const given = options.lockfile ? await loadGivenLockfile(options.lockfile, options.cwd) : undefined;
  // No store lock at all is refused before the installer lock, whose file would create the store just to say so.
  if (!given && !existsSync(ctx.paths.lockFile)) await requireStoreLock(ctx, '`install --frozen` installs what a lock pins', WITH_LOCKFILE_HINT);
  // The store's lock, read once (after recovery); it is the target unless --lockfile names one.
  const current = await withInstallLock(ctx, async () => {
    await sweepStaging(ctx);
    // With --lockfile the store's lock may be absent (an empty home being provisioned).
    return given ? loadStoreLock(ctx.paths) : requireStoreLock(ctx, '`install --frozen` installs what a lock pins', WITH_LOCKFILE_HINT);
  });
  const target = given ?? current;
  if (target.entries.length === 0) ctx.log.warn(`${options.lockfile ?? ctx.paths.lockFile} pins no extensions: nothing to install.`);
  // The policy file applies to a lockfile too: what the lock says is refused before any fetch.
  const { policy } = withPolicy(ctx);
  const early = target.entries.flatMap((e) => applyPolicy(ctx, policy, { name: e.name, source: e.source, content_hash: e.content_hash }, 'installed'));
  if (early.length > 0) throw policyError(early, policy);
  const { items, todo, rehashed, late, manifests } = await sortByInstalled(ctx, policy, current, target);
  // The fetch and commit code, only when something must be fetched (frozen-fetch.ts).
  // What is fetched is ruled on every place its bytes come from (a git mirror, the run's index), before any request.
  admitAll(
    ctx,
    policy,
    todo.map((e) => ({ name: e.name, source: e.source })),
  );
  const fetcher = todo.length > 0 ? await import('./frozen-fetch.js') : undefined;
  for (const item of items) options.onItem?.(item);

  const prepared: PreparedPackage[] = [];
  try {
    const failures = await fetchAll(ctx, options, todo, fetcher, prepared);
    // After Ctrl-C the fetches that ended are not the run's verdict: nothing is placed.
    stopIfInterrupted(ctx.signal);
    // The grant and server command are known once verified: checked before anything is placed.
    if (policy.files.length > 0) for (const p of prepared) late.push(...applyPolicy(ctx, policy, await preparedSubject(ctx, p), 'fetch'));
    if (failures.length === 0 && late.length > 0) throw policyError(late, policy);
    if (failures.length > 0) throw unreproduced(todo, failures);
    await commitAll(ctx, options, { target, todo, prepared, fetcher, items, manifests, rehashed });
    await reportEngines(ctx, items, manifests);
    if (options.lockfile) warnOthersKept(ctx, options.lockfile, target, current);
    await warnUnpinned(ctx, current);
    await warnEnabledButAbsent(ctx, target);
    return items.sort((a, b) => (a.name < b.name ? -1 : 1));
  } finally {
    for (const p of prepared) await removeDir(p.stage);
  }
}

/** What a frozen run starts from: the entries installed as locked (skipped), and those to fetch. */
async function sortByInstalled(ctx: Context, policy: Policy, current: Lockfile, target: Lockfile) {
  const items: FrozenItem[] = [];
  const todo: LockEntry[] = [];
  const rehashed: Array<[LockEntry, EntryCheck]> = [];
  const late: PolicyViolation[] = [];
  const manifests = new Map<string, Manifest>();
  const programs: ProgramChecks = new Map();
  for (const entry of target.entries) {
    const check = await installedAsLocked(ctx, current, entry, programs);
    if (check) {
      if (check.clean) rehashed.push([entry, check]);
      if (check.manifest) manifests.set(entry.name, check.manifest);
      late.push(...(await installedViolations(ctx, policy, entry, check.manifest)));
      items.push({ name: entry.name, status: 'skipped', reason: 'already installed with the locked hash' });
      // Intact, so left alone (placing it again lands on the same mount); said, since yolop cannot start it.
      for (const p of check.result.problems) if (p.kind === 'exec-refused') ctx.log.warn(`${entry.name}: ${p.message}.`);
    } else todo.push(entry);
  }
  return { items, todo, rehashed, late, manifests };
}

type Fetcher = typeof import('./frozen-fetch.js');

/**
 * Fetch and verify every entry of `todo` into its own staging directory (added to `prepared`);
 * the entries that failed, each with its own code (a network or a missing directory is not a
 * hash that failed to match).
 */
async function fetchAll(
  ctx: Context,
  options: FrozenOptions,
  todo: LockEntry[],
  fetcher: Fetcher | undefined,
  prepared: PreparedPackage[],
): Promise<Array<{ item: FrozenItem; code: ErrorCode }>> {
  const failures: Array<{ item: FrozenItem; code: ErrorCode }> = [];
  await pMap(
    todo,
    async (entry) => {
      const stage = await makeStagingDir(ctx, `frozen-${entry.name}`);
      try {
        prepared.push(await fetcher!.prepareExactly(ctx, entry, stage));
        options.onItem?.({ name: entry.name, status: 'installed' });
      } catch (e) {
        await removeDir(stage);
        if (!isYepError(e)) throw e;
        const item: FrozenItem = { name: entry.name, status: 'failed', reason: e.message };
        failures.push({ item, code: e.code });
        options.onItem?.(item);
      }
    },
    { concurrency: options.concurrency ?? 4 },
  );
  return failures;
}

/** The error of a run some entries of which could not be fetched as locked: nothing is installed. */
function unreproduced(todo: LockEntry[], failures: Array<{ item: FrozenItem; code: ErrorCode }>): YepError {
  // Listed in the lock's order, whatever order the concurrent fetches ended in, so that the
  // message and the exit are the same from run to run.
  const order = new Map(todo.map((e, i) => [e.name, i]));
  const byLock = [...failures].sort((a, b) => order.get(a.item.name)! - order.get(b.item.name)!);
  // The exit says what went wrong: integrity when any bytes differ from the lock, else the
  // first failed entry's own code (a network error is worth a retry; exit 5 says "do not
  // retry blindly").
  const differ = byLock.filter((f) => f.code === 'E_INTEGRITY').map((f) => f.item.name);
  const code: ErrorCode = differ.length > 0 ? 'E_INTEGRITY' : byLock[0]!.code;
  const others = byLock.length - differ.length;
  const fixOthers =
    'Fix what the other listed extensions failed on (the network, a directory or repository that is not there on this machine) and run it again.';
  return new YepError(
    code,
    `The lockfile could not be reproduced; nothing was installed:\n${byLock.map((f) => `  - ${f.item.name}: ${f.item.reason}`).join('\n')}`,
    {
      hint:
        differ.length === 0
          ? fixOthers.replace('the other listed extensions', 'each listed extension')
          : `${differ.join(', ')} ${differ.length === 1 ? 'differs' : 'differ'} from what the lock pins. If the change is expected, run \`yep-ext update <name>\` where the lock is maintained and commit the new lock.${others > 0 ? ` ${fixOthers}` : ''}`,
      details: { failed: byLock.map(({ item: f }) => ({ name: f.name, status: f.status, reason: f.reason ?? null, engines: null })) },
    },
  );
}

/** Place every prepared package and write the lock, under the installer lock. */
async function commitAll(
  ctx: Context,
  options: FrozenOptions,
  run: {
    target: Lockfile;
    todo: LockEntry[];
    prepared: PreparedPackage[];
    fetcher: Fetcher | undefined;
    items: FrozenItem[];
    manifests: Map<string, Manifest>;
    rehashed: Array<[LockEntry, EntryCheck]>;
  },
): Promise<void> {
  const { target, todo, prepared, fetcher, items, manifests, rehashed } = run;
  // The store's lock ends up carrying exactly the target's entries for its names, and
  // its top-level keys. Each placed package commits its exact locked entry; what moves
  // no files (the entries already in place, the top-level keys) rides on the first
  // commit's single lock write, or is one write of its own when nothing is placed.
  const installedNames = new Set(todo.map((e) => e.name));
  const changes: LockChanges = options.lockfile ? { pin: target.entries.filter((e) => !installedNames.has(e.name)), extra: target.extra } : {};
  await withInstallLock(ctx, async () => {
    // Read by the first commit, then carried: each commit starts from the lock the previous one wrote.
    let lock: Lockfile | undefined;
    for (const [i, p] of prepared.entries()) {
      const locked = target.entries.find((e) => e.name === p.name) as LockEntry;
      lock = await fetcher!.commitPackage(ctx, p, locked, i === 0 ? changes : {}, lock);
      manifests.set(p.name, p.manifest);
      items.push({ name: p.name, status: 'installed' });
    }
    if (prepared.length === 0 && options.lockfile) await pinEntries(ctx, changes);
    // Trees re-hashed clean (no signature yet, or a touched file): record it, so the next run is stat-only.
    for (const [entry, check] of rehashed) await recordCleanState(ctx, entry, check);
  });
}

/**
 * --lockfile installs what it pins and leaves the store's other extensions (and their
 * lock entries, so `verify` passes) in place: say so, or "as locked" claims a store
 * the given lock does not describe (an extension the project dropped still loads).
 */
function warnOthersKept(ctx: Context, lockfile: string, target: Lockfile, current: Lockfile): void {
  const pinned = new Set(target.entries.map((e) => e.name));
  const others = current.entries.map((e) => e.name).filter((n) => !pinned.has(n));
  if (others.length > 0) {
    ctx.log.warn(
      `The store also holds ${others.join(', ')}, which ${lockfile} does not pin: left installed (and enabled if ${others.length === 1 ? 'it was' : 'they were'}). Run \`yep-ext remove <name>\` for each the project dropped.`,
    );
  }
}

/**
 * "As locked" is said of the lock's entries, but yolop loads every `<store>/<name>/plugin.json`:
 * a package no lock entry pins at all (placed by hand, or by the host) is in the home all the
 * same, and enabled it runs, though no lock describes it. Said, as `update`, `outdated`,
 * `lock export` and `mirror` say it.
 */
async function warnUnpinned(ctx: Context, lockAtStart: Lockfile): Promise<void> {
  // The lock is read again only when the store holds a package it did not pin (unlockedSince).
  const unlocked = await unlockedSince(ctx.paths, lockAtStart);
  if (unlocked.length === 0) return;
  const one = unlocked.length === 1;
  const settings = await loadSettingsText(ctx.paths).then(
    (text) => settingsLookup(text),
    () => undefined,
  );
  const enabled = settings ? unlocked.filter((n) => settings(n).enabled) : [];
  ctx.log.warn(
    `The store also holds ${unlocked.join(', ')}, which no lock entry pins: yolop finds ${one ? 'it' : 'them'} there${enabled.length > 0 ? ` (settings.toml enables ${enabled.join(', ')}, so yolop runs ${enabled.length === 1 ? 'it' : 'them'})` : ''}, though the lock does not describe ${one ? 'it' : 'them'}. Remove ${one ? 'it' : 'them'} (\`yep-ext remove ${unlocked.join(' ')}\`) or install ${one ? 'it' : 'them'} from ${one ? 'its' : 'their'} source to pin ${one ? 'it' : 'them'}; \`yep-ext verify\` names ${one ? 'it' : 'them'}.`,
  );
}

/**
 * "As locked" is true of the store, but yolop also loads what settings.toml enables: a name
 * enabled there that nothing installs (a team's settings naming an extension its lock does
 * not pin) fails in the agent, not here, unless this says so.
 */
async function warnEnabledButAbsent(ctx: Context, lock: Lockfile): Promise<void> {
  const absent = await enabledButAbsentNow(ctx.paths, lock);
  if (absent.length === 0) return;
  const them = absent.length === 1 ? 'it' : 'them';
  ctx.log.warn(
    `${ctx.paths.settingsFile} enables ${absent.join(', ')}, which nothing installs: yolop cannot load ${them}. Install ${them}, or run \`yep-ext remove ${absent.join(' ')}\` to drop ${absent.length === 1 ? 'its settings' : 'their settings'}.`,
  );
}

/**
 * An export is a file to commit: a credential in a source URL (a lock the host wrote from a URL
 * yep-ext itself refuses, `https://TOKEN@host/…`) must not be copied into it, nor printed.
 */
function refuseCredentials(lock: Lockfile): void {
  // Every string of the record is copied into the export (unknown keys too): each is checked, as the output redacts it.
  const holding = lock.entries.filter((e) => Object.values(e.source).some((v) => typeof v === 'string' && hasUrlCredential(v)));
  if (holding.length === 0) return;
  const names = holding.map((e) => e.name).join(', ');
  throw new YepError('E_STATE', `extensions.lock pins ${names} from a URL with a credential in it; it is not exported (the export is a file to commit).`, {
    hint: `Install ${holding.length === 1 ? 'it' : 'them'} again from the URL without the credential (a git credential helper or the registry's token supplies it: docs/git.md), then export.`,
    details: { names: holding.map((e) => e.name) },
  });
}

/** The store's lock as `lock export` gives it (its warnings said), and the entries pinned to a directory of this machine. */
async function lockToExport(ctx: Context): Promise<{ lock: Lockfile; local: LockEntry[] }> {
  const lock = await requireStoreLock(
    ctx,
    "`lock export` writes what the store's lock pins",
    'Nothing was ever installed in this store (YOLOP_CONFIG_DIR picks it): install extensions first, or run it where they are installed.',
  );
  if (lock.entries.length === 0) ctx.log.warn(`${ctx.paths.lockFile} pins no extensions: the exported lock installs nothing.`);
  refuseCredentials(lock);
  await warnUnlockedBeyond(ctx, lock, 'The exported lock');
  // A linked entry is pinned as an absolute directory of this machine (the host's lock format):
  // exported for another machine, it installs there only where that directory exists.
  const local = lock.entries.filter((e) => sourceFor(e.source.type).linked);
  if (local.length > 0) {
    ctx.log.warn(
      `The exported lock pins ${local.map((e) => `${e.name} (${describeSource(e.source)})`).join(', ')} as a directory of this machine: \`install --frozen --lockfile\` installs ${local.length === 1 ? 'it' : 'them'} elsewhere only where the same directory exists. Publish ${local.length === 1 ? 'it' : 'them'} (a crate or a git repository) and install from there to share ${local.length === 1 ? 'it' : 'them'}.`,
    );
  }
  return { lock, local };
}

/**
 * Write the store's lock to `dest` (for committing to a project repository). An earlier
 * export (yep-ext's header) is replaced; any other file is not: a lock yep-ext did not
 * write (yolop's, one written by hand) only with `force`, anything that is no lock never.
 */
export async function exportLock(ctx: Context, dest: string, options: { force?: boolean } = {}): Promise<{ path: string; entries: number; local: string[] }> {
  checkOutputFile(dest, 'yolop-extensions.lock', (file) => `yep-ext lock export ${file}`);
  const { lock, local } = await lockToExport(ctx);
  await refuseNonLockTarget(dest, options.force === true);
  await saveLock(dest, lock);
  return { path: dest, entries: lock.entries.length, local: local.map((e) => e.name) };
}

/** `lock export -`: the text `exportLock` would write, for stdout. */
export async function exportLockText(ctx: Context): Promise<{ text: string; entries: number; local: string[] }> {
  const { lock, local } = await lockToExport(ctx);
  return { text: serializeLock(lock), entries: lock.entries.length, local: local.map((e) => e.name) };
}

/**
 * `lock export` replaces an earlier export (or any lock: the host's, an empty file), never
 * another file named by mistake: `lock export Cargo.toml` replaced the project's manifest
 * and said "Wrote 1 entry". A file is a lock when it reads as one with an `extensions` table,
 * or is empty, or is comments under yep-ext's own header (the export of an empty lock).
 */
async function refuseNonLockTarget(dest: string, force: boolean): Promise<void> {
  const st = await stat(dest).catch((e: unknown) => (errnoCode(e) === 'ENOENT' ? undefined : Promise.reject(stateIoError('read', dest, e))));
  if (st === undefined || !st.isFile()) return; // absent: written; anything else the atomic writer refuses, naming it
  const text = readRegularFileSync(dest, 'The export target')?.toString('utf8') ?? '';
  if (text.trim() === '' || text.startsWith(LOCK_HEADER.split('\n')[0]!)) return;
  let isLock = false;
  try {
    isLock = holdsLock(text, parseLock(text, dest));
  } catch {
    isLock = false; // not TOML, or TOML that is no lock
  }
  if (!isLock) {
    throw new YepError('E_CONFLICT', `${dest} exists and is not a lockfile; nothing was written.`, {
      hint: 'Give `lock export` the path of a new file or of an earlier export (e.g. ./yolop-extensions.lock), or move that file aside.',
      details: { file: dest },
    });
  }
  if (!force) {
    throw new YepError('E_CONFLICT', `${dest} is a lock yep-ext did not write (yolop's, or one written by hand); nothing was written.`, {
      hint: 'Pass --force to replace it with the export, or give `lock export` another path (`lock export -` prints it).',
      details: { file: dest },
    });
  }
}
