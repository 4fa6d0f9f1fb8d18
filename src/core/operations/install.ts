/**
 * The one install pipeline (pacote's shape): every source kind feeds it a tree in
 * private staging; only this module reads the manifest, hashes, reports the
 * contribution summary, and places the package with a crash-safe transaction.
 * Fetching happens outside the installer lock (so concurrent installs download in
 * parallel); only the read-modify-write of store + lock is serialised.
 */
import { join } from 'node:path';
import type { Context } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { withInstallLock } from '../store/install-lock.js';
import { findEntry, loadLock, type LockEntry, type LockSource } from '../store/lockfile.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { describeSpec, parseSpec, type Spec } from '../sources/spec.js';
import { assertSameCommitSameHash, fetchGit } from '../sources/git.js';
import { fetchPath } from '../sources/local-path.js';
import { fetchCrate } from '../sources/crates-io.js';
import type { FetchResult } from '../sources/types.js';
import { makeStagingDir, removeDir, sweepStaging } from '../store/staging.js';
import { diffGrants, grantOf, type GrantDiff, type GrantSummary } from '../package/grants.js';
import { loadApprovedGrant } from '../store/approved-grants.js';
import { commitPackage, preparePackage, type PrepareOptions } from './prepare.js';
import { describeBinaryStep } from '../binary/binary-step.js';
import { lstat } from 'node:fs/promises';
import { statSync } from 'node:fs';
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
  /** What happens to the server binary (a verified prebuilt, or a build from source after consent). */
  binary?: string;
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
  /** Server-binary options (`--build` / `--no-build`). */
  prepare?: PrepareOptions;
}

/** Identity of where a package comes from, ignoring the pinned version. */
function sourceOrigin(s: LockSource): string {
  switch (s.type) {
    case 'path':
      return `path:${s.path}`;
    case 'git':
      return `git:${s.url}`;
    case 'crate':
      return `crate:${s.crate_name.toLowerCase()}`;
  }
}

function sourcePin(s: LockSource): string {
  switch (s.type) {
    case 'path':
      return '';
    case 'git':
      return s.rev;
    case 'crate':
      return s.version;
  }
}

import { describeSource } from '../sources/describe-source.js';

export { describeSource };

/** Run the fetcher for a spec into `stage`. Adding a source kind = one case here. */
async function fetchSpec(ctx: Context, spec: Spec, stage: string): Promise<FetchResult> {
  switch (spec.kind) {
    case 'path':
      return fetchPath(spec, ctx.paths.storeDir);
    case 'crate':
      return fetchCrate(ctx, spec, join(stage, 'pkg'));
    case 'git':
      return fetchGit(ctx, spec, join(stage, 'pkg'));
    case 'invalid':
      throw new YepError('E_USAGE', `Cannot install "${spec.raw}": ${spec.reason}.`, {
        hint: 'Sources: a bare name (lsp), crates.io:<crate>[@req], a git URL [@rev|#ref], or an explicit path (./dir).',
      });
  }
}

async function pathExists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * crates.io versions are immutable: the same crate at the same version with other
 * bytes means a republish, a tampered mirror or a compromised registry.
 */
export function assertCrateImmutable(previous: LockSource, next: LockSource, name: string): void {
  if (previous.type !== 'crate' || next.type !== 'crate' || previous.version !== next.version) return;
  if (previous.cksum !== undefined && next.cksum !== undefined && previous.cksum !== next.cksum) {
    throw new YepError('E_INTEGRITY', `${name}: ${next.crate_name} ${next.version} now has checksum ${next.cksum.slice(0, 16)}…, but it was installed with ${previous.cksum.slice(0, 16)}…. A published version must never change.`, {
      hint: 'Do not trust this registry answer: check the registry or mirror. If the change is legitimate, remove the extension and install it again.',
      details: { wanted: previous.cksum, got: next.cksum },
    });
  }
}

