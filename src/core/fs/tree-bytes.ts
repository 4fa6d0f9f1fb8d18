/**
 * The bytes a file or a directory tree holds, walked with lstat (a link counts as itself,
 * never followed). Entries that vanish or cannot be read while it looks are skipped: it
 * measures trees that someone is writing (git fetching into a scratch directory) or that
 * are about to be removed (a report of leftovers), where a count is an estimate anyway.
 * Synchronous: per-entry promise round trips cost more than the walk itself.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export function treeBytes(path: string): number {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return 0;
  }
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch {
    return 0;
  }
  let total = 0;
  for (const name of names) total += treeBytes(join(path, name));
  return total;
}
