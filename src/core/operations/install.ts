/**
 * The one install pipeline (pacote's shape): every source kind feeds it a tree in
 * private staging; only this module reads the manifest, hashes, reports the
 * contribution summary, and places the package with a crash-safe transaction.
 * Fetching happens outside the installer lock (so concurrent installs download in
 * parallel); only the read-modify-write of store + lock is serialised.
 */
import { join } from 'node:path';
import pMap from 'p-map';
import type { Context } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { withInstallLock } from '../store/install-lock.js';
import { findEntry, loadLock, type LockEntry, type LockSource } from '../store/lockfile.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { parseSpec, stageLabel, type Spec } from '../sources/spec.js';
import { describeSource, sameOrigin as isSameOrigin, samePin as isSamePin, sourceFor, type ValidSpec } from '../sources/index.js';
import { makeStagingDir, removeDir, sweepStaging } from '../store/staging.js';
import { diffGrants, grantOf, type GrantDiff, type GrantSummary } from '../package/grants.js';
import { loadApprovedGrant } from '../store/approved-grants.js';
import { commitPackage, preparePackage, type FetchResult } from './prepare.js';
import { lstat } from 'node:fs/promises';
import { packageDir } from '../paths.js';

export type InstallStatus = 'installed' | 'replaced' | 'repinned' | 'unchanged';

export interface InstallOutcome {
  name: string;
  version?: string;
  status: InstallStatus;
  content_hash: string;
  /** Fingerprint of the grant recorded in the lock. */
  grant: string;
  source: LockSource;
  /** The lock entry this replaced, if any. */
  previous?: LockEntry;
  manifest: Manifest;
  /** Where the server command resolves, or why it does not (install still succeeds). */
  command: { found: boolean; detail: string };
  notes: string[];
}

/** What a caller is told before anything is placed (the consent-by-action moment). */
export interface InstallPreview {
  spec: Spec;
  manifest: Manifest;
  /** The grant the user approves by installing, with its fingerprint and warnings. */
  grant: GrantSummary;
  /** Contribution diff against the installed package, when this replaces one. */
  diff?: GrantDiff;
  source: LockSource;
  content_hash: string;
  /** Present when an extension of that name is already installed. */
  previous?: LockEntry;
}

export interface InstallHooks {
  /** Shown the manifest before anything is placed (print the contribution summary here). */
  onPreview?: (preview: InstallPreview) => void | Promise<void>;
  /**
   * Asked when the install would replace an extension of the same name from a
   * different source or at another version. Return true to go ahead.
   */
  confirmReplace?: (preview: InstallPreview, why: string) => Promise<boolean>;
  /**
   * Asked when the new package's grant is wider than the approved one (the diff is in
   * the preview). Return true to approve. Without it a widening install is refused.
   */
  confirmWiden?: (preview: InstallPreview) => Promise<boolean>;
}

function invalidSpec(spec: Extract<Spec, { kind: 'invalid' }>): YepError {
  return new YepError('E_USAGE', `Cannot install "${spec.raw}": ${spec.reason}.`, {
    hint: 'Sources: a bare name (lsp), crates.io:<crate>[@req], a git URL [@rev|#ref], or an explicit path (./dir).',
  });
}

/** Run the spec's Source into `stage` (a linked kind ignores the directory). */
function fetchSpec(ctx: Context, spec: ValidSpec, stage: string): Promise<FetchResult> {
  return sourceFor(spec.kind).fetch(ctx, spec, join(stage, 'pkg'));
}

