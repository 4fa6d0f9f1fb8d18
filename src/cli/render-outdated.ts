/**
 * What `outdated` prints: the table for people (width-aware on a terminal,
 * tab-separated with a header when piped, as `list`) and the `--json` document,
 * whose every key is present (null when it does not apply). Pure.
 */
import type { OutdatedItem } from '../core/operations/outdated.js';
import { sanitize } from '../core/text/sanitize.js';
import { renderRows } from './table.js';
import type { OutputShape } from './terminal.js';

/** `unlocked`: the store's packages no lock entry pins (the host loads them; no row: nothing records their source). */
export function outdatedJson(items: OutdatedItem[], unlocked: string[] = []) {
  return { outdated: items, outdated_count: items.filter((i) => i.status === 'update' || i.status === 'beyond').length, unlocked };
}

/** A git commit shortened for the table (JSON keeps it whole). */
const short = (item: OutdatedItem, pin: string | null): string =>
  pin === null ? '-' : /^[0-9a-f]{40}$/.test(pin) ? pin.slice(0, 12) : sanitize(pin, { max: 40 });

/** What the newer versions' `engines.yolop` say, for the status cell ("" when nothing to add). */
function newerEnginesText(item: OutdatedItem): string {
  const n = item.newer_engines;
  if (!n) return '';
  const reasons = n.needs_newer_agent.map((s) => sanitize(s.reason, { max: 160 })).join('; ');
  if (n.status === 'unknown-agent') return ' (newer versions not checked against yolop: its version is unknown)';
  if (n.status === 'failed') return ` (newer versions' engines.yolop ${sanitize(n.detail, { max: 200 })})`;
  if (item.status === 'held') return '';
  const to = item.status === 'update' ? n.runnable_in_requirement : n.runnable;
  return to !== null && reasons ? ` (to ${sanitize(to)}: ${reasons})` : '';
}

function statusText(item: OutdatedItem): string {
  switch (item.status) {
    case 'update':
      return `update: ${item.hint}`;
    case 'beyond':
      return `newer outside ${item.requirement ?? 'the recorded requirement'}: ${item.hint ?? ''}`.trim();
    case 'held':
      return `held: ${sanitize(item.newer_engines?.detail ?? 'newer versions need a newer yolop', { max: 300 })} (upgrade yolop)`;
    case 'local':
      return 'local (a path install: edited in place)';
    case 'damaged':
      return `damaged: ${sanitize(item.error?.message ?? '', { max: 200 })} (repair: ${item.hint})`;
    case 'failed':
      return `failed: ${sanitize(item.error?.message ?? '', { max: 200 })}`;
    default:
      return 'up to date';
  }
}

export async function renderOutdated(items: OutdatedItem[], out: OutputShape, unlocked: string[] = []): Promise<string> {
  if (items.length === 0) {
    // The store may hold packages the host loads that no lock entry pins: then something is installed.
    return unlocked.length === 0
      ? 'No extensions installed. Try `yep-ext search` or `yep-ext install <source>`.'
      : `No locked extensions to compare; the store holds ${sanitize(unlocked.join(', '))}, which no lock entry pins.`;
  }
  const table = await renderRows(
    ['name', 'current', 'wanted', 'latest', 'kind', 'status'],
    items.map((i) => {
      const engines = i.engines?.status === 'excludes' ? `; the installed version ${i.engines.detail} (yolop cannot run it)` : '';
      return [sanitize(i.name), short(i, i.current), short(i, i.wanted), short(i, i.latest), i.kind, statusText(i) + newerEnginesText(i) + engines];
    }),
    out,
  );
  const n = outdatedJson(items).outdated_count;
  const held = items.filter((i) => i.status === 'held').length;
  const heldLine = held > 0 ? `${held} held back: newer versions need a newer yolop.` : '';
  const damaged = items.filter((i) => i.status === 'damaged').length;
  const damagedLine = damaged > 0 ? `${damaged} damaged: what is installed is not what the lock pins.` : '';
  const unlockedLine = unlocked.length > 0 ? `${unlocked.length} not compared: no lock entry pins ${sanitize(unlocked.join(', '))}.` : '';
  const summary = [
    n > 0 ? `${n} extension${n === 1 ? '' : 's'} can be updated.` : held > 0 || damaged > 0 || unlocked.length > 0 ? '' : 'Everything is up to date.',
    heldLine,
    damagedLine,
    unlockedLine,
  ]
    .filter(Boolean)
    .join(' ');
  // The summary line only for people at a terminal: piped output stays a plain table.
  return out.tty ? `${table}\n${summary}` : table;
}
