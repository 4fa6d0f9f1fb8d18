/**
 * Is an installed extension what its lock entry says? The one check behind `verify`,
 * `list`, `install --frozen`, a reinstall of the same pin and `update`: the store entry
 * is present, the manifest parses (and names it), the tree hashes to the locked
 * content hash (the host's algorithm, a provisioned binary left out as the host
 * does), the provisioned binary matches `binary_file_sha256`, and the server
 * command resolves to something executable. `checkEntry` is the one check,
 * `needsRefetch` the one rule for what a fetch repairs. `mode: 'cheap'` trusts an
 * unchanged stat signature (tree-state.ts) instead of re-hashing, `mode: 'full'`
 * always re-hashes. Problems are data (a kind, a message, the files when known).
 */
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { isYepError } from '../errors.js';
import { contentHash } from '../package/content-hash.js';
import { sha256File } from '../fs/file-digest.js';
import { inspectServerCommand, type ProgramChecks } from '../package/inspect-command.js';
import { unbuiltServer, type UnbuiltServer } from '../package/server-build.js';
import { loadManifest, type Manifest } from '../package/manifest.js';
import { isLinked } from '../sources/index.js';
import { packageDir } from '../paths.js';
import type { LockEntry } from './lockfile.js';
import { resolveInstalledDir } from './installed-dir.js';
import { realPathOf } from '../fs/real-path.js';
import { INSTALL_MOVED_DIR } from './installed-manifest.js';
import { diffSignatures, readTreeState, signTree, signTreeJsonChunks, writeTreeState, writeTreeStateText, type FileSignature } from './tree-state.js';
/**
 * missing: no store entry; manifest: plugin.json unreadable or naming another
 * extension; content: the tree's hash differs; binary: the provisioned binary
 * differs or is gone; not-executable: the server file is in the package but
 * cannot run; exec-refused: the server file in the package is intact and its mode lets it
 * run, but the system refuses to (a file system mounted noexec, or a security policy), which
 * no fetch repairs; command: the server command resolves nowhere; engines: its
 * `engines.yolop` excludes the installed agent (`verify` only: verify-engines.ts);
 * unlocked: a package in the store that no lock entry pins, which the host loads
 * anyway; not-installed: settings.toml enables a name that neither the lock nor the
 * store has, so the host is told to load nothing (both: `verify` without names only).
 */
type VerifyProblemKind =
  | 'missing'
  | 'manifest'
  | 'content'
  | 'binary'
  | 'not-executable'
  | 'exec-refused'
  | 'command'
  | 'engines'
  | 'unlocked'
  | 'not-installed'
  | 'custody';

export interface VerifyProblem {
  kind: VerifyProblemKind;
  message: string;
  /** Files concerned (relative to the package), when cheap to say; else null. */
  files: string[] | null;
}

export interface EntryVerification {
  name: string;
  ok: boolean;
  /** The real directory checked (null when the entry is missing). */
  dir: string | null;
  /** `expected` is null for an unlocked package (nothing pins it); `actual` too when nothing is installed. */
  content_hash: { expected: string | null; actual: string | null; checked: 'hashed' | 'signature' | 'skipped' };
  /** The provisioned binary, when the lock records its digest. */
  binary: { path: string; expected: string; actual: string | null } | null;
  /** Where the server command resolves (null when the manifest could not be read). */
  command: { ok: boolean; detail: string } | null;
  problems: VerifyProblem[];
}

export interface VerifyEntryOptions {
  /** 'full' re-hashes (verify); 'cheap' trusts an unchanged stat signature (list, frozen). */
  mode: 'full' | 'cheap';
  /** Skip the content and binary checks (`list --no-verify`). */
  skipHashes?: boolean;
  /**
   * The checks of programs outside the packages (a #! interpreter, PATH's directories), for a
   * command that checks many entries to share: made by that command, so none outlives it.
   */
  programs?: ProgramChecks;
}

