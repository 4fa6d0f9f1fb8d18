/**
 * The crates.io source: spec -> version choice in the sparse index -> verified
 * `.crate` download -> safe unpack into staging -> plugin.json (written from
 * Cargo.toml metadata when the crate declares its manifest there). Returns the
 * lock record of exactly what was fetched; the install pipeline does the rest.
 */
import { rm } from 'node:fs/promises';
import type { Context } from '../context.js';
import { DEFAULT_INDEX_URL, normalizeIndexUrl } from '../context.js';
import { YepError } from '../errors.js';
import { CRATE_PREFIX } from '../package/names.js';
import type { CrateSpec } from './spec.js';
import { unpackCrate } from '../archive/unpack.js';
import { writeManifestFromCargo } from './crates-io/cargo-manifest.js';
import { compareVersionsDesc, parseCargoVersion } from './crates-io/cargo-version.js';
import { chooseCandidates, chooseVersion } from './crates-io/choose-version.js';
import { chooseUnderCooldown, isExactRequirement } from './crates-io/cooldown.js';
import { effectiveCooldown } from '../policy/cooldown.js';
import { downloadVerifiedCrate } from './crates-io/download.js';
import { fetchIndexFile } from './crates-io/index-client.js';
import { CKSUM_RE, type IndexEntry } from './crates-io/index-lines.js';
import { assertCrateName } from './crates-io/index-path.js';
import { checkIndexUrl, loadRegistryConfig, type RegistryConfig } from './crates-io/registry-config.js';
import type { Fetched, UpdateNotes, Upstream } from './source.js';

/** The lock record of a crate install (host-compat §4). */
export interface CrateRecord {
  type: 'crate';
  crate_name: string;
  /** The resolved crate version (raw `vers`). */
  version: string;
  /** Registry SHA-256 of the .crate (lowercase hex). */
  cksum?: string;
  /** The requirement the user gave (`^0.3`, `=1.2.3`); absent = latest. */
  requirement?: string;
  /** Sparse index root the crate came from, when it is not the default. */
  index?: string;
  /** SHA-256 of a prebuilt server binary, when one was provisioned. */
  binary_sha256?: string;
  [extra: string]: unknown;
}
import { truncateRedacted } from '../text/redact.js';
import { withStep } from '../log.js';

export interface ResolvedCrate {
  /** The name as published in the index. */
  name: string;
  /** Raw version, build metadata included. */
  vers: string;
  cksum: string;
  yanked: boolean;
}

/** What a frozen install knows from the lock. */
export interface LockedCrate {
  crate_name: string;
  version: string;
  cksum?: string;
  /** Sparse index root, when the lock names one (absent = the context's index). */
  index?: string;
  /** The requirement recorded at install time, carried over unchanged. */
  requirement?: string;
}

function registryLabel(indexUrl: string): string {
  return indexUrl === DEFAULT_INDEX_URL ? 'crates.io' : indexUrl;
}

/** The other spellings cargo would suggest: all `-`, all `_` (and the same after our prefix). */
function otherSpellings(crate: string): string[] {
  const out = new Set([crate.replaceAll('_', '-'), crate.replaceAll('-', '_')]);
  if (crate.startsWith(CRATE_PREFIX)) {
    const rest = crate.slice(CRATE_PREFIX.length);
    out.add(CRATE_PREFIX + rest.replaceAll('_', '-'));
    out.add(CRATE_PREFIX + rest.replaceAll('-', '_'));
  }
  out.delete(crate);
  return [...out];
}

async function notFound(ctx: Context, indexUrl: string, crate: string): Promise<YepError> {
  let suggestion: string | undefined;
  for (const alt of otherSpellings(crate)) {
    const found = await fetchIndexFile(ctx, indexUrl, alt).catch(() => undefined);
    if (found && found.entries.length > 0) {
      suggestion = found.entries[0]!.name;
      break;
    }
  }
  const short = crate.startsWith(CRATE_PREFIX) ? crate.slice(CRATE_PREFIX.length) : undefined;
  const hint = suggestion
    ? `Did you mean ${suggestion}? Install it with \`yep-ext install ${suggestion.startsWith(CRATE_PREFIX) ? suggestion.slice(CRATE_PREFIX.length) : `crates.io:${suggestion}`}\`.`
    : short
      ? `Extensions on crates.io are named ${CRATE_PREFIX}<name>. Look for one with \`yep-ext search ${short}\`; for a local directory use ./${short}.`
      : 'Check the spelling, or look for extensions with `yep-ext search`.';
  return new YepError('E_NOT_FOUND', `No crate named ${crate} in ${registryLabel(indexUrl)}.`, {
    hint,
    details: { crate, ...(suggestion ? { suggestion } : {}) },
  });
}

