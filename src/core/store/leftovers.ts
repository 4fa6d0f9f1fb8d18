/**
 * What yep-ext kept for an extension that is no longer installed: the host's `remove`
 * deletes `<store>/<name>` and its lock entry only (host-compat §4), so the version
 * directories in `.yep-packages` (the package itself, often the largest thing in the
 * store), the approved grant, the custody record, the stat signature and doctor's MCP record
 * stay behind. Neither the lock nor
 * the store names them any more, so `list` and `verify` report them here, with their
 * size, and `yep-ext remove <name>` deletes them; recovery's sweep leaves them alone
 * (store/package-versions.ts). Only names yep-ext gives its own entries are read, and
 * only in its own directories (fs/custody.ts): a user's file there is never counted,
 * and never deleted.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkCustody, custodyDir, removeOwned } from '../fs/custody.js';
import { treeBytes } from '../fs/tree-bytes.js';
import { isValidName } from '../package/names.js';
import { storeCustody, type Paths, type StoreArea } from '../paths.js';
import { versionName } from './package-versions.js';

export interface Leftover {
  name: string;
  /** yep-ext's files of `name` that remain: version directories, its approved grant, its stat signature. */
  paths: string[];
  /** Their size on disk, in bytes (links not followed). */
  bytes: number;
}

/** Where leftovers live, and the extension name of one of yep-ext's entries there (undefined: not a per-name entry). */
const PLACES: Array<{ area: StoreArea; nameOf: (entry: string) => string | undefined }> = [
  { area: 'packages', nameOf: versionName },
  // The approved grant `<name>.json` and the custody record `<name>.lock.json` (store/custody.ts).
  { area: 'grants', nameOf: (e) => /^([A-Za-z0-9_-]+)(?:\.lock)?\.json$/.exec(e)?.[1] },
  { area: 'state', nameOf: (e) => /^([A-Za-z0-9_-]+)\.json$/.exec(e)?.[1] },
  { area: 'mcp', nameOf: (e) => /^([A-Za-z0-9_-]+)\.json$/.exec(e)?.[1] },
];

/** yep-ext's entries in its store directories, by extension name (a directory refused by the guard is skipped: the lock-taking commands report it). */
function entriesByName(paths: Paths, only?: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { area, nameOf } of PLACES) {
    const custody = storeCustody(paths, area);
    let names: string[];
    try {
      if (checkCustody(custody) !== 'ours') continue;
      names = readdirSync(custodyDir(custody));
    } catch {
      continue;
    }
    for (const entry of names) {
      const name = nameOf(entry);
      if (name === undefined || !isValidName(name) || (only !== undefined && name !== only) || !custody.names.test(entry)) continue;
      out.set(name, [...(out.get(name) ?? []), join(custodyDir(custody), entry)]);
    }
  }
  return out;
}

function inStore(paths: Paths, name: string): boolean {
  return lstatSync(join(paths.storeDir, name), { throwIfNoEntry: false }) !== undefined;
}

/**
 * The extensions neither `installed` (the lock's names) nor the store names, with what
 * yep-ext kept for them; `only`: just that name. Sorted by name.
 */
export function findLeftovers(paths: Paths, installed: ReadonlySet<string>, only?: string): Leftover[] {
  const out: Leftover[] = [];
  for (const [name, entries] of entriesByName(paths, only)) {
    if (installed.has(name) || inStore(paths, name)) continue;
    const sorted = entries.sort();
    out.push({ name, paths: sorted, bytes: sorted.reduce((n, p) => n + treeBytes(p), 0) });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Delete what `findLeftovers` found for one name, through the custody guard. Returns the paths removed. */
export async function removeLeftovers(paths: Paths, leftover: Leftover): Promise<string[]> {
  const removed: string[] = [];
  for (const { area } of PLACES) {
    const custody = storeCustody(paths, area);
    const dir = custodyDir(custody);
    for (const p of leftover.paths) {
      if (p.slice(0, dir.length + 1) !== `${dir}/` && p.slice(0, dir.length + 1) !== `${dir}\\`) continue;
      if (await removeOwned(custody, p.slice(dir.length + 1))) removed.push(p);
    }
  }
  return removed;
}

/** "1.2 MB", "340 kB", "12 bytes": the size in the units npm and cargo print (powers of 1000). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} byte${n === 1 ? '' : 's'}`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  do {
    v /= 1000;
    u++;
  } while (v >= 1000 && u < units.length - 1);
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** The problem line `list` and `verify` show for a leftover. */
export function leftoverMessage(l: Leftover): string {
  return `not installed, but yep-ext's files of it remain (${formatBytes(l.bytes)} in ${l.paths.length} entr${l.paths.length === 1 ? 'y' : 'ies'} of the store, left by yolop's \`remove\`?); \`yep-ext remove ${l.name}\` deletes them`;
}
