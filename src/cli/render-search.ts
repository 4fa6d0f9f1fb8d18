/** Human rendering of search results (pure: data in, text out; package text sanitised). */
import type { SearchResult } from '../core/operations/search.js';
import { truncateRedacted } from '../core/text/redact.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderRows } from './table.js';
import type { OutputShape } from './terminal.js';

function oneLine(text: string | null, max: number): string {
  if (!text) return '';
  // Redacted whole, then cut (text/redact.ts); escaping may lengthen it again: that cut is of redacted text.
  const flat = sanitize(truncateRedacted(text.replace(/\s+/g, ' ').trim(), max - 1, [], { marker: () => '…' }), { max: 10_000 });
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Results as a table (fitted on a terminal, tab-separated otherwise; descriptions cut to 60 on a terminal only). */
export async function renderSearch(r: SearchResult, out: OutputShape): Promise<string> {
  if (r.hits.length === 0) {
    return r.term
      ? `No extensions match "${sanitize(r.term)}". Try a shorter term, or \`yep-ext search\` to list them all.`
      : 'No extensions found in this registry.';
  }
  return renderRows(
    ['name', 'version', 'downloads', 'description', 'installed'],
    r.hits.map((h) => [
      sanitize(h.install),
      sanitize(h.version ?? '-'),
      String(h.downloads),
      oneLine(h.description, out.tty ? 60 : 10_000),
      h.installed ? `yes (${sanitize(h.installed.version)})` : '',
    ]),
    out,
  );
}