/** The index entries for `crate`, or a "no such crate" error (with a did-you-mean). */
async function indexEntries(ctx: Context, indexUrl: string, crate: string): Promise<IndexEntry[]> {
  assertCrateName(crate);
  checkIndexUrl(indexUrl);
  const parsed = await fetchIndexFile(ctx, indexUrl, crate);
  if (!parsed) throw await notFound(ctx, indexUrl, crate);
  if (parsed.skipped > 0) ctx.log.debug(`${crate}: ignored ${parsed.skipped} index line(s) yep-ext cannot read`);
  return parsed.entries;
}

/**
 * Index entries -> the version to take, under the run's release-age cooldown
 * (`update` of an exact pin skips it: that version was chosen at install time).
 */
async function resolveIn(ctx: Context, indexUrl: string, crate: string, requirement?: string, options: { update?: boolean; notes?: UpdateNotes } = {}): Promise<{ entry: IndexEntry; skipped: string[] }> {
  const cooldown = options.update && isExactRequirement(requirement) ? undefined : effectiveCooldown(ctx.cooldown, ctx.env);
  const entries = await indexEntries(ctx, indexUrl, crate);
  const choice = chooseUnderCooldown(entries[0]?.name ?? crate, entries, requirement, cooldown, Date.now());
  for (const w of choice.warnings) ctx.log.warn(w);
  if (options.notes && requirement !== undefined) {
    // The same index lines say whether something newer exists outside the requirement.
    const newest = newestStable(entries);
    if (newest && compareVersionsDesc(newest.version, choice.entry.version) < 0) options.notes.newerOutside = { version: newest.vers, requirement };
  }
  // An install reports the skip as a note of its outcome (also in --json); update has no notes: log it.
  if (choice.skipNote && options.update) ctx.log.warn(choice.skipNote);
  return { entry: choice.entry, skipped: choice.skipNote ? [choice.skipNote] : [] };
}

/** The highest non-yanked stable version with an installable cksum. */
function newestStable(entries: IndexEntry[]): IndexEntry | undefined {
  return [...entries].filter((e) => !e.yanked && !e.version.prerelease && CKSUM_RE.test(e.cksum)).sort((a, b) => compareVersionsDesc(a.version, b.version))[0];
}

/**
 * The version `requirement` (cargo dialect; undefined = latest stable) selects
 * for `crate` in the context's index. Used by install and by `update`.
 */
export async function resolveCrateVersion(ctx: Context, crate: string, requirement?: string, options: { index?: string; update?: boolean; notes?: UpdateNotes } = {}): Promise<ResolvedCrate> {
  const { entry: e } = await resolveIn(ctx, options.index ? normalizeIndexUrl(options.index) : ctx.indexUrl, crate, requirement, { update: options.update === true, ...(options.notes ? { notes: options.notes } : {}) });
  return { name: e.name, vers: e.vers, cksum: e.cksum, yanked: e.yanked };
}

/**
 * `update` for a crate install: the version its recorded requirement selects
 * now, or undefined when that is what is installed (same version and cksum) or
 * older than it (a yanked newer release never triggers a silent downgrade).
 */
/**
 * The index to use for a recorded source: one chosen for this run (--index /
 * YEP_EXT_INDEX, e.g. a fleet's mirror) wins over the one recorded at install time;
 * the locked cksum pins the bytes wherever they come from.
 */
export function indexFor(ctx: Context, recorded: string | undefined): string {
  return ctx.indexUrl !== DEFAULT_INDEX_URL || !recorded ? ctx.indexUrl : normalizeIndexUrl(recorded);
}

