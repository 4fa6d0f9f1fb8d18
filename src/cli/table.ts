/**
 * Tables for lists (`list`, `search`), shaped by where stdout goes:
 * - a terminal: compact box borders, no colour, fitted to the terminal's width:
 *   the widest columns are narrowed first and their lines cut with `…`, so a row
 *   never wraps into fragments (a cell may still hold several lines, by design);
 * - anything else (a pipe, a file): tab-separated lines under a header line, no
 *   borders, nothing cut, one line per row (as gh does), for cut/awk/grep.
 * Printable-ASCII boxes are drawn here in well under a millisecond; anything else
 * (wide characters, emoji, tabs) goes to cli-table3, whose width rules we do not
 * re-implement (it and string-width are loaded only then: table-engine.ts). cli-table3 costs
 * ~35 ms for 50 rows plus its load time, which dominated `list`.
 * test/unit/table.test.ts checks the two produce identical output, fitted or not.
 */
import type { OutputShape } from './terminal.js';

// Printable ASCII, plus newlines (a multi-line cell is drawn as extra lines of its row).
const PLAIN = /^[\x20-\x7e\n]*$/;

/** Fitting never narrows a column below this (unless its content is narrower). */
const MIN_COLUMN = 3;
/** The first column (the name people act on) is kept whole up to this width while anything else can give. */
const KEY_COLUMN = 32;

/**
 * Column content widths that fit `width` terminal columns (borders and padding
 * included), given each column's natural width and header width: columns are
 * capped at one common width, as high as fits (water-filling), so narrow columns
 * stay whole and only the widest are cut. What gives last: first the first
 * column (names), then whole headers. When even that cannot fit (a very narrow
 * terminal) the columns go down to MIN_COLUMN and the table is as narrow as it
 * can be.
 */
export function fitColumns(natural: number[], headers: number[], width: number): number[] {
  const available = width - (3 * natural.length + 1);
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  if (width <= 0 || sum(natural) <= available) return natural;
  const key = (i: number, rest: number): number => (i === 0 ? Math.min(natural[0] as number, Math.max(KEY_COLUMN, rest)) : rest);
  const tiers = [
    natural.map((n, i) => key(i, Math.min(n, Math.max(headers[i] ?? 0, MIN_COLUMN)))),
    natural.map((n, i) => key(i, Math.min(n, MIN_COLUMN))),
    natural.map((n) => Math.min(n, MIN_COLUMN)),
  ];
  const floor = tiers.find((t) => sum(t) <= available) ?? (tiers[2] as number[]);
  const widths = (cap: number): number[] => natural.map((n, i) => Math.min(n, Math.max(cap, floor[i] as number)));
  let cap = 0;
  for (let hi = Math.max(...natural); cap < hi; ) {
    const mid = Math.ceil((cap + hi) / 2);
    if (sum(widths(mid)) <= available) cap = mid;
    else hi = mid - 1;
  }
  const out = widths(cap);
  // Hand the columns left over by the integer cap to the cut columns, left to right.
  let spare = available - sum(out);
  for (let i = 0; i < out.length && spare > 0; i++) {
    if ((out[i] as number) < (natural[i] as number)) {
      out[i] = (out[i] as number) + 1;
      spare--;
    }
  }
  return out;
}

/** The cli-table3 rendering (the reference; used for non-ASCII text). `width` 0: no fitting. */
export async function renderTableWithCliTable3(head: string[], rows: string[][], width = 0): Promise<string> {
  const { Table, stringWidth } = await import('./table-engine.js');
  const all = head.length ? [head, ...rows] : rows;
  const columns = all.reduce((n, r) => Math.max(n, r.length), 0);
  const measure = (cell: string | undefined): number => Math.max(0, ...(cell ?? '').split('\n').map((l) => stringWidth(l)));
  const natural = Array.from({ length: columns }, (_, i) => Math.max(0, ...all.map((r) => measure(r[i]))));
  const fitted = fitColumns(
    natural,
    Array.from({ length: columns }, (_, i) => measure(head[i])),
    width,
  );
  const cut = fitted.some((w, i) => w < (natural[i] as number));
  const table = new Table({
    head,
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    // Fitted: fixed widths and lines cut with … (wrapping would make rows taller instead).
    ...(cut ? { colWidths: fitted.map((w) => w + 2), wordWrap: false } : { wordWrap: true }),
  });
  table.push(...rows);
  return table.toString();
}