/** The result with what a caller may need besides the JSON: the parsed manifest and the fresh signatures. */
export interface EntryCheck {
  result: EntryVerification;
  manifest?: Manifest;
  /** Set when the tree was re-hashed and everything matched: signatures to record. */
  clean?: Record<string, FileSignature>;
}

/**
 * Where a linked (path) entry stands: `pinned` is the directory extensions.lock records,
 * `pinnedThere` whether it still holds a plugin.json, `leadsTo` the real directory the store's
 * link leads to (what yolop loads; undefined when the link or its target is gone). Undefined
 * for an owned entry. A link that leads elsewhere than `pinned` (swapped by hand, or left
 * behind by another tool) loads another directory, however that one hashes; a pinned
 * directory that is gone cannot be re-read by `install --force` or `--frozen` (its recorded
 * source is that very directory): it is installed again from where it is now.
 */
function linkedState(ctx: Context, entry: LockEntry): { pinned: string; pinnedThere: boolean; leadsTo: string | undefined } | undefined {
  if (!isLinked(entry.source) || typeof entry.source.path !== 'string') return undefined;
  const pinned = entry.source.path;
  return { pinned, pinnedThere: existsSync(join(pinned, 'plugin.json')), leadsTo: resolveInstalledDir(ctx.paths, entry.name) };
}

/**
 * Whether the tree yolop loads for `entry` is the user's own directory, edited in place: a
 * linked (path) entry whose store entry is a link. A real directory there is a copy (the
 * host's install of a path package): its drift is damage, repaired by re-linking
 * (`install --force`), not edits for `update` to review, which re-reads the pinned directory.
 */
