/**
 * The shared middle of install, update and frozen install: a fetched tree in
 * staging becomes a PreparedPackage (manifest read by the host's rules, content
 * hash, grant), and a PreparedPackage is committed to the store and lock by the
 * crash-safe transaction. Only this module turns fetched bytes into store state.
 */
import { symlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { checkpoint } from '../fs/checkpoint.js';
import { inspectServerCommand, type CommandInspection } from '../package/inspect-command.js';
import { contentHash } from '../package/content-hash.js';
import { approvalOf, grantOf, summarizeGrant, type GrantSummary } from '../package/grants.js';
import { findEntry, loadStoreLock, type LockEntry, type Lockfile } from '../store/lockfile.js';
import { YepError, stopIfInterrupted } from '../errors.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { assertValidName } from '../package/names.js';
import { describeSource, isBuildable, isLinked, sourceFor, withUnknownRecordKeys, type LockSource } from '../sources/index.js';
import type { Fetched } from '../sources/source.js';
import { placePackage, type LockChanges, type PlaceIntent } from '../store/transaction.js';
import type { BinaryStep } from '../binary/binary-step.js';
import { binaryRecordOf, withBinaryRecord } from '../binary/binary-record.js';
import { buildLaterCommand } from '../binary/cargo-build.js';
import { mayRunPackageCode, type PackageCode } from '../policy/package-code.js';
import { withStep } from '../log.js';

/** What a fetch returned, typed for the pipeline (any kind's record). */
export type FetchResult = Fetched<LockSource>;

export interface PreparedPackage {
  fetched: FetchResult;
  manifest: Manifest;
  name: string;
  content_hash: string;
  grant: GrantSummary;
  command: CommandInspection;
  stage: string;
  /**
   * The server-binary step (docs/binaries.md), present when the command did not
   * resolve in a tree we own: `binary.outcome.refused` marks a prebuilt binary
   * refused for integrity reasons; `binary.build` a cargo build that
   * commitPackage runs once the guard lets it (policy/package-code.ts).
   */
  binary?: BinaryStep;
}

export interface PrepareOptions {
  /**
   * Told the manifest before anything more is done for the package (hashing,
   * provisioning a binary): throw to reject it (the engines walk, operations/agent-walk).
   */
  accept?: (manifest: Manifest, fetched: FetchResult) => Promise<void>;
}

/**
 * An MCP server with a `url` and no `type`: read as http here (as MCP clients and yolop's
 * `.mcp.json` read it), but yolop's plugin.json reader, as its source reads, defaults `type`
 * to stdio and skips a package whose stdio server has no `command`.
 */
function untypedMcpNote(servers: string[]): string {
  const which = servers.map((s) => `mcpServers.${s}`).join(', ');
  return `${which} ${servers.length === 1 ? 'has' : 'have'} a "url" and no "type": yep-ext reads ${servers.length === 1 ? 'it' : 'them'} as http, but a yolop whose plugin.json reader defaults "type" to "stdio" skips this package; add "type": "http" to plugin.json so every yolop reads it the same`;
}

/** The build of `name` from `source`, as the guard in front of package code sees it. */
function buildCode(name: string, source: LockSource): PackageCode {
  return { kind: 'build', name, what: describeSource(source), later: buildLaterCommand(name) };
}

export async function preparePackage(ctx: Context, stage: string, fetch: () => Promise<FetchResult>, options: PrepareOptions = {}): Promise<PreparedPackage> {
  const fetched = await fetch();
  const manifest = await loadManifest(fetched.dir);
  const name = assertValidName(manifest.name, 'manifest name');
  await options.accept?.(manifest, fetched);
  const untyped = Object.entries(manifest.yolop.mcpServers).filter(([, d]) => d.typeInferred);
  if (untyped.length > 0) fetched.notes = [...(fetched.notes ?? []), untypedMcpNote(untyped.map(([server]) => server))];
  // The host hashes the unpacked tree before a prebuilt binary is added (host-compat §4).
  // A crate's hash was computed while it was unpacked; other kinds are hashed here.
  const content_hash = fetched.content_hash ?? (await withStep(ctx.log, `Hashing ${name}`, () => contentHash(fetched.dir)));
  await checkpoint(ctx, 'install:after-fetch');
  const inspect = () => inspectServerCommand(fetched.dir, manifest.yolop.capabilityServer.command, ctx.env.PATH ?? '');
  let command = await inspect();
  // The server binary (prebuilt, else a planned build), only into a tree we own (never into a user's path install).
  let binary: BinaryStep | undefined;
  if (!command.ok && !isLinked(fetched.source)) {
    const { prepareBinary } = await import('../binary/binary-step.js');
    binary = await prepareBinary(ctx, fetched.dir, manifest, command, isBuildable(fetched.source));
    if (binary.outcome?.record) fetched.source = withBinaryRecord(fetched.source, binary.outcome.record);
    if (binary.build) {
      // Said before the summary: a build with consent, one to ask about, or none (and why).
      const verdict = await mayRunPackageCode(ctx, buildCode(name, fetched.source), 'plan');
      if (verdict.run) binary.consent = 'given';
      else if (verdict.ask) binary.consent = 'ask';
      else {
        delete binary.build;
        binary.withheld = verdict.why;
        binary.notes.push(verdict.why);
      }
    }
    if (binary.notes.length > 0) fetched.notes = [...(fetched.notes ?? []), ...binary.notes];
    command = await inspect();
  }
  return {
    fetched,
    manifest,
    name,
    content_hash,
    grant: summarizeGrant(grantOf(manifest)),
    command,
    stage,
    ...(binary ? { binary } : {}),
  };
}

/** Run a planned cargo build if the guard lets it (asking now, at a terminal); the lock record, notes and command follow. */
async function finishPreparedBinary(ctx: Context, p: PreparedPackage): Promise<void> {
  if (!p.binary?.build) return;
  const verdict = await mayRunPackageCode(ctx, buildCode(p.name, p.fetched.source), 'run');
  if (!verdict.run) {
    delete p.binary.build;
    const why = verdict.ask ? 'not built from source: nobody was asked' : verdict.why;
    p.binary.notes.push(why);
    p.fetched.notes = [...(p.fetched.notes ?? []), why];
    return;
  }
  const { finishBinary } = await import('../binary/binary-step.js');
  const before = p.binary.notes.length;
  // The build's work directory: fresh, inside this run's own stage.
  const outcome = await finishBinary(ctx, p.binary, p.fetched.dir, await mkdtemp(join(p.stage, 'build-')), verdict.permit);
  if (outcome?.record) p.fetched.source = withBinaryRecord(p.fetched.source, outcome.record);
  const added = p.binary.notes.slice(before);
  if (added.length > 0) p.fetched.notes = [...(p.fetched.notes ?? []), ...added];
  p.command = await inspectServerCommand(p.fetched.dir, p.manifest.yolop.capabilityServer.command, ctx.env.PATH ?? '');
}

/**
 * Fetch exactly what a lock entry pins (no resolution) and prove it is what the
 * lock says: the manifest's name, the content hash and, when the lock records one,
 * the grant (a lock cannot approve a different grant). The one call for
 * `install --frozen`, and for reinstall, verify/repair and mirroring. Throws
 * E_INTEGRITY naming every difference; the caller removes `stage`.
 */
export async function prepareExactly(ctx: Context, entry: LockEntry, stage: string): Promise<PreparedPackage> {
  const p = await preparePackage(ctx, stage, () => sourceFor(entry.source.type).fetchExactly(ctx, entry.source, join(stage, 'pkg')));
  const problems: string[] = [];
  if (p.name !== entry.name) problems.push(`its manifest names it "${p.name}"`);
  if (p.content_hash !== entry.content_hash) problems.push(`content hash ${p.content_hash} differs from the locked ${entry.content_hash}`);
  // A format-1 fingerprint (from before the grant held the words the model reads) approves the same
  // grant over the locked bytes: the content hash above proves the words.
  if (typeof entry.grant === 'string' && !approvalOf(entry.grant, p.grant.grant))
    problems.push(`its grant ${p.grant.fingerprint} differs from the locked ${entry.grant} (the lock cannot approve a different grant)`);
  // The binary is pinned too: a prebuilt one must be the locked artifact (a release host can serve
  // another binary with a matching .sha256). A local cargo build is not reproducible byte for byte.
  const refused = p.binary?.outcome?.refused;
  if (refused) problems.push(`its prebuilt binary was refused (${refused})`);
  const lockedBinary = entry.source.binary_sha256;
  if (!refused && typeof lockedBinary === 'string' && entry.source.binary_source !== 'cargo' && !isLinked(entry.source)) {
    const got = p.fetched.source.binary_sha256;
    if (got !== lockedBinary)
      problems.push(
        got === undefined
          ? `the locked prebuilt binary (sha256 ${lockedBinary}) could not be provisioned again`
          : `its prebuilt binary sha256 ${got} differs from the locked binary_sha256 ${lockedBinary}`,
      );
  }
  if (problems.length > 0) throw new YepError('E_INTEGRITY', problems.join('; '));
  return p;
}

/** The lock entry a prepared package gets. */
export function lockEntryFor(p: PreparedPackage): LockEntry {
  return {
    name: p.name,
    content_hash: p.content_hash,
    ...(p.manifest.version !== undefined ? { version: p.manifest.version } : {}),
    grant: p.grant.fingerprint,
    source: p.fetched.source,
  };
}

/** The entry keys yep-ext writes itself; any other key (a newer tool's) is carried over on a rewrite. */
const OWN_ENTRY_KEYS = new Set(['name', 'content_hash', 'version', 'source', 'grant']);

/**
 * `next` with the keys of `previous` that yep-ext does not know (kept verbatim, as the
 * host ignores them), at the entry's top level and under [extensions.source].
 */
function carryUnknownKeys(next: LockEntry, previous: LockEntry | undefined): LockEntry {
  if (!previous) return next;
  const carried = Object.fromEntries(Object.entries(previous).filter(([k]) => !OWN_ENTRY_KEYS.has(k) && !(k in next)));
  return { ...carried, ...next, source: withUnknownRecordKeys(next.source, previous.source) };
}

/**
 * `given` (an entry committed as it is: --frozen, --force) describing the binary placed in
 * the tree: a binary built here or provisioned now that the entry does not record gets its
 * keys, or the content hash would count bin/<command> and every check would call the tree
 * altered. A locked prebuilt was proved equal by prepareExactly; nothing placed keeps the entry's.
 */
function withPlacedBinary(given: LockEntry, p: PreparedPackage): LockEntry {
  const placed = binaryRecordOf(p.fetched.source);
  if (!placed || placed.binary_file_sha256 === given.source.binary_file_sha256) return given;
  return { ...given, source: withBinaryRecord(given.source, placed) };
}

/**
 * Place a prepared package at <store>/<name> and pin it, with any other lock
 * `changes` in the same write. Caller holds the installer lock, and every consent
 * has been given: a planned build from source runs here. `current` is the store's
 * lock as the caller read it under that hold (read here once when not given);
 * returns the lock as written.
 */
export async function commitPackage(
  ctx: Context,
  p: PreparedPackage,
  given?: LockEntry,
  changes: LockChanges = {},
  current?: Lockfile,
  intent: PlaceIntent = 'install',
): Promise<Lockfile> {
  stopIfInterrupted(ctx.signal);
  await finishPreparedBinary(ctx, p);
  const lock = current ?? (await loadStoreLock(ctx.paths));
  // A rewritten entry keeps the keys yep-ext does not know (the host or a newer yep-ext may have written them).
  const entry = given ? withPlacedBinary(given, p) : carryUnknownKeys(lockEntryFor(p), findEntry(lock, p.name));
  let tree = p.fetched.dir;
  if (isLinked(p.fetched.source)) {
    // The store entry is a link to the user's directory, swapped in like a tree.
    tree = join(p.stage, 'link');
    symlinkSync(p.fetched.dir, tree, 'dir');
  }
  // The approved grant is saved by the transaction, after the lock commit.
  const written = await placePackage(ctx, p.stage, entry, tree, p.grant.grant, changes, lock, intent);
  // The stat signature of the tree just placed (verified in staging): later checks skip the re-hash.
  const { recordPlacedState } = await import('../store/entry-check.js');
  await recordPlacedState(ctx, entry);
  return written;
}
