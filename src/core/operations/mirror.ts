/**
 * `yep-ext mirror <dir>` (issue 14, docs/fleet.md): write a static tree holding
 * exactly what a lock pins, for a fleet to install from with `--index` /
 * YEP_EXT_INDEX (and `--git-mirror` for git sources). Each entry is mirrored by
 * its Source (`Source.mirror`): crates write the locked index lines and verified
 * `.crate`s (mirror/mirror-crates.ts), git bare repositories holding the locked
 * commits, servable by dumb HTTP (mirror/mirror-git.ts); a path source is local by
 * definition and skipped with a note. Re-running adds what is new and keeps
 * what is pinned; a pinned file is never rewritten with other bytes.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Context } from '../context.js';
import { YepError, errnoCode } from '../errors.js';
import type { MirroredCrate } from '../sources/mirror/mirror-crates.js';
import type { MirroredGit } from '../sources/mirror/mirror-git.js';
import { sourceFor } from '../sources/index.js';
import { readManifest, writeManifest, type MirrorManifest } from '../sources/mirror/mirror-manifest.js';
import { MIRROR_MANIFEST, dlTemplate, mirrorBase, sha256Hex } from '../sources/mirror/mirror-tree.js';
import { checkSourceUrl } from '../net/transport.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { serializeLock } from '../store/lockfile.js';
import { loadGivenLockfile, loadStoreLock, warnUnlockedBeyond } from './frozen.js';
import type { LockEntry } from '../store/lockfile.js';
import { admitAll, withPolicy } from './policy-gate.js';

export interface MirrorOptions {
  /** The lock to mirror (default: the store's own extensions.lock). */
  lockfile?: string;
  /** The URL the mirror will be served at (default: the directory as file://). */
  baseUrl?: string;
}

export interface MirrorResult {
  dir: string;
  base_url: string;
  index_url: string;
  crates: MirroredCrate[];
  git: MirroredGit[];
  /** The value for --git-mirror / YEP_EXT_GIT_MIRROR. */
  git_mirror_url: string;
  skipped: Array<{ name: string; reason: string }>;
  /**
   * What a mirrored entry's lock also pins but the mirror does not hold: a provisioned
   * server binary, which an install from the mirror still gets from outside it.
   */
  not_mirrored: Array<{ name: string; what: string; reason: string }>;
  files: number;
}

/**
 * The server binary the lock records for `entry` is not in the mirror: a prebuilt
 * artifact comes from its release host (the URL is the package's, not the index's),
 * a cargo build needs cargo and the crate's dependencies from their registry.
 */
function binaryOutside(entry: LockEntry): MirrorResult['not_mirrored'][number] | undefined {
  const s = entry.source;
  if (typeof s.binary_sha256 !== 'string') return undefined;
  const target = typeof s.binary_target === 'string' ? ` for ${s.binary_target}` : '';
  if (s.binary_source === 'cargo') {
    return {
      name: entry.name,
      what: `server binary${target} (built with cargo)`,
      reason:
        "an install from the mirror builds it again with cargo (only with --allow-build: a build runs the crate's code), which fetches the dependencies from their own registry",
    };
  }
  return {
    name: entry.name,
    what: `prebuilt server binary${target}`,
    reason:
      "an install from the mirror downloads it from the package's release host (or takes it from the machine's download cache); without either, `install --frozen` fails",
  };
}

async function ensureDir(dir: string): Promise<void> {
  const st = await stat(dir).catch((e: unknown) => (errnoCode(e) === 'ENOENT' ? undefined : Promise.reject(e)));
  if (st && !st.isDirectory())
    throw new YepError('E_USAGE', `${dir} exists and is not a directory.`, { hint: 'Give a new or existing directory for the mirror.' });
  await mkdir(dir, { recursive: true });
}

export async function buildMirror(ctx: Context, dirArg: string, options: MirrorOptions = {}): Promise<MirrorResult> {
  const root = resolve(dirArg);
  if (options.baseUrl !== undefined) checkSourceUrl(options.baseUrl, '--base-url', { allowFile: true, code: 'E_USAGE' });
  const lockPath = options.lockfile ? resolve(options.lockfile) : ctx.paths.lockFile;
  const lock = options.lockfile
    ? await loadGivenLockfile(lockPath)
    : await loadStoreLock(
        ctx,
        '`mirror` holds what a lock pins',
        'Name the lock to mirror with --lockfile <path> (write one with `yep-ext lock export <path>` where the extensions are installed).',
      );
  // As `install --frozen` does: an empty mirror from a wrong path must not pass silently in CI.
  if (lock.entries.length === 0) ctx.log.warn(`${lockPath} pins no extensions: the mirror will hold nothing.`);
  if (!options.lockfile) await warnUnlockedBeyond(ctx, lock, 'The mirror');
  // The policy file rules where the mirror takes bytes from, as it rules an install: each
  // entry's origin (git: the origin itself, never a git mirror; crates: the run's index).
  const { gitMirror: _notUsedByMirror, ...direct } = ctx;
  const { policy } = withPolicy(direct);
  admitAll(
    direct,
    policy,
    lock.entries.map((e) => ({ name: e.name, source: e.source })),
  );
  await ensureDir(root);
  const previous = readManifest(root);
  const base = mirrorBase(root, options.baseUrl);

  const manifest: MirrorManifest = {
    format: 1,
    base_url: base,
    lock: { path: lockPath, sha256: sha256Hex(Buffer.from(serializeLock(lock))) },
    crates: previous?.crates ?? [],
    git: previous?.git ?? [],
    skipped: [],
    files: { ...(previous?.files ?? {}) },
  };
  // config.json names where the .crates are: the one file that depends on the base URL.
  const config = `${JSON.stringify({ dl: dlTemplate(base) })}\n`;
  await mkdir(join(root, 'index'), { recursive: true });
  await writeFileAtomic(join(root, 'index', 'config.json'), config, { mode: 0o644, what: 'The mirror file' });
  manifest.files['index/config.json'] = sha256Hex(Buffer.from(config));

  const scratch = await mkdtemp(join(root, '.yep-mirror-'));
  const crates: MirroredCrate[] = [];
  const gits: MirroredGit[] = [];
  const outside: MirrorResult['not_mirrored'] = [];
  try {
    // The command's report and manifest.json, by the section a Source names.
    const reports: Record<string, object[]> = { crates, git: gits };
    const listed = manifest as unknown as Record<string, Record<string, unknown>[]>;
    for (const entry of lock.entries) {
      const source = sourceFor(entry.source.type);
      const out = source.mirror ? await source.mirror(ctx, { root, scratch }, entry.name, entry.source) : { skipped: `a ${source.noun} cannot be mirrored` };
      if ('skipped' in out) {
        manifest.skipped.push({ name: entry.name, reason: out.skipped });
        continue;
      }
      reports[out.section]!.push(out.report);
      const binary = binaryOutside(entry);
      if (binary) outside.push(binary);
      const items = listed[out.section]!;
      if (!items.some(out.same)) items.push(out.record);
      Object.assign(manifest.files, out.files);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  await writeManifest(root, manifest);
  return {
    dir: root,
    base_url: base,
    index_url: `${base}index/`,
    crates,
    git: gits,
    git_mirror_url: `${base}git/`,
    skipped: manifest.skipped,
    not_mirrored: outside,
    files: Object.keys(manifest.files).length + 1,
  };
}

export { MIRROR_MANIFEST };