export async function findCrateUpdate(ctx: Context, source: CrateRecord, notes?: UpdateNotes): Promise<ResolvedCrate | undefined> {
  const next = await resolveCrateVersion(ctx, source.crate_name, source.requirement, { index: indexFor(ctx, source.index), update: true, ...(notes ? { notes } : {}) });
  // Same version: up to date. A lock the host wrote has no cksum (nothing to compare, no
  // re-download); a different cksum is returned so the caller refuses the republish.
  if (next.vers === source.version && (source.cksum === undefined || next.cksum === source.cksum)) return undefined;
  const now = parseCargoVersion(source.version);
  const then = parseCargoVersion(next.vers);
  if (now && then && compareVersionsDesc(then, now) > 0) {
    ctx.log.debug(`${source.crate_name}: ${next.vers} is older than the installed ${source.version}; keeping it`);
    return undefined;
  }
  return next;
}

/**
 * Download, verify, unpack into `into` (which must not exist yet) and provide
 * plugin.json. `configFetch`: config.json already being fetched (concurrently
 * with the index file, which saves a round trip); a failure of it surfaces here,
 * after the index file's own errors, as when the two were sequential.
 */
async function fetchVerified(ctx: Context, indexUrl: string, crate: { name: string; vers: string; cksum: string }, into: string, configFetch?: Promise<RegistryConfig>): Promise<void> {
  const config = await (configFetch ?? loadRegistryConfig(ctx, indexUrl));
  const verified = await downloadVerifiedCrate(ctx, config, crate, into);
  try {
    await withStep(ctx.log, `Unpacking ${crate.name} ${crate.vers}`, () =>
      unpackCrate(verified.file, into, { crateName: crate.name, version: crate.vers, compressedSize: verified.size, signal: ctx.signal, checkpoint: ctx.checkpoint }),
    );
  } finally {
    await rm(verified.file, { force: true });
  }
  if (await writeManifestFromCargo(into, crate.name)) {
    ctx.log.info(`${crate.name} declares its manifest in Cargo.toml [package.metadata.yolop]; wrote the equivalent plugin.json.`);
  }
}

function crateRecord(indexUrl: string, e: { name: string; vers: string; cksum: string }, requirement?: string): CrateRecord {
  return {
    type: 'crate',
    crate_name: e.name,
    version: e.vers,
    cksum: e.cksum,
    ...(requirement !== undefined ? { requirement } : {}),
    ...(indexUrl !== DEFAULT_INDEX_URL ? { index: indexUrl } : {}),
  };
}

/** Install candidates' cooldown note, by record object (fetchCrateExact adds it to the outcome's notes). */
const candidateNotes = new WeakMap<object, string>();

/**
 * The engines walk's candidates, best first, under the run's release-age cooldown
 * as resolveIn applies it: the walk starts at the version the cooldown lets through
 * (its note is logged) and goes to older ones. (An older version published within
 * the cooldown is not skipped here: the walk only reaches it when every newer one
 * needs a newer yolop.)
 */
function cooledCandidates(ctx: Context, crate: string, entries: IndexEntry[], requirement: string | undefined, update: boolean, note?: { text: string | undefined }): IndexEntry[] {
  const name = entries[0]?.name ?? crate;
  const all = chooseCandidates(name, entries, requirement);
  for (const w of all.warnings) ctx.log.warn(w);
  const cooldown = update && isExactRequirement(requirement) ? undefined : effectiveCooldown(ctx.cooldown, ctx.env);
  if (!cooldown) return all.entries;
  const cooled = chooseUnderCooldown(name, entries, requirement, cooldown, Date.now());
  // Its own warnings (an --allow-fresh install of a young version) beside those already logged.
  for (const w of cooled.warnings) if (!all.warnings.includes(w)) ctx.log.warn(w);
  if (cooled.skipNote && note) note.text = cooled.skipNote;
  else if (cooled.skipNote) ctx.log.warn(cooled.skipNote);
  return all.entries.filter((e) => compareVersionsDesc(e.version, cooled.entry.version) >= 0);
}

/**
 * Install candidates for `spec`, best first, as records `fetchCrateExact` fetches
 * (cksum included, so no second index read): the first is what `fetchCrate` would
 * install. The engines walk tries the next ones when a newer one needs a newer agent.
 */
export async function crateCandidates(ctx: Context, spec: CrateSpec): Promise<CrateRecord[]> {
  const indexUrl = ctx.indexUrl;
  const entries = await indexEntries(ctx, indexUrl, spec.crate);
  const note = { text: undefined as string | undefined };
  const records = cooledCandidates(ctx, spec.crate, entries, spec.requirement, false, note).map((e) => crateRecord(indexUrl, e, spec.requirement));
  // An install reports the cooldown's skip as a note of its outcome (as fetchCrate does), whichever candidate the walk keeps.
  if (note.text) for (const r of records) candidateNotes.set(r, note.text);
  return records;
}

