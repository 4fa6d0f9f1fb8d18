/**
 * The store's layout for packages yep-ext owns (crate and git trees): each lives
 * in an immutable version directory `<store>/.yep-packages/<name>.<id>`, and the
 * entry the host reads, `<store>/<name>`, is a relative symlink to it
 * (`.yep-packages/<name>.<id>`). Replacing a package renames a new symlink over
 * the old one: one rename, so whoever reads `<store>/<name>` (the agent at start,
 * which runs no recovery) sees the old package or the new one, never neither.
 * The host ignores dot-directories and follows symlinked entries (host-compat §1).
 *
 * `<id>` is the first 16 hex digits of the content hash, with `.<n>` (n >= 2)
 * appended when that directory exists already (the same bytes reinstalled, or a
 * repaired tree): the name is deterministic, and never reused while in use.
 *
 * Linked kinds (path installs) keep `<store>/<name>` a symlink to the user's
 * directory. Whether an entry is *ours to delete* is decided here by where its
 * link points (inside `.yep-packages`), never by the entry being a symlink or a
 * directory; what the lock's Source says is for reports (`isLinked`).
 */
import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { errnoCode } from '../errors.js';
import { removeOwned } from '../fs/custody.js';
import { packageDir, storeCustody, type Paths } from '../paths.js';

/** What `<store>/<name>` is now. */
export type StoreEntry = { kind: 'none' } | { kind: 'link'; text: string; version?: string } | { kind: 'dir' } | { kind: 'other' };

/** The link text (relative to the store) of version directory `id`. */
export function versionLinkText(paths: Paths, id: string): string {
  return join(basename(paths.packagesDir), id);
}

/** The version directory a symlink text points at, when it is one of ours. */
export function versionOfLink(paths: Paths, text: string): string | undefined {
  const to = resolve(paths.storeDir, text);
  return dirname(to) === paths.packagesDir && !basename(to).startsWith('.') ? basename(to) : undefined;
}

export async function readStoreEntry(paths: Paths, name: string): Promise<StoreEntry> {
  const p = packageDir(paths, name);
  let st: Stats;
  try {
    st = lstatSync(p);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return { kind: 'none' };
    throw e;
  }
  if (st.isSymbolicLink()) {
    const text = readlinkSync(p);
    const version = versionOfLink(paths, text);
    return { kind: 'link', text, ...(version !== undefined ? { version } : {}) };
  }
  return st.isDirectory() ? { kind: 'dir' } : { kind: 'other' };
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** A version directory name for `name` with `contentHash` that does not exist yet. */
export async function freeVersionId(paths: Paths, name: string, contentHash: string): Promise<string> {
  const hex = (/^sha256:([0-9a-f]{16})/.exec(contentHash)?.[1] ?? 'x').slice(0, 16);
  const base = `${name}.${hex}`;
  if (!exists(join(paths.packagesDir, base))) return base;
  for (let n = 2; ; n++) {
    if (!exists(join(paths.packagesDir, `${base}.${n}`))) return `${base}.${n}`;
  }
}

/** Version directories some `<store>/<name>` symlink points at. */
async function referencedVersions(paths: Paths): Promise<Set<string>> {
  const used = new Set<string>();
  let names: string[];
  try {
    names = readdirSync(paths.storeDir);
  } catch {
    return used;
  }
  for (const n of names) {
    if (n.startsWith('.')) continue;
    const p = join(paths.storeDir, n);
    try {
      if (!lstatSync(p).isSymbolicLink()) continue;
      const v = versionOfLink(paths, readlinkSync(p));
      if (v !== undefined) used.add(v);
    } catch {
      // vanished or unreadable: references nothing
    }
  }
  return used;
}

/** The extension name a version directory belongs to (`lsp.0123…` -> `lsp`). */
export function versionName(id: string): string {
  return id.split('.')[0] as string;
}

/**
 * Remove version directories no store entry points at whose extension is still
 * installed (`installedNames`: the lock's names, or a function reading them only when needed): a replaced package whose process died
 * before its clean-up. The versions of a name that neither the lock nor the store
 * has any more (the host's `remove` deletes `<store>/<name>` only) are not crash
 * leftovers: `list` and `verify` report them with their size and `yep-ext remove
 * <name>` deletes them (store/leftovers.ts). Only names yep-ext gives its version
 * directories are touched (fs/custody.ts). Caller holds the installer lock: every
 * transaction that adds a version directory holds it from the move until its link
 * is in place (or rolled back).
 */
export async function sweepUnreferencedVersions(
  paths: Paths,
  installedNames: ReadonlySet<string> | (() => Promise<ReadonlySet<string> | undefined>),
): Promise<string[]> {
  let ids: string[];
  try {
    ids = readdirSync(paths.packagesDir);
  } catch {
    return [];
  }
  if (ids.length === 0) return [];
  const used = await referencedVersions(paths);
  const unused = ids.filter((id) => !used.has(id));
  if (unused.length === 0) return [];
  // The lock's names, read only when some version is unreferenced (most recoveries have none).
  const installed = typeof installedNames === 'function' ? await installedNames() : installedNames;
  if (!installed) return [];
  const custody = storeCustody(paths, 'packages');
  const gone: string[] = [];
  for (const id of unused) {
    if (!installed.has(versionName(id))) continue;
    if (await removeOwned(custody, id)) gone.push(id);
  }
  return gone;
}

/**
 * Remove version directory `id` unless its entry points at it (ids start with
 * their package's name, and only that entry ever links to it). Caller holds the
 * installer lock.
 */
export async function dropVersionIfUnused(paths: Paths, id: string | undefined): Promise<void> {
  if (id === undefined || id.startsWith('.') || id.includes('/')) return;
  const entry = await readStoreEntry(paths, versionName(id)).catch(() => undefined);
  if (entry === undefined || (entry.kind === 'link' && entry.version === id)) return;
  await removeOwned(storeCustody(paths, 'packages'), id);
}