async function pathExists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Install one spec. Throws YepError on failure; leaves no trace in that case. */
export async function installSpec(ctx: Context, input: string | Spec, hooks: InstallHooks = {}, cwd = process.cwd()): Promise<InstallOutcome> {
  const spec = typeof input === 'string' ? parseSpec(input, cwd) : input;
  if (spec.kind === 'invalid') throw invalidSpec(spec);
  sourceFor(spec.kind).preflight?.(ctx, spec, cwd);
  await withInstallLock(ctx, () => sweepStaging(ctx)).then((done) => done.forEach((m) => ctx.log.info(`Recovered: ${m}.`)));
  const stage = await makeStagingDir(ctx, stageLabel(spec));
  try {
    const prepared = await preparePackage(ctx, stage, () => fetchSpec(ctx, spec, stage));
    const { fetched, manifest, name, grant, command } = prepared;
    const hash = prepared.content_hash;
    const notes = [...(fetched.notes ?? [])];
    const before = findEntry(await loadLock(ctx.paths.lockFile), name);
    const installedGrant =
      (await loadApprovedGrant(ctx, name, before?.grant)) ??
      (await loadManifest(packageDir(ctx.paths, name)).then(
        (m) => grantOf(m),
        () => undefined,
      ));
    const diff = installedGrant ? diffGrants(installedGrant, grant.grant) : undefined;
    const preview = (previous?: LockEntry): InstallPreview => ({
      spec,
      manifest,
      grant,
      ...(diff ? { diff } : {}),
      source: fetched.source,
      content_hash: hash,
      ...(previous ? { previous } : {}),
    });
    await hooks.onPreview?.(preview(before));

    return await withInstallLock(ctx, async () => {
      const lock = await loadLock(ctx.paths.lockFile);
      const previous = findEntry(lock, name);
      const target = packageDir(ctx.paths, name);
      const targetExists = await pathExists(target);
      let status: InstallStatus = 'installed';
      if (previous) {
        const sameOrigin = isSameOrigin(previous.source, fetched.source);
        const samePin = isSamePin(previous.source, fetched.source);
        const unchanged = samePin && previous.content_hash === hash && previous.grant === grant.fingerprint && targetExists;
        // Same pin, same bytes (a republished crate, an altered checkout): the kind decides.
        if (!unchanged && previous.source.type === fetched.source.type) {
          sourceFor(fetched.source.type).checkRepin(previous, { content_hash: hash, source: fetched.source }, name);
        }
        if (unchanged) {
          status = 'unchanged';
        } else if (samePin) {
          status = 'repinned';
        } else {
          const why = sameOrigin
            ? `${name} is installed at ${describeSource(previous.source)}; this would replace it with ${describeSource(fetched.source)}`
            : `${name} is already installed from ${describeSource(previous.source)}; this would replace it with ${describeSource(fetched.source)}`;
          const ok = (await hooks.confirmReplace?.(preview(previous), why)) ?? false;
          if (!ok) {
            const exact = sameOrigin && sourceFor(previous.source.type).pinnedExactly(previous.source);
            throw new YepError('E_CONFLICT', `${why}.`, {
              hint: exact ? 'Pass --yes to replace it (it was installed at an exact version, so `update` keeps it there).' : `Pass --yes to replace it, or run \`yep-ext update ${name}\` to move it within its source.`,
            });
          }
          status = 'replaced';
        }
        // The manifest is the approval boundary: a wider grant is never taken silently.
        if (status !== 'unchanged' && diff?.widens) {
          const approved = (await hooks.confirmWiden?.(preview(previous))) ?? false;
          if (!approved) {
            throw new YepError('E_CONSENT_REQUIRED', `${name}: this package asks for more than the installed one was approved for; nothing was changed.`, {
              hint: `Review the changes above, then re-run with --accept ${grant.fingerprint} (exactly this grant) or --yes.`,
              details: { diff },
            });
          }
        }
      } else if (targetExists) {
        const ok = (await hooks.confirmReplace?.(preview(), `${target} exists but is not in the lock (placed by hand?)`)) ?? false;
        if (!ok) {
          throw new YepError('E_CONFLICT', `${target} already exists and yep-ext did not install it.`, {
            hint: 'Move it aside, or pass --yes to replace it.',
          });
        }
        status = 'replaced';
      }
      if (status !== 'unchanged') await commitPackage(ctx, prepared);
      return {
        name,
        ...(manifest.version !== undefined ? { version: manifest.version } : {}),
        status,
        content_hash: hash,
        grant: grant.fingerprint,
        source: fetched.source,
        ...(previous ? { previous } : {}),
        manifest,
        command: command.ok ? { found: true, detail: command.warning ? `${command.path} (${command.warning})` : command.path } : { found: false, detail: command.detail },
        notes,
      };
    });
  } finally {
    await removeDir(stage);
  }
}

export type BatchResult = { spec: string; ok: true; outcome: InstallOutcome } | { spec: string; ok: false; error: YepError };

/**
 * Install several specs: fetched concurrently (bounded), each committed on its
 * own, every failure reported. Unexpected (non-YepError) failures propagate: bugs
 * must not be dressed up as per-item errors.
 */
export async function installMany(ctx: Context, specs: string[], hooks: InstallHooks = {}, cwd = process.cwd(), concurrency = 4): Promise<BatchResult[]> {
  return pMap(
    specs,
    async (text): Promise<BatchResult> => {
      try {
        return { spec: text, ok: true, outcome: await installSpec(ctx, text, hooks, cwd) };
      } catch (e) {
        if (!isYepError(e)) throw e;
        return { spec: text, ok: false, error: e };
      }
    },
    { concurrency },
  );
}