export function editedInPlace(ctx: Context, entry: LockEntry): boolean {
  return isLinked(entry.source) && isSymlink(packageDir(ctx.paths, entry.name));
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * The problem of a linked entry whose store link does not lead to the directory the lock pins
 * (undefined when it does, or when the entry is not linked): yolop loads what the link leads to.
 */
export function misdirectedProblem(ctx: Context, entry: LockEntry): VerifyProblem | undefined {
  const state = linkedState(ctx, entry);
  if (!state || state.leadsTo === undefined || state.leadsTo === realPathOf(state.pinned)) return undefined;
  // A real directory there is a copy (the host installs a path package so, host-compat §4):
  // installed state, judged by its content hash like any tree, not a link gone astray.
  if (!isSymlink(packageDir(ctx.paths, entry.name))) return undefined;
  return {
    kind: 'missing',
    message: `missing: the store link leads to ${state.leadsTo}, which yolop loads, not to ${state.pinned}, which extensions.lock pins`,
    files: null,
  };
}

/**
 * How a damaged entry is put back, as a command: `install --force <name>` fetches (or, for a
 * linked entry, re-reads and re-links) its recorded source; undefined when that source is a
 * local directory that is gone, which nothing can re-read (install it from where it is now).
 */
export function repairCommand(ctx: Context, entry: LockEntry): string | undefined {
  const state = linkedState(ctx, entry);
  return state && !state.pinnedThere ? undefined : `yep-ext install --force ${entry.name}`;
}

/** The hint for a damaged entry: its repair command, or for a gone local directory, installing it from where it is now. */
export function repairHint(ctx: Context, entry: LockEntry, then: string): string {
  const command = repairCommand(ctx, entry);
  return command
    ? `Repair it with \`${command}\` (or \`yep-ext install --frozen\`), ${then}.`
    : `Its local directory ${(entry.source as { path: string }).path} is gone: install it again from where it is now (\`${INSTALL_MOVED_DIR}\`: it replaces the entry of the gone directory) or drop it with \`yep-ext remove ${entry.name}\`, ${then}.`;
}

/** The `missing` problem of an entry whose store entry (or, linked, the directory it points at) is gone. */
export function missingProblem(ctx: Context, entry: LockEntry): VerifyProblem {
  // A linked kind's entry points at the user's directory; an owned one's at its version in the store.
  const state = linkedState(ctx, entry);
  if (state && !state.pinnedThere) return { kind: 'missing', message: `missing: the linked directory ${state.pinned} is gone`, files: null };
  if (state)
    return {
      kind: 'missing',
      message: `missing: the store entry ${packageDir(ctx.paths, entry.name)} does not lead to ${state.pinned}, the directory extensions.lock pins (link it again with \`yep-ext install --force ${entry.name}\`)`,
      files: null,
    };
  return { kind: 'missing', message: 'missing: not in the store (reinstall it, or `yep-ext install --frozen`)', files: null };
}

function describeFiles(d: { changed: string[]; deleted: string[]; added: string[] }): string {
  const parts = [
    d.changed.length ? `edited ${d.changed.join(', ')}` : '',
    d.deleted.length ? `deleted ${d.deleted.join(', ')}` : '',
    d.added.length ? `added ${d.added.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

/** Check one lock entry against the store. Never throws for a broken package: problems are returned. */
export async function checkEntry(ctx: Context, entry: LockEntry, options: VerifyEntryOptions): Promise<EntryCheck> {
  const result: EntryVerification = {
    name: entry.name,
    ok: true,
    dir: null,
    content_hash: { expected: entry.content_hash, actual: null, checked: 'skipped' },
    binary: null,
    command: null,
    problems: [],
  };
  const done = (extra: Omit<EntryCheck, 'result'> = {}): EntryCheck => {
    result.ok = result.problems.length === 0;
    return { result, ...extra };
  };
  const dir = resolveInstalledDir(ctx.paths, entry.name);
  if (!dir) {
    result.problems.push(missingProblem(ctx, entry));
    return done();
  }
  result.dir = dir;
  // A path install's link leading to another directory than the pinned one: what yolop loads is
  // not the pinned package, and hashing that other directory would call it "edited" (whose
  // suggested `update` re-reads the pinned directory and finds nothing to do).
  const misdirected = misdirectedProblem(ctx, entry);
  if (misdirected) result.problems.push(misdirected);
  const manifest = await readEntryManifest(dir, entry, result);
  const linked = isLinked(entry.source);
  const command = manifest?.yolop.capabilityServer.command;
  const binRel = command !== undefined && !command.includes('/') ? `bin/${command}` : undefined;
  const fileSha = typeof entry.source.binary_file_sha256 === 'string' && !linked ? entry.source.binary_file_sha256 : undefined;
  if (fileSha && binRel) result.binary = { path: binRel, expected: fileSha, actual: null };
  const clean = !options.skipHashes && !misdirected ? await checkHashes(ctx, entry, dir, options, { result, binRel, fileSha, linked }) : undefined;

  if (manifest && command !== undefined) await checkCommand(ctx, entry, dir, command, { result, binRel, linked, programs: options.programs });
  return done(clean ? { ...(manifest ? { manifest } : {}), clean } : manifest ? { manifest } : {});
}

/** The entry's manifest, or undefined with the problem noted when it cannot be read or names another extension. */
async function readEntryManifest(dir: string, entry: LockEntry, result: EntryVerification): Promise<Manifest | undefined> {
  try {
    const manifest = await loadManifest(dir);
    if (manifest.name !== entry.name)
      result.problems.push({
        kind: 'manifest',
        message: `manifest name is "${manifest.name}", not "${entry.name}" (the host skips it)`,
        files: ['plugin.json'],
      });
    return manifest;
  } catch (e) {
    if (!isYepError(e)) throw e;
    result.problems.push({ kind: 'manifest', message: `broken manifest: ${e.message.split('\n').join(' ')}`, files: ['plugin.json'] });
    return undefined;
  }
}

/**
 * The tree's content hash (cheap mode: trusted when the stat signatures are unchanged) and the
 * provisioned binary's digest, problems noted in `run.result`; the fresh signatures when the
 * tree was re-hashed and everything matched.
 */
async function checkHashes(
  ctx: Context,
  entry: LockEntry,
  dir: string,
  options: VerifyEntryOptions,
  run: { result: EntryVerification; binRel: string | undefined; fileSha: string | undefined; linked: boolean },
): Promise<Record<string, FileSignature> | undefined> {
  const { result, binRel, fileSha, linked } = run;
  let sigs: Record<string, FileSignature> | undefined;
  try {
    sigs = signTree(dir);
  } catch {
    sigs = undefined;
  }
  const state = readTreeState(ctx.paths, entry.name);
  const sameEntry = state !== undefined && state.dir === dir && state.content_hash === entry.content_hash && state.binary_file_sha256 === (fileSha ?? null);
  const diff = sameEntry && sigs ? diffSignatures(state.files, sigs) : undefined;
  const unchanged = diff !== undefined && diff.changed.length + diff.deleted.length + diff.added.length + diff.modeOnly.length === 0;
  if (options.mode === 'cheap' && unchanged) {
    result.content_hash = { expected: entry.content_hash, actual: entry.content_hash, checked: 'signature' };
    if (result.binary) result.binary.actual = fileSha ?? null;
  } else {
    // A provisioned binary was added after hashing: leave it out, as the host does.
    const exclude = new Set(typeof entry.source.binary_sha256 === 'string' && binRel && !linked ? [binRel] : []);
    const actual = await contentHash(dir, exclude).catch(() => null);
    result.content_hash = { expected: entry.content_hash, actual, checked: 'hashed' };
    if (actual !== entry.content_hash) {
      const named = diff
        ? {
            changed: diff.changed.filter((f) => !exclude.has(f)),
            deleted: diff.deleted.filter((f) => !exclude.has(f)),
            added: diff.added.filter((f) => !exclude.has(f)),
          }
        : undefined;
      const files = named ? [...named.changed, ...named.deleted, ...named.added].sort() : [];
      const which = named ? describeFiles(named) : '';
      result.problems.push(
        editedInPlace(ctx, entry)
          ? {
              kind: 'content',
              message: `changed since it was pinned (edited or rebuilt)${which}: re-pin with \`yep-ext update ${entry.name}\`, which shows what the new files ask for`,
              files: files.length ? files : null,
            }
          : {
              kind: 'content',
              message: `hash drift: the files changed since install${which} (expected ${entry.content_hash.slice(0, 19)}…, found ${actual?.slice(0, 19) ?? 'unreadable'}…)`,
              files: files.length ? files : null,
            },
      );
    }
    if (result.binary && binRel) {
      const got = await sha256File(join(dir, binRel)).catch(() => undefined);
      result.binary.actual = got ?? null;
      if (got !== fileSha) {
        result.problems.push({
          kind: 'binary',
          message:
            got === undefined
              ? `binary missing: ${binRel} is gone (reinstall it)`
              : `binary drift: ${binRel} changed since install (expected sha256 ${fileSha?.slice(0, 12)}…, found ${got.slice(0, 12)}…)`,
          files: [binRel],
        });
      }
    }
    if (sigs && result.problems.every((p) => p.kind !== 'content' && p.kind !== 'binary')) return sigs;
  }
  return undefined;
}