/**
 * Update candidates for an installed crate, best first: the first is what
 * `findCrateUpdate` returns, the rest are the other versions the recorded
 * requirement selects that are still newer than the installed one. Empty = up to date.
 */
export async function crateUpdateCandidates(ctx: Context, source: CrateRecord, notes?: UpdateNotes): Promise<CrateRecord[]> {
  const indexUrl = indexFor(ctx, source.index);
  const entries = await indexEntries(ctx, indexUrl, source.crate_name);
  const [first, ...rest] = cooledCandidates(ctx, source.crate_name, entries, source.requirement, true);
  if (notes && first && source.requirement !== undefined) {
    // The same index lines say whether something newer exists outside the requirement.
    const top = newestStable(entries);
    if (top && compareVersionsDesc(top.version, first.version) < 0) notes.newerOutside = { version: top.vers, requirement: source.requirement };
  }
  if (!first) return [];
  // The same rules as findCrateUpdate for the best one.
  if (first.vers === source.version && (source.cksum === undefined || first.cksum === source.cksum)) return [];
  const now = parseCargoVersion(source.version);
  if (now && compareVersionsDesc(first.version, now) > 0) {
    ctx.log.debug(`${source.crate_name}: ${first.vers} is older than the installed ${source.version}; keeping it`);
    return [];
  }
  const newer = now ? rest.filter((e) => compareVersionsDesc(e.version, now) < 0) : [];
  return [first, ...newer].map((e) => ({ ...source, version: e.vers, cksum: e.cksum, crate_name: e.name }));
}

/** Newest first: a release before pre-releases, yanked ones last. */
function newest(entries: IndexEntry[]): IndexEntry | undefined {
  const live = entries.filter((e) => !e.yanked).sort((a, b) => compareVersionsDesc(a.version, b.version));
  return live.find((e) => !e.version.prerelease) ?? live[0];
}

/** The versions an index lists, newest first (what `info` shows). */
function versionList(entries: IndexEntry[]): Upstream['versions'] {
  return [...entries].sort((a, b) => compareVersionsDesc(a.version, b.version)).map((e) => ({ version: e.vers, yanked: e.yanked }));
}

/**
 * `outdated` and `info` for an installed crate, from one index read: `wanted` is
 * what `update` would move to (never older than the installed version, as update
 * never downgrades), `latest` the newest non-yanked release whatever the requirement.
 */
export async function crateUpstream(ctx: Context, source: CrateRecord): Promise<Upstream> {
  const entries = await indexEntries(ctx, indexFor(ctx, source.index), source.crate_name);
  const now = parseCargoVersion(source.version);
  let chosen: IndexEntry | undefined;
  try {
    chosen = chooseCandidates(entries[0]?.name ?? source.crate_name, entries, source.requirement).entries[0];
  } catch {
    chosen = undefined; // nothing the requirement selects is installable now (all yanked, say)
  }
  const newerThanNow = (e: IndexEntry | undefined): boolean => e !== undefined && now !== undefined && compareVersionsDesc(e.version, now) < 0;
  const wanted = chosen && (now === undefined || newerThanNow(chosen)) ? chosen.vers : source.version;
  const top = newest(entries);
  const latest = top ? (newerThanNow(top) || now === undefined ? top.vers : source.version) : null;
  const wantedVersion = parseCargoVersion(wanted);
  return {
    wanted,
    latest,
    update: wanted !== source.version,
    beyond: top !== undefined && wantedVersion !== undefined && compareVersionsDesc(top.version, wantedVersion) < 0,
    versions: versionList(entries),
    newer: newerCandidates(source, entries, now),
  };
}

/**
 * Every installable version newer than the installed one, newest first, as records
 * `fetchCrateExact` fetches (`outdated`'s engines check downloads them): non-yanked,
 * with a valid cksum, a pre-release only when the recorded requirement selects it.
 * `within`: the requirement selects it (`update` reaches it), else only an install does.
 */
