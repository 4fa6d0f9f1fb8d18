/**
 * `info <name|spec>`: everything yep-ext knows about one extension. Installed:
 * the lock's pin (source, version or commit, content hash, approved grant), the
 * contribution summary of the installed manifest, each config field's state
 * (never a value of a secret), the cheap checks `list` runs (verifyStatus), the
 * `engines.yolop` verdict, and what its origin offers now (one index read or one
 * ls-remote; a failure there is reported, not fatal). Not installed and a crate
 * spec (`info crates.io:foo`, `info foo`): what the registry lists, without
 * installing. A git URL or a path that is not installed: E_USAGE pointing at
 * `install --dry-run`, which fetches and verifies without changing anything.
 */
import { existsSync } from 'node:fs';
import type { Context } from '../context.js';
import { loadLockAsRecorded } from '../store/custody.js';
import { YepError, isYepError } from '../errors.js';
import { findEntry, type LockEntry, type LockSource } from '../store/lockfile.js';
import { sourceFor, sourceLabel } from '../sources/index.js';
import { parseSpec } from '../sources/spec.js';
import { entryInstalledFrom, lookUpInstalled, notInstalledFrom } from '../store/installed-name.js';
import { configFields, loadManifest, type Manifest } from '../package/manifest.js';
import { homeDir, packageDir } from '../paths.js';
import { configStatus } from '../settings/config-status.js';
import { readExtensionSettings } from '../settings/settings.js';
import { profileFile } from '../settings/profiles.js';
import { enabledButAbsentMessage, enabledButAbsentNow, interruptedMessage, unlockedPackages } from '../store/unlocked-packages.js';
import { interruptedChanges } from '../store/interrupted-changes.js';
import { noteCreated } from '../store/created-dirs.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import { grantOf, summarizeGrant, type GrantSummary } from '../package/grants.js';
import type { FieldStatus } from '../settings/config-status.js';
import type { EnginesVerdict } from '../agent/engines.js';
import type { RegistryListing, Upstream } from '../sources/source.js';
import { listExtensions } from './list.js';
import { damageOf, outdatedRow, type OutdatedStatus } from './outdated.js';
import { upstreamOf, type NewerOutside } from './offer.js';
import { withPolicy } from './policy-gate.js';

/** A field's status as config-status.ts gives it (without `kept`), and its default. */
interface InfoConfigField extends Omit<FieldStatus, 'kept'> {
  /** The manifest's default, for a non-secret field that has one; never a configured value. */
  default: unknown;
}

interface VerifyStatus {
  ok: boolean;
  problems: string[];
  /** What ran: `list` (lock, store, manifest, settings, content hash); `verify` will replace it. */
  checked_by: 'list';
}

/** What the origin offers, as `outdated`'s row and `update` read it (offer.ts): one answer. */
interface InfoUpstream {
  wanted: string | null;
  latest: string | null;
  update: boolean;
  beyond: boolean;
  versions: Upstream['versions'];
  status: OutdatedStatus;
  /** Newest version the recorded requirement admits (crates; git: the ref's commit). */
  newest_in_requirement: string | null;
  /** Newest version outside it, when newer than that (crates); else null. */
  newest_outside_requirement: string | null;
  /** The command that moves it (as `outdated`'s row). */
  hint: string | null;
  /** The one "newer outside the requirement" answer, as `outdated` and `update` give it. */
  newer_outside: NewerOutside | null;
  /** Git: the tag the recorded ref names. */
  tag: string | null;
}

type RegistryInfo = RegistryListing;

export interface InfoResult {
  name: string;
  installed: boolean;
  version: string | null;
  description: string | null;
  enabled: boolean | null;
  dir: string | null;
  source: LockSource | null;
  /** One line for people: `crates.io:yolop-extension-x@0.1.0`, the git URL and commit, the path. */
  source_text: string | null;
  /** The pinned version or commit ("" for a path). */
  pin: string | null;
  content_hash: string | null;
  /** The contribution summary of the installed manifest (null: unreadable). */
  grant: GrantSummary | null;
  /** The grant fingerprint the lock records as approved. */
  approved_grant: string | null;
  config: InfoConfigField[];
  verify: VerifyStatus | null;
  engines: EnginesVerdict | null;
  upstream: InfoUpstream | null;
  upstream_error: ReturnType<YepError['toJSON']> | null;
  /** Not installed: what the registry lists. */
  registry: RegistryInfo | null;
}

