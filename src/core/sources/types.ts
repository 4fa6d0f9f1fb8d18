/**
 * The contract between source kinds and the one install pipeline (pacote's
 * shape): a fetcher turns a spec into a package tree inside a private staging
 * directory plus the lock record that says exactly what was fetched. Only the
 * pipeline (operations/install) reads the manifest, hashes, and places the tree.
 */
import type { LockSource } from '../store/lockfile.js';

export interface FetchResult {
  /**
   * Root of the package tree. For crate/git: `into` (a directory the fetcher
   * created inside staging; the pipeline renames it into the store). For path:
   * the user's canonical directory (the pipeline links to it).
   */
  dir: string;
  /** What gets written under [extensions.source] in the lock. */
  source: LockSource;
  /** Human notes to show after install (warnings already went to the logger). */
  notes?: string[];
}
