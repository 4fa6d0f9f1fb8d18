/**
 * `yep-ext mirror <dir>` (docs/fleet.md): write a static tree holding
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
import { MIRROR_MANIFEST, dlTemplate, mirrorBase, readMirrorFile } from '../sources/mirror/mirror-tree.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { checkSourceUrl } from '../net/transport.js';
import { serializeLock } from '../store/lockfile.js';
import { loadGivenLockfile, requireStoreLock, warnUnlockedBeyond } from './frozen.js';
import type { LockEntry, Lockfile } from '../store/lockfile.js';
import { admitAll, withPolicy } from './policy-gate.js';
import { sha256Hex } from '../fs/hash.js';

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

/**
 * The completion record (docs/fleet.md): the file that says a directory is a mirror
 * yep-ext made and that its last run finished. Written last, after every `.crate`,
 * repository, index line, config.json and mirror.json, with the SHA-256 of the
 * mirror.json it completes (so an edit of mirror.json is seen too); taken away while
 * a run places files, so a mirror a run left part-way never looks complete.
 */
const MIRROR_MARKER = '.yep-mirror';
/**
 * The journal of a run that is placing files: every file it is about to write (path ->
 * sha256) and every repository, written before the first of them. A run that stops
 * part-way (killed, a full disk) leaves it, and the next run knows those files as its
 * own; a finished run deletes it after the completion record.
 */
const MIRROR_JOURNAL = '.yep-mirror.journal';

const markerBytes = (manifestSha256: string): Buffer =>
  Buffer.from(`${JSON.stringify({ made_by: 'yep-ext mirror', format: 1, manifest_sha256: manifestSha256 })}\n`);

interface Journal {
  /** Path -> the digests the file may have while the run is under way (what was recorded before it, what it writes). */
  files: Record<string, string[]>;
  git: string[];
}

interface Claim {
  /** The directory is not there yet: this run makes it (its parent exists). */
  missing: boolean;
  /** Empty, or made by `yep-ext mirror` (its marker, its journal, or an older yep-ext's mirror.json). */
  owned: boolean;
  previous?: MirrorManifest;
  /** What earlier runs wrote, path -> the digests recorded (mirror.json, an unfinished run's journal, the marker). */
  written: Record<string, string[]>;
  /** Repositories earlier runs made. */
  repos: Set<string>;
  /** The completion record of the last finished run is there. */
  marked: boolean;
}

