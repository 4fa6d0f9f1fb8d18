/**
 * The crates.io source: spec -> version choice in the sparse index -> verified
 * `.crate` download -> safe unpack into staging -> plugin.json (written from
 * Cargo.toml metadata when the crate declares its manifest there). Returns the
 * lock record of exactly what was fetched; the install pipeline does the rest.
 */
import { removeWork } from '../fs/custody.js';
import type { Context } from '../context.js';
import { DEFAULT_INDEX_URL, normalizeIndexUrl } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { CRATE_PREFIX } from '../package/names.js';
import type { CrateSpec } from './spec.js';
import { unpackCrate } from '../archive/unpack.js';
import { writeManifestFromCargo } from './crates-io/cargo-manifest.js';
import type { ContentHashStream } from '../package/content-hash-stream.js';
import { MANIFEST_FILE } from '../package/manifest.js';
import { compareVersionsDesc } from './crates-io/cargo-version.js';
import { pickVersions, type VersionPick } from './crates-io/pick-version.js';
import { effectiveCooldown } from './crates-io/cooldown-options.js';
import { downloadVerifiedCrate } from './crates-io/download.js';
import { fetchIndexFile } from './crates-io/index-client.js';
import { indexFor } from './crates-io/index-for.js';
import { CKSUM_RE, type IndexEntry } from './crates-io/index-lines.js';
import { assertCrateName } from './crates-io/index-path.js';
import { checkIndexUrl, loadRegistryConfig, type RegistryConfig } from './crates-io/registry-config.js';
import { withNotes, type Candidates, type Fetched, type Upstream } from './source.js';

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
 * The one picker (crates-io/pick-version.ts) under this run's cooldown: the
 * context's (set when it was built: --min-age, --allow-fresh, the policy's floor)
 * and YEP_EXT_MIN_AGE. Its warnings are logged; the cooldown's skip note is the
 * caller's to place (an install's outcome note, an update's warning).
 */
function pick(
  ctx: Context,
  crate: string,
  entries: IndexEntry[],
  requirement: string | undefined,
  installed?: { version: string; cksum?: string },
): VersionPick {
  const chosen = pickVersions({
    crate: entries[0]?.name ?? crate,
    entries,
    requirement,
    cooldown: effectiveCooldown(ctx.cooldown, ctx.env),
    now: ctx.clock.now(),
    installed,
  });
  for (const w of chosen.warnings) ctx.log.warn(w);
  return chosen;
}

/**
 * The version `requirement` (cargo dialect; undefined = latest stable) selects
 * for `crate` in the context's index: the first of the candidates (library API).
 */
export async function resolveCrateVersion(ctx: Context, crate: string, requirement?: string, options: { index?: string } = {}): Promise<ResolvedCrate> {
  const indexUrl = options.index ? normalizeIndexUrl(options.index) : ctx.indexUrl;
  const e = pick(ctx, crate, await indexEntries(ctx, indexUrl, crate), requirement).candidates[0]!;
  return { name: e.name, vers: e.vers, cksum: e.cksum, yanked: e.yanked };
}

export { indexFor } from './crates-io/index-for.js';

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
  // Hashed as it was unpacked (no second read of the tree); plugin.json written above is read back.
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
  let choice: VersionPick;
  try {
    choice = pick(ctx, spec.crate, await indexEntries(ctx, indexUrl, spec.crate), spec.requirement);
  } catch (e) {
    await configFetch.catch(() => undefined);
    throw e;
  }
  await configFetch;
  return { records: choice.candidates.map((e) => crateRecord(indexUrl, e, spec.requirement)), ...(choice.skipNote ? { notes: [choice.skipNote] } : {}) };
}

/** The versions an index lists, newest first (what `info` shows). */
function versionList(entries: IndexEntry[]): Upstream['versions'] {
  return [...entries].sort((a, b) => compareVersionsDesc(a.version, b.version)).map((e) => ({ version: e.vers, yanked: e.yanked }));
}

/**
 * What the index offers an installed crate now, from one read, as the one picker
 * decides it: `update`'s candidates (the records the recorded requirement selects
 * that are newer than the installed one, best first; the installed version itself
 * first when the index now gives it another cksum, so the caller refuses the
 * republish; empty = up to date: an older best, e.g. after a yank, never triggers a
 * silent downgrade), `wanted` the first newer one (else the installed version),
 * `outside` the newest release outside the requirement when newer than that, and
 * `latest` the newest of the two. `outdated` and `info` read the same answer, so
 * the three agree, the cooldown included.
 */
export async function crateUpstream(ctx: Context, source: CrateRecord): Promise<Upstream<CrateRecord>> {
  const entries = await indexEntries(ctx, indexFor(ctx, source.index), source.crate_name);
  const choice = pick(ctx, source.crate_name, entries, source.requirement, { version: source.version, cksum: source.cksum });
  const newerOne = choice.newer.find((n) => n.within)?.entry;
  const wanted = newerOne?.vers ?? source.version;
  const asRecord = (e: IndexEntry): CrateRecord => ({ ...source, version: e.vers, cksum: e.cksum, crate_name: e.name });
  return {
    wanted,
    latest: choice.outside?.vers ?? wanted,
    update: newerOne !== undefined,
    beyond: choice.outside !== undefined,
    versions: versionList(entries),
    candidates: choice.candidates.map(asRecord),
    outside: choice.outside && source.requirement !== undefined ? { version: choice.outside.vers, requirement: source.requirement } : null,
    notes: choice.skipNote ? [choice.skipNote] : [],
    newer: choice.newer.map((n) => ({
      source: { ...crateRecord(DEFAULT_INDEX_URL, n.entry, source.requirement), ...(source.index !== undefined ? { index: source.index } : {}) },
      within: n.within,
    })),
  };
}

/**
 * `info` for a crate that is not installed: what the index lists, without installing,
 * and `latest`, what `install <crate>` takes now (the one picker, the cooldown
 * included; null when it would take nothing: only pre-releases, every release yanked
 * or too young).
 */
export async function crateRegistryInfo(
  ctx: Context,
  crate: string,
): Promise<{ crate: string; index: string; latest: string | null; versions: Upstream['versions'] }> {
  const entries = await indexEntries(ctx, ctx.indexUrl, crate);
  let latest: string | null = null;
  try {
    latest = pickVersions({ crate, entries, cooldown: effectiveCooldown(ctx.cooldown, ctx.env), now: ctx.clock.now() }).candidates[0]?.vers ?? null;
  } catch (e) {
    if (!isYepError(e)) throw e;
  }
  return { crate: entries[0]?.name ?? crate, index: registryLabel(ctx.indexUrl), latest, versions: versionList(entries) };
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