/** Where the server command resolves, as the host resolves it; a server in the package that cannot run, or an unbuilt local one, noted. */
async function checkCommand(
  ctx: Context,
  entry: LockEntry,
  dir: string,
  command: string,
  run: { result: EntryVerification; binRel: string | undefined; linked: boolean; programs: ProgramChecks | undefined },
): Promise<void> {
  const { result, binRel, linked } = run;
  const inspected = await inspectServerCommand(dir, command, ctx.env.PATH ?? '', undefined, run.programs);
  result.command = { ok: inspected.ok, detail: inspected.detail };
  if (!inspected.ok) {
    let inPackage = false;
    try {
      inPackage = binRel !== undefined && lstatSync(join(dir, binRel)) !== undefined;
    } catch {
      inPackage = false;
    }
    const build = linked && !inPackage ? unbuiltServer(localDir(entry, dir), command) : undefined;
    result.problems.push(
      inPackage
        ? { kind: inspected.refused ? 'exec-refused' : 'not-executable', message: `server will not start: ${inspected.detail}`, files: [binRel as string] }
        : build
          ? { kind: 'command', message: unbuiltMessage(build), files: null }
          : { kind: 'command', message: `server command does not resolve: ${inspected.detail}`, files: null },
    );
  } else if (linked) {
    // The command is there but what it starts is not (a launcher before the first build).
    const build = unbuiltServer(localDir(entry, dir), command);
    if (build) result.problems.push({ kind: 'command', message: unbuiltMessage(build), files: null });
  }
}