/** A JSON file of the mirror's own (marker, journal), or undefined when absent or unreadable as such. */
function readOwnJson(root: string, rel: string): Record<string, unknown> | undefined {
  const bytes = readMirrorFile(root, rel, 64 * 1024 * 1024);
  if (bytes === undefined) return undefined;
  try {
    const v = JSON.parse(bytes.toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function readJournal(root: string): Journal | undefined {
  const j = readOwnJson(root, MIRROR_JOURNAL);
  if (j === undefined || typeof j.files !== 'object' || j.files === null) return undefined;
  const files = Object.fromEntries(
    Object.entries(j.files as Record<string, unknown>)
      .filter((e): e is [string, unknown[]] => Array.isArray(e[1]))
      .map(([rel, shas]) => [rel, shas.filter((x): x is string => typeof x === 'string')]),
  );
  return { files, git: Array.isArray(j.git) ? j.git.filter((g): g is string => typeof g === 'string') : [] };
}

/**
 * Whether `root` may take the mirror, before anything is written: a new directory (its
 * parent must exist: fs/output-file.ts, the rule `lock export` follows too), an empty one,
 * or one `yep-ext mirror` made. Any other directory holds someone else's files: refused
 * (E_CONFLICT, exit 7) unless `force`, and even then none of its files is replaced.
 */
function claimMirrorDir(root: string, force: boolean): Claim {
  if (checkOutputDir(root) === 'missing') return { missing: true, owned: true, written: {}, repos: new Set(), marked: false };
  const previous = readManifest(root);
  const journal = readJournal(root);
  const entries = readdirSync(root);
  const marked = lstatSync(join(root, MIRROR_MARKER), { throwIfNoEntry: false })?.isFile() === true;
  const owned = entries.length === 0 || marked || previous !== undefined || journal !== undefined;
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
  const written: Record<string, string[]> = {};
  const add = (rel: string, shas: readonly string[]): void => {
    written[rel] = [...(written[rel] ?? []), ...shas];
  };
  for (const [rel, sha] of Object.entries(previous?.files ?? {})) add(rel, [sha]);
  for (const [rel, shas] of Object.entries(journal?.files ?? {})) add(rel, shas);
  if (marked || previous || journal) {
    // Its own manifest, as the completion record recorded it; an older yep-ext's marker recorded nothing (any bytes).
    const manifestSha = readOwnJson(root, MIRROR_MARKER)?.manifest_sha256;
    if (typeof manifestSha === 'string') add(MIRROR_MANIFEST, [manifestSha]);
    else if (!journal) written[MIRROR_MANIFEST] = [];
    written[MIRROR_MARKER] = [];
  }
  const repos = new Set([...(previous?.git ?? []).map((g) => g.path), ...(journal?.git ?? [])]);
  return { missing: false, owned, written, repos, marked, ...(previous ? { previous } : {}) };
}

export async function buildMirror(ctx: Context, dirArg: string, options: MirrorOptions = {}): Promise<MirrorResult> {
  const root = resolve(dirArg);
  if (options.baseUrl !== undefined) checkSourceUrl(options.baseUrl, '--base-url', { allowFile: true, code: 'E_USAGE' });
  const lockPath = options.lockfile ? resolve(options.lockfile) : ctx.paths.lockFile;
  const lock = options.lockfile
    ? await loadGivenLockfile(lockPath)
    : await requireStoreLock(
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
  let journaled = false;
  try {
    const plan = new MirrorPlan(root, scratch, claim.written, claim.repos, options.force === true);
    // config.json names where the .crates are: the one file that depends on the base URL.
    manifest.files['index/config.json'] = plan.stageFile('index/config.json', Buffer.from(`${JSON.stringify({ dl: dlTemplate(base) })}\n`));
    await stageEntries(ctx, plan, lock, manifest, { crates, gits, outside });
    // Phase two. mirror.json and then the completion record come last, after every file they
    // name; before the first file, the journal names them all (a run stopped part-way leaves
    // files the next run knows as its own) and the completion record of the last run goes.
    const manifestData = manifestBytes(manifest);
    plan.stageFile(MIRROR_MANIFEST, manifestData, 3);
    plan.stageFile(MIRROR_MARKER, markerBytes(sha256Hex(manifestData)), 4);
    for (const rel of plan.replacedEdits) ctx.log.warn(`${join(root, rel)} was edited since yep-ext wrote it; --force replaces it with the mirror's own.`);
    const planned = Object.entries(plan.plannedFiles());
    if (planned.length > 0) {
      const journal: Journal = {
        files: Object.fromEntries(planned.map(([rel, sha]) => [rel, [...(claim.written[rel] ?? []), sha]])),
        git: [...new Set([...claim.repos, ...gits.map((g) => g.path)])],
      };
      await writeFileAtomic(join(root, MIRROR_JOURNAL), `${JSON.stringify(journal)}\n`, { mode: 0o644, what: 'The mirror journal' });
      journaled = true;
      if (claim.marked && planned.some(([rel]) => rel === MIRROR_MARKER)) await removeOwned(markerCustody(root), MIRROR_MARKER);
    }
    await plan.place(ctx);
    if (journaled) await removeOwned(markerCustody(root), MIRROR_JOURNAL);
  } catch (e) {
    await removeOwned(scratchCustody(root), basename(scratch)).catch(() => undefined);
    // A directory this run made goes with it when nothing was placed (rmdir: only while empty).
    if (claim.missing && !journaled) await rmdir(root).catch(() => undefined);
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

/**
 * Phase one: every entry fetched and checked, nothing written into the mirror (mirror-plan.ts);
 * each one's report and record added, and a binary fetched from outside the mirror noted.
 */
async function stageEntries(
  ctx: Context,
  plan: MirrorPlan,
  lock: Lockfile,
  manifest: MirrorManifest,
  out: { crates: MirroredCrate[]; gits: MirroredGit[]; outside: MirrorResult['not_mirrored'] },
): Promise<void> {
  const reports: Record<string, object[]> = { crates: out.crates, git: out.gits };
  const listed = manifest as unknown as Record<string, Record<string, unknown>[]>;
  for (const entry of lock.entries) {
    const source = sourceFor(entry.source.type);
    const staged = source.mirror ? await source.mirror(ctx, plan, entry.name, entry.source) : { skipped: `a ${source.noun} cannot be mirrored` };
    if ('skipped' in staged) {
      manifest.skipped.push({ name: entry.name, reason: staged.skipped });
      continue;
    }
    reports[staged.section]!.push(staged.report);
    const binary = binaryOutside(entry);
    if (binary) out.outside.push(binary);
    const items = listed[staged.section]!;
    if (!items.some(staged.same)) items.push(staged.record);
    Object.assign(manifest.files, staged.files);
  }
}

/** The mirror's own files at its root that a run deletes: the completion record (before placing) and the journal (after). */
function markerCustody(root: string): Custody {
  return { base: root, owned: [], names: /^\.yep-mirror(?:\.journal)?$/, what: 'The mirror directory', shared: true };
}

/** The run's scratch directory in the mirror (`.yep-mirror-XXXXXX`, mkdtemp's name). */
function scratchCustody(root: string): Custody {
  return { base: root, owned: [], names: /^\.yep-mirror-[A-Za-z0-9]{6}$/, what: 'The mirror directory', shared: true };
}