function newerCandidates(source: CrateRecord, entries: IndexEntry[], now: ReturnType<typeof parseCargoVersion>): NonNullable<Upstream['newer']> {
  if (!now) return [];
  let selected = new Set<IndexEntry>();
  try {
    selected = new Set(chooseCandidates(entries[0]?.name ?? source.crate_name, entries, source.requirement).entries);
  } catch {
    // nothing the requirement selects is installable: every newer version is outside it
  }
  return entries
    .filter((e) => !e.yanked && CKSUM_RE.test(e.cksum) && compareVersionsDesc(e.version, now) < 0 && (!e.version.prerelease || selected.has(e)))
    .sort((a, b) => compareVersionsDesc(a.version, b.version))
    .map((e) => ({
      source: { ...crateRecord(DEFAULT_INDEX_URL, e, source.requirement), ...(source.index !== undefined ? { index: source.index } : {}) },
      within: selected.has(e),
    }));
}

/** `info` for a crate that is not installed: what the index lists, without installing. */
export async function crateRegistryInfo(ctx: Context, crate: string): Promise<{ crate: string; index: string; latest: string | null; versions: Upstream['versions'] }> {
  const entries = await indexEntries(ctx, ctx.indexUrl, crate);
  return { crate: entries[0]?.name ?? crate, index: registryLabel(ctx.indexUrl), latest: newest(entries)?.vers ?? null, versions: versionList(entries) };
}

/** The fetcher for `crate` specs (install): resolve, download, verify, unpack into `into`. */
export async function fetchCrate(ctx: Context, spec: CrateSpec, into: string): Promise<Fetched<CrateRecord>> {
  const indexUrl = ctx.indexUrl;
  // config.json in parallel with the index file (memoised per context; a rejection
  // is handled there, so a crate that does not exist leaves no unhandled promise,
  // and an index file's error still comes first: it is awaited first).
  const configFetch = loadRegistryConfig(ctx, indexUrl);
  const { entry, skipped } = await resolveIn(ctx, indexUrl, spec.crate, spec.requirement);
  await fetchVerified(ctx, indexUrl, entry, into, configFetch);
  return { dir: into, source: crateRecord(indexUrl, entry, spec.requirement), ...(skipped.length > 0 ? { notes: skipped } : {}) };
}

/**
 * Frozen installs: exactly the locked version, verified against the locked
 * cksum. The index is consulted only when the lock has no cksum (and then the
 * version must exist there with a valid one).
 */
export async function fetchCrateExact(ctx: Context, locked: LockedCrate, into: string): Promise<Fetched<CrateRecord>> {
  const indexUrl = indexFor(ctx, locked.index);
  assertCrateName(locked.crate_name);
  let cksum = locked.cksum;
  let name = locked.crate_name;
  let configFetch: Promise<RegistryConfig> | undefined;
  if (cksum === undefined) {
    configFetch = loadRegistryConfig(ctx, indexUrl);
    const entries = await indexEntries(ctx, indexUrl, locked.crate_name);
    const entry = entries.find((e) => e.vers === locked.version);
    if (!entry) {
      throw new YepError('E_NOT_FOUND', `${locked.crate_name} ${locked.version} (pinned in the lock) is not in ${registryLabel(indexUrl)}.`, {
        details: { crate: locked.crate_name, version: locked.version },
      });
    }
    if (entry.yanked) ctx.log.warn(`${entry.name} ${entry.vers} is yanked; installing it because the lock pins it`);
    cksum = entry.cksum;
    name = entry.name;
  }
  if (!CKSUM_RE.test(cksum)) {
    throw new YepError('E_INTEGRITY', `${locked.crate_name} ${locked.version}: the checksum ${JSON.stringify(truncateRedacted(cksum, 80, [], { marker: () => '…' }))} is not 64 lowercase hex digits; refusing to install it unverified.`);
  }
  const crate = { name, vers: locked.version, cksum };
  await fetchVerified(ctx, indexUrl, crate, into, configFetch);
  // The record keeps the index the lock names, not the one the bytes came through: a
  // mirror given with --index is a transport, not a new origin (docs/fleet.md).
  const { index: _transport, ...pinned } = crateRecord(indexUrl, crate, locked.requirement);
  const note = candidateNotes.get(locked);
  return { dir: into, source: { ...pinned, ...(locked.index !== undefined ? { index: locked.index } : {}) }, ...(note ? { notes: [note] } : {}) };
}