const EMPTY = {
  version: null,
  description: null,
  enabled: null,
  dir: null,
  source: null,
  source_text: null,
  pin: null,
  content_hash: null,
  grant: null,
  approved_grant: null,
  config: [],
  verify: null,
  engines: null,
  upstream: null,
  upstream_error: null,
  registry: null,
} satisfies Omit<InfoResult, 'name' | 'installed'>;

/**
 * The checks for one installed entry, as `list` runs them (lock, store, manifest,
 * settings, content hash, binary digest, engines). The one place `info` asks: the
 * `verify` command can replace it with its deeper check.
 */
async function verifyStatus(ctx: Context, name: string, profile?: string) {
  const [item] = await listExtensions(ctx, { verify: true, only: [name], ...(profile !== undefined ? { profile } : {}) });
  return item;
}

/** Each config field as `info` shows it: its status, and the manifest's default for a non-secret one (never a value). */
function infoConfig(manifest: Manifest | undefined, fields: readonly FieldStatus[]): InfoConfigField[] {
  const defaults = new Map(manifest ? configFields(manifest).map((f) => [f.key, f]) : []);
  return fields.map((f) => {
    const field = defaults.get(f.key);
    return {
      key: f.key,
      secret: f.secret,
      required: f.required,
      set: f.set,
      source: f.source,
      env: f.env ?? null,
      default: !f.secret && field?.default !== undefined ? field.default : null,
    };
  });
}

async function installedInfo(ctx: Context, entry: LockEntry, profile?: string): Promise<InfoResult> {
  const item = await verifyStatus(ctx, entry.name, profile);
  const manifest = item?.manifest;
  const config = infoConfig(manifest, item?.config ?? []);
  let upstream: InfoUpstream | null = null;
  let upstreamError: InfoResult['upstream_error'] = null;
  try {
    const up = await upstreamOf(ctx, entry);
    if (up) {
      // A damaged tree is not "up to date" whatever the origin says (the checks name the damage).
      const row = outdatedRow(entry, up, null, undefined, await damageOf(ctx, entry));
      upstream = {
        wanted: up.wanted,
        latest: up.latest,
        update: up.update,
        beyond: up.beyond,
        versions: up.versions,
        status: row.status,
        newest_in_requirement: up.wanted,
        newest_outside_requirement: row.newer_outside?.version ?? null,
        hint: row.hint,
        newer_outside: row.newer_outside,
        tag: row.tag,
      };
    }
  } catch (e) {
    // A failed lookup is reported, not fatal; a usage mistake (an --index or YEP_EXT_INDEX that is
    // no index URL) is the user's to fix, and exit 0 with "not checked" would hide it.
    if (!isYepError(e) || e.code === 'E_USAGE') throw e;
    upstreamError = e.toJSON();
  }
  return {
    ...EMPTY,
    name: entry.name,
    installed: true,
    version: entry.version ?? manifest?.version ?? null,
    description: manifest?.description ?? null,
    enabled: item?.enabled ?? null,
    dir: item?.dir ?? null,
    source: entry.source,
    source_text: sourceLabel(entry.source),
    pin: sourceFor(entry.source.type).pin(entry.source),
    content_hash: entry.content_hash,
    grant: manifest ? summarizeGrant(grantOf(manifest)) : null,
    approved_grant: typeof entry.grant === 'string' ? entry.grant : null,
    config,
    verify: { ok: (item?.problems.length ?? 1) === 0, problems: item?.problems ?? ['not in the lock'], checked_by: 'list' },
    engines: item?.engines ?? null,
    upstream,
    upstream_error: upstreamError,
  };
}

/**
 * A store package no lock entry pins (placed by hand, or a lock that lost it): what its
 * manifest and settings.toml say, and the check that fails (nothing records its source, pin
 * or hash, and there is no origin to ask).
 */
