/**
 * Tables for lists: compact box borders, no colour. Printable-ASCII tables,
 * newlines allowed (the usual case), are drawn here in well under a millisecond; anything else (wide
 * characters, emoji, tabs) goes to cli-table3, whose width rules we do not
 * re-implement. cli-table3 costs ~35 ms for 50 rows (string-width per cell) plus
 * its load time, which dominated `list`. test/unit/table.test.ts checks the two
 * produce identical output.
 */
import { createRequire } from 'node:module';

// Printable ASCII, plus newlines (cli-table3 draws a multi-line cell as extra lines).
const PLAIN = /^[\x20-\x7e\n]*$/;

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
  if (columns === 0 || !all.every((r) => r.length === columns && r.every((c) => PLAIN.test(c)))) {
    return renderTableWithCliTable3(head, rows);
  }
  const cells = all.map((r) => r.map((c) => c.split('\n')));
  const widths = Array.from({ length: columns }, (_, i) => cells.reduce((w, r) => Math.max(w, ...(r[i] as string[]).map((l) => l.length)), 0));
  const rule = (left: string, mid: string, right: string): string => left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const lines = (r: string[][]): string[] => {
    const height = Math.max(...r.map((c) => c.length));
    return Array.from({ length: height }, (_, k) => `│${r.map((c, i) => ` ${(c[k] ?? '').padEnd(widths[i] as number)} `).join('│')}│`);
  };
  return [rule('┌', '┬', '┐'), ...cells.flatMap(lines), rule('└', '┴', '┘')].join('\n');
}
