/**
 * What `outdated` prints: the table for people (width-aware on a terminal,
 * tab-separated with a header when piped, as `list`) and the `--json` document,
 * whose every key is present (null when it does not apply). Pure.
 */
import type { OutdatedItem } from '../core/operations/outdated.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderRows, wrapCell } from './table.js';
import type { OutputShape } from './terminal.js';
import { outsideText, updateCommand } from './render-moves.js';

/** `unlocked`: the store's packages no lock entry pins (the host loads them; no row: nothing records their source). */
export function outdatedJson(items: OutdatedItem[], unlocked: string[] = []) {
  return { outdated: items, outdated_count: items.filter((i) => i.status === 'update' || i.status === 'beyond').length, unlocked };
}

/** A pin for the table: the git tag the row follows when the pin is what it names, a commit shortened (JSON keeps it whole). */
function shown(item: OutdatedItem, pin: string | null): string {
  if (pin === null) return '-';
  if (item.tag !== null && pin === item.wanted) return sanitize(item.tag, { max: 40 });
  return /^[0-9a-f]{40}$/.test(pin) ? pin.slice(0, 7) : sanitize(pin, { max: 40 });
}

/**
 * What the newer versions' `engines.yolop` say, for the status cell: `to`, beside the
 * command (" (to 0.4.0: 0.5.0 needs yolop >=0.13; …)"); `note`, a line of its own
 * after the commands (the walk did not run, or failed).
 */
function enginesText(item: OutdatedItem): { to: string; note: string } {
  const n = item.newer_engines;
  if (!n) return { to: '', note: '' };
  if (n.status === 'unknown-agent') return { to: '', note: '(newer versions not checked against yolop: its version is unknown)' };
  if (n.status === 'failed') return { to: '', note: `(newer versions' engines.yolop ${sanitize(n.detail, { max: 200 })})` };
  if (item.status === 'held') return { to: '', note: '' };
  const reasons = n.needs_newer_agent.map((s) => sanitize(s.reason, { max: 160 })).join('; ');
  const to = item.status === 'update' ? n.runnable_in_requirement : n.runnable;
  return { to: to !== null && reasons ? ` (to ${sanitize(to)}: ${reasons})` : '', note: '' };
}

/** The status cell: what the row is and the command that moves it, each command on a line of its own. */
function statusText(item: OutdatedItem): string {
  const outside = item.newer_outside ? outsideText(item.newer_outside) : '';
  const { to, note } = enginesText(item);
  const lines = (...first: string[]): string => [...first, note].filter(Boolean).join('\n');
  switch (item.status) {
    case 'update':
      return lines(`update: ${updateCommand(item.name)}${to}`, outside);
    case 'beyond':
      return lines(`${outside}${to}`);
    case 'held':
      return `held: ${sanitize(item.newer_engines?.detail ?? 'newer versions need a newer yolop', { max: 300 })} (upgrade yolop)`;
    case 'local':
      return 'local (a path install: edited in place)';
    case 'damaged':
      return `damaged: ${sanitize(item.error?.message ?? '', { max: 200 })} (repair: \`${item.hint}\`)`;
    case 'failed':
      return `failed: ${sanitize(item.error?.message ?? '', { max: 200 })}`;
    default:
      return lines('up to date');
  }
}

/** The line under the table: how many rows each command moves (one rule with the rows: `update` moves only `update` rows). */
function summaryLine(items: OutdatedItem[], unlocked: string[]): string {
  const count = (status: OutdatedItem['status']): number => items.filter((i) => i.status === status).length;
  const [updates, beyond, held, damaged] = [count('update'), count('beyond'), count('held'), count('damaged')];
  const they = (n: number, one: string, many: string): string => (n === 1 ? one : many);
  return [
    updates > 0 ? `${updates} can be updated within ${they(updates, 'its', 'their')} requirement: \`yep-ext update\`.` : '',
    beyond > 0
      ? `${beyond} ${they(beyond, 'has a newer release', 'have newer releases')} only outside ${they(beyond, 'its', 'their')} requirement: the install in ${they(beyond, 'its', 'their')} row takes it.`
      : '',
    held > 0 ? `${held} held back: newer versions need a newer yolop.` : '',
    damaged > 0 ? `${damaged} damaged: what is installed is not what the lock pins.` : '',
    unlocked.length > 0 ? `${unlocked.length} not compared: no lock entry pins ${sanitize(unlocked.join(', '))}.` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

export async function renderOutdated(items: OutdatedItem[], out: OutputShape, unlocked: string[] = []): Promise<string> {
  if (items.length === 0) {
    // The store may hold packages the host loads that no lock entry pins: then something is installed.
    return unlocked.length === 0
      ? 'No extensions installed. Try `yep-ext search` or `yep-ext install <source>`.'
      : `No locked extensions to compare; the store holds ${sanitize(unlocked.join(', '))}, which no lock entry pins.`;
  }
  const table = await renderRows(
    ['name', 'current', 'wanted', 'latest', 'status'],
    items.map((i) => {
      const engines = i.engines?.status === 'excludes' ? `; the installed version ${i.engines.detail} (yolop cannot run it)` : '';
      return [sanitize(i.name), shown(i, i.current), shown(i, i.wanted), shown(i, i.latest), statusText(i) + engines];
    }),
    out,
    // The status names the command to run: folded onto more lines on a narrow terminal, never cut.
    { wrap: 4 },
  );
  const summary = summaryLine(items, unlocked) || 'Everything is up to date.';
  // The summary line only for people at a terminal: piped output stays a plain table.
  return out.tty ? `${table}\n${out.width > 0 ? wrapCell(summary, out.width) : summary}` : table;
}
