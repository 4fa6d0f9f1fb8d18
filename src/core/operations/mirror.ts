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
import { lstatSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rmdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Context } from '../context.js';
import { YepError } from '../errors.js';
import { removeOwned, type Custody } from '../fs/custody.js';
import { checkOutputDir } from '../fs/output-file.js';
import { MirrorPlan } from '../sources/mirror/mirror-plan.js';
import { sanitize } from '../text/sanitize.js';
import type { MirroredCrate } from '../sources/mirror/mirror-crates.js';
import type { MirroredGit } from '../sources/mirror/mirror-git.js';
import { sourceFor } from '../sources/index.js';
import { manifestBytes, readManifest, type MirrorManifest } from '../sources/mirror/mirror-manifest.js';
import { MIRROR_MANIFEST, dlTemplate, mirrorBase, sha256Hex } from '../sources/mirror/mirror-tree.js';
import { checkSourceUrl } from '../net/transport.js';
import { serializeLock } from '../store/lockfile.js';
import { loadGivenLockfile, loadStoreLock, warnUnlockedBeyond } from './frozen.js';
import type { LockEntry } from '../store/lockfile.js';
import { admitAll, withPolicy } from './policy-gate.js';

export interface MirrorOptions {
  /** The lock to mirror (default: the store's own extensions.lock). */
  lockfile?: string;
  /** The URL the mirror will be served at (default: the directory as file://). */
  baseUrl?: string;
  /** Write into a non-empty directory yep-ext did not make (none of its files is replaced). */
  force?: boolean;
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

/** The file that says a directory is a mirror yep-ext made (docs/fleet.md). */
const MIRROR_MARKER = '.yep-mirror';
const MARKER_TEXT = `${JSON.stringify({ made_by: 'yep-ext mirror', format: 1 })}\n`;

interface Claim {
  /** The directory is not there yet: this run makes it (its parent exists). */
  missing: boolean;
  /** Empty, or made by `yep-ext mirror` (its marker, or an older yep-ext's mirror.json). */
  owned: boolean;
  previous?: MirrorManifest;
}

/**
 * Whether `root` may take the mirror, before anything is written: a new directory (its
 * parent must exist: fs/output-file.ts, the rule `lock export` follows too), an empty one,
 * or one `yep-ext mirror` made. Any other directory holds someone else's files: refused
 * (E_CONFLICT, exit 7) unless `force`, and even then none of its files is replaced.
 */
function claimMirrorDir(root: string, force: boolean): Claim {
  if (checkOutputDir(root) === 'missing') return { missing: true, owned: true };
  const previous = readManifest(root);
  const entries = readdirSync(root);
  const marked = lstatSync(join(root, MIRROR_MARKER), { throwIfNoEntry: false })?.isFile() === true;
  const owned = entries.length === 0 || marked || previous !== undefined;
  if (!owned && !force) {
    const shown = entries
      .slice(0, 3)
      .map((n) => sanitize(n, { max: 40 }))
      .join(', ');
    throw new YepError(
      'E_CONFLICT',
      `${sanitize(root)} is not empty (${shown}${entries.length > 3 ? `, … ${entries.length} entries` : ''}) and is not a mirror yep-ext made; nothing was written.`,
      {
        hint: 'Give a new or empty directory, or pass --force to add the mirror beside what is there (yep-ext never replaces or deletes a file it did not write).',
        details: { dir: root, entries: entries.length },
      },
    );
  }
  return { missing: false, owned, ...(previous ? { previous } : {}) };
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
  const claim = claimMirrorDir(root, options.force === true);
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
  const previous = claim.previous;
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
  // Only the final directory is made (its parent exists: claimMirrorDir); taken away again when the run fails.
  if (claim.missing) await mkdir(root, { mode: 0o755 });
  const scratch = await mkdtemp(join(root, '.yep-mirror-'));
  const crates: MirroredCrate[] = [];
  const gits: MirroredGit[] = [];
  const outside: MirrorResult['not_mirrored'] = [];
  try {
    // Its own marker and manifest are files this mirror wrote, whatever mirror.json lists.
    const written = { ...manifest.files, ...(claim.owned && previous ? { [MIRROR_MANIFEST]: 'mirror.json', [MIRROR_MARKER]: 'marker' } : {}) };
    const plan = new MirrorPlan(root, scratch, written, new Set(manifest.git.map((g) => g.path)));
    // config.json names where the .crates are: the one file that depends on the base URL.
    manifest.files['index/config.json'] = plan.stageFile('index/config.json', Buffer.from(`${JSON.stringify({ dl: dlTemplate(base) })}\n`));
    // Phase one: every entry fetched and checked, nothing written into the mirror (mirror-plan.ts).
    const reports: Record<string, object[]> = { crates, git: gits };
    const listed = manifest as unknown as Record<string, Record<string, unknown>[]>;
    for (const entry of lock.entries) {
      const source = sourceFor(entry.source.type);
      const out = source.mirror ? await source.mirror(ctx, plan, entry.name, entry.source) : { skipped: `a ${source.noun} cannot be mirrored` };
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
    // Phase two: the marker, then mirror.json naming every file before it is written (a run
    // killed part-way leaves files the next run knows as its own), then the files.
    plan.stageFile(MIRROR_MARKER, Buffer.from(MARKER_TEXT), 0);
    plan.stageFile(MIRROR_MANIFEST, manifestBytes(manifest), 0);
    await plan.place();
  } catch (e) {
    await removeOwned(scratchCustody(root), basename(scratch)).catch(() => undefined);
    // A directory this run made goes with it when nothing was placed (rmdir: only while empty).
    if (claim.missing) await rmdir(root).catch(() => undefined);
    throw e;
  }
  await removeOwned(scratchCustody(root), basename(scratch));
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

/** The run's scratch directory in the mirror (`.yep-mirror-XXXXXX`, mkdtemp's name). */
function scratchCustody(root: string): Custody {
  return { base: root, owned: [], names: /^\.yep-mirror-[A-Za-z0-9]{6}$/, what: 'The mirror directory', shared: true };
}
