/**
 * The crates.io source: spec -> version choice in the sparse index -> verified
 * `.crate` download -> safe unpack into staging -> plugin.json (written from
 * Cargo.toml metadata when the crate declares its manifest there). Returns the
 * lock record of exactly what was fetched; the install pipeline does the rest.
 */
import { removeWork } from '../fs/custody.js';
import type { Context } from '../context.js';
import { DEFAULT_INDEX_URL, normalizeIndexUrl } from '../context.js';
import { YepError } from '../errors.js';
import { CRATE_PREFIX } from '../package/names.js';
import type { CrateSpec } from './spec.js';
import { unpackCrate } from '../archive/unpack.js';
import { writeManifestFromCargo } from './crates-io/cargo-manifest.js';
import type { ContentHashStream } from '../package/content-hash-stream.js';
import { MANIFEST_FILE } from '../package/manifest.js';
import { compareVersionsDesc, parseCargoVersion } from './crates-io/cargo-version.js';
import { chooseCandidates } from './crates-io/choose-version.js';
import { chooseUnderCooldown, isExactRequirement } from './crates-io/cooldown.js';
import { effectiveCooldown } from './crates-io/cooldown-options.js';
import { downloadVerifiedCrate } from './crates-io/download.js';
import { fetchIndexFile } from './crates-io/index-client.js';
import { CKSUM_RE, type IndexEntry } from './crates-io/index-lines.js';
import { assertCrateName } from './crates-io/index-path.js';
import { checkIndexUrl, loadRegistryConfig, type RegistryConfig } from './crates-io/registry-config.js';
import { withNotes, type Candidates, type Fetched, type UpdateNotes, type Upstream } from './source.js';

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
 * The one place the crate resolve rules live: every installable version
 * `requirement` selects, best first, under the run's release-age cooldown (`update`
 * of an exact pin skips it: that version was chosen at install time). The list
 * starts at the version the cooldown lets through and goes to older ones; an
 * older version published within the cooldown is not skipped here (the engines
 * walk only reaches it when every newer one needs a newer yolop). Install, update,
 * the engines walk and --ignore-engines (= the first candidate) all read this list.
 * Warnings are logged; the cooldown's skip note is returned for the caller to place.
 */
function chooseIn(
  ctx: Context,
  crate: string,
  entries: IndexEntry[],
  requirement: string | undefined,
  update: boolean,
): { entries: IndexEntry[]; skipNote?: string } {
  const name = entries[0]?.name ?? crate;
  const all = chooseCandidates(name, entries, requirement);
  for (const w of all.warnings) ctx.log.warn(w);
  const cooldown = update && isExactRequirement(requirement) ? undefined : effectiveCooldown(ctx.cooldown, ctx.env);
  if (!cooldown) return { entries: all.entries };
  const cooled = chooseUnderCooldown(name, entries, requirement, cooldown, ctx.clock.now());
  // Its own warnings (an --allow-fresh install of a young version) beside those already logged.
  for (const w of cooled.warnings) if (!all.warnings.includes(w)) ctx.log.warn(w);
  const kept = all.entries.filter((e) => compareVersionsDesc(e.version, cooled.entry.version) >= 0);
  return { entries: kept, ...(cooled.skipNote ? { skipNote: cooled.skipNote } : {}) };
}

/** `notes.newerOutside`: the same index lines say whether something newer exists outside the requirement. */
function noteNewerOutside(notes: UpdateNotes | undefined, entries: IndexEntry[], chosen: IndexEntry | undefined, requirement: string | undefined): void {
  if (!notes || !chosen || requirement === undefined) return;
  const top = newestStable(entries);
  if (top && compareVersionsDesc(top.version, chosen.version) < 0) notes.newerOutside = { version: top.vers, requirement };
}

/** The highest non-yanked stable version with an installable cksum. */
function newestStable(entries: IndexEntry[]): IndexEntry | undefined {
  return [...entries].filter((e) => !e.yanked && !e.version.prerelease && CKSUM_RE.test(e.cksum)).sort((a, b) => compareVersionsDesc(a.version, b.version))[0];
}

/**
 * The version `requirement` (cargo dialect; undefined = latest stable) selects
 * for `crate` in the context's index: the first of the candidates (library API).
 */
export async function resolveCrateVersion(
  ctx: Context,
  crate: string,
  requirement?: string,
  options: { index?: string; update?: boolean; notes?: UpdateNotes } = {},
): Promise<ResolvedCrate> {
  const indexUrl = options.index ? normalizeIndexUrl(options.index) : ctx.indexUrl;
  const entries = await indexEntries(ctx, indexUrl, crate);
  const choice = chooseIn(ctx, crate, entries, requirement, options.update === true);
  const e = choice.entries[0]!;
  noteNewerOutside(options.notes, entries, e, requirement);
  if (choice.skipNote && options.update) ctx.log.warn(choice.skipNote);
  return { name: e.name, vers: e.vers, cksum: e.cksum, yanked: e.yanked };
}

/**
 * The index to use for a recorded source: one chosen for this run (--index /
 * YEP_EXT_INDEX, e.g. a fleet's mirror) wins over the one recorded at install time;
 * the locked cksum pins the bytes wherever they come from.
 */
export function indexFor(ctx: Context, recorded: string | undefined): string {
  return ctx.indexUrl !== DEFAULT_INDEX_URL || !recorded ? ctx.indexUrl : normalizeIndexUrl(recorded);
}

