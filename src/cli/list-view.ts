/** What `list` prints: the table for people and the document for --json. */
import { sourceLabel } from '../core/sources/index.js';
import type { ListedExtension } from '../core/operations/list.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderRows } from './table.js';
import type { OutputShape } from './terminal.js';

export function listJson(items: ListedExtension[]) {
  return { extensions: items.map(toJson) };
}

/** One entry: every key present, null when unknown (docs/json.md); keys yep-ext may add later come after. */
function toJson(e: ListedExtension) {
  const { manifest: _m, ...rest } = e;
  return {
    ...rest,
    name: e.name,
    version: e.version ?? null,
    description: e.description ?? null,
    enabled: e.enabled ?? null,
    source: e.source ?? null,
    content_hash: e.content_hash ?? null,
    grant: e.grant ?? null,
    dir: e.dir,
    problems: e.problems,
    config: e.config ?? null,
    engines: e.engines ?? null,
    leftovers: e.leftovers ?? null,
  };
}

/** The table (fitted boxes on a terminal, tab-separated lines otherwise; see table.ts). */
export async function renderList(items: ListedExtension[], out: OutputShape): Promise<string> {
  if (items.length === 0) return 'No extensions installed. Try `yep-ext search` or `yep-ext install <source>`.';
  return renderRows(
    ['name', 'version', 'enabled', 'source', 'config', 'problems'],
    items.map((e) => [
      sanitize(e.name),
      sanitize(e.version ?? '-'),
      e.enabled === undefined ? '?' : e.enabled ? 'yes' : 'no',
      e.source ? sanitize(sourceLabel(e.source)) : '(not in lock)',
      (e.config ?? [])
        .map(
          (f) =>
            `${sanitize(f.key)}${f.secret ? ' (secret)' : ''}: ${f.set ? 'set' : f.kept ? 'kept, not in effect' : f.source === 'default' ? 'unset (default)' : 'unset'}`,
        )
        .join('\n'),
      e.problems.length ? sanitize(e.problems.join('; ')) : '',
    ]),
    out,
  );
}