/**
 * The one "is the tree intact" rule, shared by `install --frozen` (repair it),
 * a plain `install` of the same pin (reinstall it, status 'reinstalled') and
 * `list` (name the repair): does the check find something that fetching the
 * locked bytes again puts right? A missing entry, a broken manifest, drifted
 * files or binary, and a server file in the package that cannot run all are;
 * a command that resolves nowhere (a package-only install, a PATH command) and
 * an engines verdict are not, and neither is an intact server the system refuses
 * to run (`exec-refused`: a noexec mount; a copy lands on the same mount, so
 * placing it again would change the disk on every run and start nothing). A linked
 * (path) entry is the user's directory: a fetch re-links the same files, so its
 * non-executable server is theirs to fix.
 */
export function needsRefetch(entry: LockEntry, result: EntryVerification): boolean {
  const linked = isLinked(entry.source);
  return result.problems.some(
    (p) => p.kind === 'missing' || p.kind === 'manifest' || p.kind === 'content' || p.kind === 'binary' || (p.kind === 'not-executable' && !linked),
  );
}

/** A local package's directory as the user knows it (the lock's path), not the store's link to it. */
function localDir(entry: LockEntry, dir: string): string {
  return typeof entry.source.path === 'string' ? entry.source.path : dir;
}

/** A local package whose server is not built yet, and the command that builds it. */
function unbuiltMessage(build: UnbuiltServer): string {
  return `server not built yet (${build.missing} is missing): run \`${build.command}\``;
}

/** Record the signatures of a tree that was just re-hashed clean (caller holds the installer lock). */
export async function recordCleanState(ctx: Context, entry: LockEntry, check: EntryCheck): Promise<void> {
  if (!check.clean || !check.result.dir) return;
  await writeTreeState(ctx.paths, {
    format: 1,
    name: entry.name,
    dir: check.result.dir,
    content_hash: entry.content_hash,
    binary_file_sha256: check.result.binary?.expected ?? null,
    files: check.clean,
  });
}

/** Record the signatures of a tree just placed for `entry` (its hash and binary were verified in staging). */
export async function recordPlacedState(ctx: Context, entry: LockEntry): Promise<void> {
  // A linked (path) entry is the user's own directory, hashed before a consent prompt that
  // may wait: signing it now could vouch for edits made meanwhile. It is re-hashed instead.
  if (isLinked(entry.source)) return;
  const dir = resolveInstalledDir(ctx.paths, entry.name);
  if (!dir) return;
  let files: Buffer[];
  try {
    // As JSON bytes built while signing: nothing reads these back now (tree-state.ts).
    files = signTreeJsonChunks(dir);
  } catch {
    return;
  }
  const fileSha = typeof entry.source.binary_file_sha256 === 'string' ? entry.source.binary_file_sha256 : null;
  await writeTreeStateText(ctx.paths, { format: 1, name: entry.name, dir, content_hash: entry.content_hash, binary_file_sha256: fileSha }, files);
}
