/**
 * A home as a file's set-up left it, put back at its own path before each test: for tests
 * whose subject is what a command does to an installed home, not the install that made it.
 * The copy is taken at the same path as the original (the lock, the stat signatures and the
 * grants name it), and the signatures of the trees the original trusted are recorded again
 * for the copy's inodes (faults.ts resignInPlace), so commands take the road they take on
 * the home the install left.
 */
import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resignInPlace, trustedTrees } from './faults.js';
import { copyTree, removeTree } from './file-walk.js';
import type { TempHome } from './home.js';

export interface HomeSnapshot {
  /** The trees whose stat signatures the original trusted (re-signed at each restore). */
  signed: readonly string[];
  /** `home` as it was when the snapshot was taken, at its own path. */
  restore(): void;
  /** Remove the kept copy. */
  cleanup(): void;
}

/** Keep `home` as it is now (every file under its root). */
export function snapshotHome(home: TempHome): HomeSnapshot {
  const signed = trustedTrees(home).map((t) => t.name);
  const kept = mkdtempSync(join(tmpdir(), 'yep-home-snapshot-'));
  rmdirSync(kept);
  copyTree(home.root, kept);
  return {
    signed,
    restore() {
      removeTree(home.root);
      copyTree(kept, home.root);
      resignInPlace(home, signed);
    },
    cleanup() {
      removeTree(kept);
    },
  };
}