/** A box table, fitted to `width` terminal columns (0: as wide as the content). */
export async function renderTable(head: string[], rows: string[][], width = 0): Promise<string> {
  const all = head.length ? [head, ...rows] : rows;
  const columns = all.reduce((n, r) => Math.max(n, r.length), 0);
  if (columns === 0 || !all.every((r) => r.length === columns && r.every((c) => PLAIN.test(c)))) {
    return renderTableWithCliTable3(head, rows, width);
  }
  const cells = all.map((r) => r.map((c) => c.split('\n')));
  const natural = Array.from({ length: columns }, (_, i) => cells.reduce((w, r) => Math.max(w, ...(r[i] as string[]).map((l) => l.length)), 0));
  const widths = fitColumns(
    natural,
    head.map((h) => Math.max(...h.split('\n').map((l) => l.length))),
    width,
  );
  const fit = (line: string, w: number): string => (line.length > w ? `${line.slice(0, Math.max(0, w - 1))}…` : line).padEnd(w);
  const rule = (left: string, mid: string, right: string): string => left + widths.map((w) => '─'.repeat(w + 2)).join(mid) + right;
  const lines = (r: string[][]): string[] => {
    const height = Math.max(...r.map((c) => c.length));
    return Array.from({ length: height }, (_, k) => `│${r.map((c, i) => ` ${fit(c[k] ?? '', widths[i] as number)} `).join('│')}│`);
  };
  return [rule('┌', '┬', '┐'), ...cells.flatMap(lines), rule('└', '┴', '┘')].join('\n');
}

/** Tab-separated rows under a header: tabs and newlines inside a cell become spaces and ", ". */
export function renderTsv(head: string[], rows: string[][]): string {
  const cell = (c: string): string =>
    c
      .replace(/\t/g, ' ')
      .split('\n')
      .filter((l) => l !== '')
      .join(', ');
  return [head, ...rows].map((r) => r.map(cell).join('\t')).join('\n');
}

/** `text` folded at spaces into lines of at most `width` columns (a longer word is split, after a `-` when it can); its own newlines kept. */
function wrapCell(text: string, width: number): string {
  const w = Math.max(1, width);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let current = '';
    for (const word of line.split(' ')) {
      let rest = word;
      if (current !== '' && current.length + 1 + rest.length <= w) {
        current += ` ${rest}`;
        continue;
      }
      if (current !== '') out.push(current);
      while (rest.length > w) {
        // A long word (a command's spec) breaks after a - / @ . _ when one is near enough, else anywhere.
        const soft = Math.max(...['-', '/', '@', '.', '_'].map((c) => rest.lastIndexOf(c, w - 1)));
        const cut = soft >= w / 2 ? soft + 1 : w;
        out.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      current = rest;
    }
    out.push(current);
  }
  return out.join('\n');
}

/**
 * The table for this stdout: fitted boxes on a terminal, tab-separated lines otherwise.
 * `wrap`: the column whose cells are folded onto more lines when the terminal is too
 * narrow for them, instead of being cut with `…` (a status that names a command must
 * be read whole).
 */
export async function renderRows(head: string[], rows: string[][], out: OutputShape, options: { wrap?: number } = {}): Promise<string> {
  if (!out.tty) return renderTsv(head, rows);
  const col = options.wrap;
  if (col === undefined || out.width <= 0) return renderTable(head, rows, out.width);
  const measure = (cell: string | undefined): number => Math.max(0, ...(cell ?? '').split('\n').map((l) => l.length));
  const all = [head, ...rows];
  const natural = head.map((_, i) => Math.max(...all.map((r) => measure(r[i]))));
  const width = fitColumns(
    natural,
    head.map((h) => measure(h)),
    out.width,
  )[col];
  if (width === undefined || width >= (natural[col] as number)) return renderTable(head, rows, out.width);
  const folded = rows.map((r) => r.map((c, i) => (i === col ? wrapCell(c, width) : c)));
  return renderTable(head, folded, out.width);
}