/**
 * Download, verify, unpack into `into` (which must not exist yet) and provide
 * plugin.json. `configFetch`: config.json already being fetched (concurrently
 * with the index file, which saves a round trip); a failure of it surfaces here,
 * after the index file's own errors, as when the two were sequential.
 */
async function fetchVerified(
  ctx: Context,
  indexUrl: string,
  crate: { name: string; vers: string; cksum: string },
  into: string,
  configFetch?: Promise<RegistryConfig>,
): Promise<string> {
  const config = await (configFetch ?? loadRegistryConfig(ctx, indexUrl));
  const verified = await downloadVerifiedCrate(ctx, config, crate, into);
  let hashed: ContentHashStream;
  try {
    hashed = await withStep(ctx.log, `Unpacking ${crate.name} ${crate.vers}`, () =>
      unpackCrate(verified.file, into, {
        crateName: crate.name,
        version: crate.vers,
        compressedSize: verified.size,
        signal: ctx.signal,
        checkpoint: ctx.checkpoint,
      }),
    );
  } finally {
    await removeWork(verified.file);
  }
  if (await writeManifestFromCargo(into, crate.name)) {
    hashed.addFile(MANIFEST_FILE);
    ctx.log.info(`${crate.name} declares its manifest in Cargo.toml [package.metadata.yolop]; wrote the equivalent plugin.json.`);
  }
  // Hashed as it was unpacked (issue 20: no second read of the tree); plugin.json written above is read back.
  return hashed.digest(into);
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

/**
 * Install candidates for `spec`, best first, as records `fetchCrateExact` fetches
 * (cksum included, so no second index read): the first is what `fetchCrate`
 * installs and what --ignore-engines takes; the engines walk tries the next ones
 * when a newer one needs a newer agent. The cooldown's skip note is a note of the
 * install's outcome (also in --json), whichever candidate the walk keeps.
 */
export async function crateCandidates(ctx: Context, spec: CrateSpec): Promise<Candidates<CrateRecord>> {
  const indexUrl = ctx.indexUrl;
  // config.json in parallel with the index file (memoised per context, so the
  // download reuses it; a rejection is handled there, so a crate that does not exist
  // leaves no unhandled promise). Errors come in the order of a sequential fetch:
  // the index file's, the version choice's, then config.json's. On a failure the call
  // still settles only after config.json's fetch: it writes a cache entry, and nothing
  // may be written after the call has returned (the caller may have removed the home).
  const configFetch = loadRegistryConfig(ctx, indexUrl);
  let choice: ReturnType<typeof chooseIn>;
  try {
    choice = chooseIn(ctx, spec.crate, await indexEntries(ctx, indexUrl, spec.crate), spec.requirement, false);
  } catch (e) {
    await configFetch.catch(() => undefined);
    throw e;
  }
  await configFetch;
  return { records: choice.entries.map((e) => crateRecord(indexUrl, e, spec.requirement)), ...(choice.skipNote ? { notes: [choice.skipNote] } : {}) };
}

/**
 * Update candidates for an installed crate, best first: the records the recorded
 * requirement selects that are newer than the installed one (the first is what
 * `findUpdate` and --ignore-engines take). Empty = up to date: the same version
 * (with the same cksum; a lock the host wrote has none, so nothing to compare and
 * no re-download; a different one is returned so the caller refuses the
 * republish), or an older one (a yanked newer release never triggers a silent
 * downgrade). The cooldown's skip note is logged: update has no outcome notes.
 */
export async function crateUpdateCandidates(ctx: Context, source: CrateRecord, notes?: UpdateNotes): Promise<CrateRecord[]> {
  const indexUrl = indexFor(ctx, source.index);
  const entries = await indexEntries(ctx, indexUrl, source.crate_name);
  const choice = chooseIn(ctx, source.crate_name, entries, source.requirement, true);
  if (choice.skipNote) ctx.log.warn(choice.skipNote);
  const [first, ...rest] = choice.entries;
  noteNewerOutside(notes, entries, first, source.requirement);
  if (!first) return [];
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
export async function crateRegistryInfo(
  ctx: Context,
  crate: string,
): Promise<{ crate: string; index: string; latest: string | null; versions: Upstream['versions'] }> {
  const entries = await indexEntries(ctx, ctx.indexUrl, crate);
  return { crate: entries[0]?.name ?? crate, index: registryLabel(ctx.indexUrl), latest: newest(entries)?.vers ?? null, versions: versionList(entries) };
}

/** The fetcher for `crate` specs (install): the first candidate, downloaded, verified and unpacked into `into`. */
export async function fetchCrate(ctx: Context, spec: CrateSpec, into: string): Promise<Fetched<CrateRecord>> {
  const { records, notes } = await crateCandidates(ctx, spec);
  return withNotes(await fetchCrateExact(ctx, records[0]!, into), notes);
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
    throw new YepError(
      'E_INTEGRITY',
      `${locked.crate_name} ${locked.version}: the checksum ${JSON.stringify(truncateRedacted(cksum, 80, [], { marker: () => '…' }))} is not 64 lowercase hex digits; refusing to install it unverified.`,
    );
  }
  const crate = { name, vers: locked.version, cksum };
  const content_hash = await fetchVerified(ctx, indexUrl, crate, into, configFetch);
  // The record keeps the index the lock names, not the one the bytes came through: a
  // mirror given with --index is a transport, not a new origin (docs/fleet.md).
  const { index: _transport, ...pinned } = crateRecord(indexUrl, crate, locked.requirement);
  return { dir: into, content_hash, source: { ...pinned, ...(locked.index !== undefined ? { index: locked.index } : {}) } };
}
