/** What `list` prints: the table for people and the document for --json. */
import { sourceLabel } from '../core/sources/index.js';
import type { ListedExtension } from '../core/operations/list.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderRows, wrapCell } from './table.js';
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
  const table = await renderRows(
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
  // On a terminal a row stays one line and a long problem is cut there; each problem names
  // the command that fixes it, so it is said whole under the table (piped rows hold it whole).
  // Folded at the terminal's width, continued lines indented under the name.
  const fold = (text: string): string => (out.width > 4 ? wrapCell(text, out.width - 2).replace(/\n/g, '\n  ') : text);
  const said = out.tty ? items.flatMap((e) => e.problems.map((p) => fold(`${sanitize(e.name)}: ${sanitize(p)}`))) : [];
  return said.length > 0 ? `${table}\n\n${said.join('\n')}` : table;
}