/** Host flaw fixed: a bare word is a crate, but say so when a same-named directory exists. */
function warnIfDirectory(ctx: Context, text: string, cwd: string): void {
  if (text.startsWith('crates.io:')) return;
  const word = text.split('@')[0] ?? text;
  try {
    if (statSync(join(cwd, word)).isDirectory()) {
      ctx.log.warn(`"${word}" means the crate ${word.startsWith('yolop-extension-') ? word : `yolop-extension-${word}`}, not the directory ./${word}. To install the directory, run \`yep-ext install ./${word}\`.`);
    }
  } catch {
    // No such directory: nothing to say.
  }
}

/** Install one spec. Throws YepError on failure; leaves no trace in that case. */
export async function installSpec(ctx: Context, input: string | Spec, hooks: InstallHooks = {}, cwd = process.cwd()): Promise<InstallOutcome> {
  const spec = typeof input === 'string' ? parseSpec(input, cwd) : input;
  if (spec.kind === 'invalid') await fetchSpec(ctx, spec, '');
  if (spec.kind === 'crate') warnIfDirectory(ctx, spec.raw.trim(), cwd);
  await withInstallLock(ctx, () => sweepStaging(ctx)).then((done) => done.forEach((m) => ctx.log.info(`Recovered: ${m}.`)));
  const stage = await makeStagingDir(ctx, spec.kind === 'path' ? 'path' : describeSpec(spec));
  try {
    const prepared = await preparePackage(ctx, stage, () => fetchSpec(ctx, spec, stage), hooks.prepare);
    const { fetched, manifest, name, grant } = prepared;
    const hash = prepared.content_hash;
    const binaryLine = describeBinaryStep(prepared.binary);
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
      ...(binaryLine ? { binary: binaryLine } : {}),
    });
    await hooks.onPreview?.(preview(before));

    return await withInstallLock(ctx, async () => {
      const lock = await loadLock(ctx.paths.lockFile);
      const previous = findEntry(lock, name);
      // Git objects are content-addressed: the same commit must hash the same.
      if (fetched.source.type === 'git') assertSameCommitSameHash(previous, fetched.source, hash);
      const target = packageDir(ctx.paths, name);
      const targetExists = await pathExists(target);
      let status: InstallStatus = 'installed';
      if (previous) {
        const sameOrigin = sourceOrigin(previous.source) === sourceOrigin(fetched.source);
        const samePin = sourcePin(previous.source) === sourcePin(fetched.source);
        if (sameOrigin && samePin && previous.content_hash === hash && previous.grant === grant.fingerprint && targetExists) {
          status = 'unchanged';
        } else if (sameOrigin && samePin) {
          assertCrateImmutable(previous.source, fetched.source, name);
          status = 'repinned';
        } else {
          const why = sameOrigin
            ? `${name} is installed at ${describeSource(previous.source)}; this would replace it with ${describeSource(fetched.source)}`
            : `${name} is already installed from ${describeSource(previous.source)}; this would replace it with ${describeSource(fetched.source)}`;
          const ok = (await hooks.confirmReplace?.(preview(previous), why)) ?? false;
          if (!ok) {
            const exact = fetched.source.type === 'crate' && previous.source.type === 'crate' && /^=?\d/.test(previous.source.requirement ?? '=');
            throw new YepError('E_CONFLICT', `${why}.`, {
              hint: sameOrigin && exact ? 'Pass --yes to replace it (it was installed at an exact version, so `update` keeps it there).' : `Pass --yes to replace it, or run \`yep-ext update ${name}\` to move it within its source.`,
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
      // Read after the commit: a build from source runs there and changes both.
      const { command } = prepared;
      const notes = [...(fetched.notes ?? [])];
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
  const results: BatchResult[] = new Array(specs.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < specs.length) {
      const i = next++;
      const text = specs[i] as string;
      try {
        results[i] = { spec: text, ok: true, outcome: await installSpec(ctx, text, hooks, cwd) };
      } catch (e) {
        if (!isYepError(e)) throw e;
        results[i] = { spec: text, ok: false, error: e };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
  return results;
}