async function unlockedInfo(ctx: Context, name: string, profile?: string): Promise<InfoResult> {
  const dir = packageDir(ctx.paths, name);
  const manifest = await loadManifest(dir).catch(() => undefined);
  const settings = await readExtensionSettings(ctx.paths, name, profile).catch(() => undefined);
  const fields = manifest ? await configStatus(ctx.paths, manifest, settings).catch(() => []) : [];
  // One read of the staging journals (it was read twice for the message).
  const interrupted = interruptedChanges(ctx).get(name);
  return {
    ...EMPTY,
    name,
    installed: true,
    version: manifest?.version ?? null,
    description: manifest?.description ?? null,
    enabled: settings?.enabled ?? null,
    dir,
    grant: manifest ? summarizeGrant(grantOf(manifest)) : null,
    config: infoConfig(manifest, fields),
    verify: {
      ok: false,
      problems: [
        interrupted
          ? interruptedMessage(name, interrupted)
          : `not in extensions.lock: yolop finds ${dir}/plugin.json but no lock entry pins it (placed by hand?); remove it or install it from its source to pin it`,
      ],
      checked_by: 'list',
    },
    engines: manifest ? await checkAgainstAgent(ctx, manifest).catch(() => null) : null,
  };
}

export async function extensionInfo(
  runCtx: Context,
  input: string,
  cwd: string = runCtx.cwd ?? process.cwd(),
  options: { profile?: string } = {},
): Promise<InfoResult> {
  // A profile that does not exist is refused before anything else.
  if (options.profile !== undefined) profileFile(runCtx.paths, options.profile);
  // The policy's min_age is a floor of the cooldown, as for install, update and outdated.
  const { ctx } = withPolicy(runCtx);
  const lock = await loadLockAsRecorded(ctx);
  // The resolver every command naming an installed extension uses: a name, or a source it was installed from.
  const found = lookUpInstalled(ctx, lock, input, cwd);
  const name = found.name;
  const entry = name !== undefined ? findEntry(lock, name) : undefined;
  if (entry) return installedInfo(ctx, entry, options.profile);
  // In the store but pinned by no lock entry: yolop finds it, so it is installed, not a registry question.
  if (name !== undefined && unlockedPackages(ctx.paths, new Set(lock.entries.map((e) => e.name))).includes(name))
    return unlockedInfo(ctx, name, options.profile);
  const spec = found.spec ?? parseSpec(input, cwd, homeDir(ctx.env));
  if (spec.kind === 'invalid') {
    throw new YepError('E_NOT_INSTALLED', `"${input}" is not installed, and not a source yep-ext can read: ${spec.reason}.`, {
      hint: '`yep-ext list` shows what is installed; `yep-ext info <crate>` shows what crates.io lists.',
    });
  }
  // A bare word that names no installed extension may still be the crate one was installed
  // from under another name (a source typed as one was matched by lookUpInstalled already).
  const source = sourceFor(spec.kind);
  const same = found.spec === undefined ? entryInstalledFrom(lock, spec) : undefined;
  if (same) return installedInfo(ctx, same, options.profile);
  // settings.toml enables it, but nothing installs it: yolop is told to load what is not there
  // (list and verify name it so); info said only what the registry lists, or "No crate named".
  const absent = name !== undefined && (await enabledButAbsentNow(ctx.paths, lock)).includes(name) ? enabledButAbsentMessage(name) : undefined;
  if (source.registryInfo) {
    // Only reading: the index cache must not leave a store (and config dir) behind in a home that had none.
    const done = noteCreated(ctx);
    try {
      const listed = await source.registryInfo(ctx, spec);
      const settings = absent ? { enabled: true, verify: { ok: false, problems: [absent], checked_by: 'list' as const } } : {};
      return { ...EMPTY, ...settings, name: name ?? listed.name, installed: false, registry: listed.registry };
    } catch (e) {
      if (!absent || !isYepError(e)) throw e;
      throw new YepError(e.code, `The extension "${name}" is not installed, and settings.toml enables it: yolop cannot load it. ${e.message}`, {
        cause: e,
        hint: `\`yep-ext remove ${name}\` removes its settings (or install it).${e.hint ? ` ${e.hint}` : ''}`,
        ...(e.details ? { details: e.details } : {}),
      });
    } finally {
      await done(false);
    }
  }
  // Only a crate has a registry to read; any other source is described by installing it, dry
  // (a directory that is not there has nothing to describe: the hint says so instead).
  const missingDir = 'path' in spec && !existsSync(spec.path);
  throw notInstalledFrom(
    spec.kind,
    input,
    missingDir
      ? `There is no directory at ${spec.path}: check the path. \`yep-ext list\` shows what is installed (and where each comes from).`
      : `To see what it would install without changing anything: \`yep-ext install ${input} --dry-run\`; \`yep-ext list\` shows what is installed.`,
  );
}
