/**
 * A home as a file's set-up left it (an install), made once and given to each test: for tests
 * whose subject is what a command does to an installed home, not the install that made it.
 * One road with two ends: `copyHome` copies it into another home (the test's own), `keepHome`
 * puts it back at its own path (for a home whose lock or store names paths inside its root: a
 * path package's directory, a git origin). Either way the copy is re-signed (`resign`): a
 * copied file has another inode and ctime, and the records may name the original's
 * directories, so without that every command in the copy would re-hash trees a user's home
 * never re-hashes.
 *
 * (config-copy.ts is another job: it puts back the config dir alone, from memory, for the
 * property tests that restore it hundreds of times and never re-sign a tree.)
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { resolvePaths } from '../../src/core/paths.js';
import { resolveInstalledDir } from '../../src/core/store/installed-dir.js';
import { diffSignatures, readTreeState, signTree, treeStateFile } from '../../src/core/store/tree-state.js';
import { copyTree, removeTree } from './file-walk.js';
import type { TempHome } from './home.js';

/** An installed tree whose stat signature its home trusts, with that signature's record. */
export interface TrustedTree {
  name: string;
  state: NonNullable<ReturnType<typeof readTreeState>>;
  dir: string;
}

/**
 * The installed trees in `home`'s config dir whose signature `home` itself trusts (the record
 * names its real directory and every file's size, times, inode and mode are as recorded).
 */
export function trustedTrees(home: TempHome): TrustedTree[] {
  const paths = resolvePaths(home.env);
  if (!existsSync(paths.stateDir)) return [];
  const out: TrustedTree[] = [];
  for (const file of readdirSync(paths.stateDir)) {
    const name = /^(.+)\.json$/.exec(file)?.[1];
    if (name === undefined || name === 'extensions.lock') continue;
    const state = readTreeState(paths, name);
    const dir = resolveInstalledDir(paths, name);
    if (!state || dir === undefined || state.dir !== dir || !dir.startsWith(`${home.configDir}/`)) continue;
    const diff = diffSignatures(state.files, signTree(dir));
    if (diff.changed.length + diff.deleted.length + diff.added.length + diff.modeOnly.length === 0) out.push({ name, state, dir });
  }
  return out;
}

/**
 * For each of `trees` (those a home whose config dir was `fromConfigDir` trusted), record the
 * signature of `to`'s copy of that tree, as the product records a tree whose bytes it knows
 * (entry-check.ts recordPlacedState): the copy holds the same bytes (copyTree, and the tests
 * that compare homes hash every file). A record the original would not trust is left as it was
 * copied: the copy re-hashes there, as the original would. Trees outside the config dir (a path
 * package's directory) are the user's and keep no signature of theirs.
 */
function resign(to: TempHome, trees: readonly TrustedTree[], fromConfigDir: string): void {
  const toPaths = resolvePaths(to.env);
  for (const { name, state, dir } of trees) {
    const copy = resolveInstalledDir(toPaths, name);
    if (copy !== join(to.configDir, relative(fromConfigDir, dir))) throw new Error(`${name}: the copy of ${dir} is not at the same place in ${to.configDir}`);
    writeFileSync(treeStateFile(toPaths, name), JSON.stringify({ ...state, dir: copy, files: signTree(copy) }), { mode: 0o600 });
    // Read back as the product reads it: a record it would refuse fails here, not as a silent re-hash.
    if (readTreeState(toPaths, name)?.dir !== copy) throw new Error(`${name}: the copy's stat signature does not read back`);
  }
}

/**
 * `to` made a copy of `from`'s config dir and HOME (the download cache), as the set-up that
 * made `from` left it, and re-signed.
 */
export function copyHome(from: TempHome, to: TempHome): void {
  for (const [src, dest] of [
    [from.configDir, to.configDir],
    [from.env.HOME as string, to.env.HOME as string],
  ] as const) {
    if (!existsSync(src)) continue;
    mkdirSync(dirname(dest), { recursive: true });
    copyTree(src, dest);
  }
  resign(to, trustedTrees(from), from.configDir);
}

export interface KeptHome {
  /** The trees whose stat signatures the original trusted (re-signed at each restore). */
  signed: readonly string[];
  /** `home` as it was when it was kept (every file under its root), at its own path, re-signed. */
  restore(): void;
  /** Remove the kept copy. */
  cleanup(): void;
}

/** Keep `home` as it is now, to be put back at its own path (`restore`). */
export function keepHome(home: TempHome): KeptHome {
  const trees = trustedTrees(home);
  const kept = mkdtempSync(join(tmpdir(), 'yep-kept-home-'));
  rmdirSync(kept);
  copyTree(home.root, kept);
  return {
    signed: trees.map((t) => t.name),
    restore() {
      removeTree(home.root);
      copyTree(kept, home.root);
      resign(home, trees, home.configDir);
    },
    cleanup() {
      removeTree(kept);
    },
  };
}
