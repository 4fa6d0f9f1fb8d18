import { join } from 'node:path';
import { REPO_ROOT } from './home.js';

/**
 * Where the suite keeps what it builds once and reuses in later runs (a bundled fixture
 * server, a generated crate's compiled dependencies), each under a key naming its inputs:
 * node_modules/.cache, where tools keep their caches, so it outlives the run's own temp dir
 * (scripts/test.mjs removes that) and goes with a fresh `npm ci`.
 */
export function testCacheDir(...parts: string[]): string {
  return join(REPO_ROOT, 'node_modules', '.cache', 'yep-ext-test', ...parts);
}
