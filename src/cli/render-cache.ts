/** What `cache verify` and `cache clean` say about files in the cache that are not its own. */
import type { ForeignEntry } from '../core/cache/download-cache.js';
import { sanitize } from '../core/text/sanitize.js';

/** One line per foreign entry on stderr (never touched), after a line that says what they are. */
export function logForeign(log: (line: string) => void, foreign: ForeignEntry[]): void {
  if (foreign.length === 0) return;
  log(`${foreign.length} foreign entr${foreign.length === 1 ? 'y' : 'ies'} in the cache (not put there by yep-ext; left alone):`);
  for (const f of foreign) log(`  ${sanitize(f.path)} (${f.is})`);
}
