/**
 * Tables for lists: compact box borders, no colour. Printable-ASCII tables (the
 * usual case) are drawn here in well under a millisecond; anything else (wide
 * characters, emoji, tabs) goes to cli-table3, whose width rules we do not
 * re-implement. cli-table3 costs ~35 ms for 50 rows (string-width per cell) plus
 * its load time, which dominated `list`. test/unit/table.test.ts checks the two
 * produce identical output.
 */
import { createRequire } from 'node:module';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The cli-table3 rendering (the reference; used for non-ASCII text). */
export function renderTableWithCliTable3(head: string[], rows: string[][]): string {
  // Loaded only when needed; require keeps this function synchronous.
  const Table = createRequire(import.meta.url)('cli-table3') as typeof import('cli-table3');
  const table = new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    wordWrap: true,
  });
  table.push(...rows);
  return table.toString();
}

export function renderTable(head: string[], rows: string[][]): string {
  const all = head.length ? [head, ...rows] : rows;
  const columns = all.reduce((n, r) => Math.max(n, r.length), 0);
  if (columns === 0 || !all.every((r) => r.length === columns && r.every((c) => PRINTABLE_ASCII.test(c)))) {
    return renderTableWithCliTable3(head, rows);
  }
  const widths = Array.from({ length: columns }, (_, i) => all.reduce((w, r) => Math.max(w, (r[i] as string).length), 0));
  const rule = (left: string, mid: string, right: string): string => left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const line = (r: string[]): string => `│${r.map((c, i) => ` ${c.padEnd(widths[i] as number)} `).join('│')}│`;
  return [rule('┌', '┬', '┐'), ...all.map(line), rule('└', '┴', '┘')].join('\n');
}
