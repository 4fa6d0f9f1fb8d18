/**
 * Tables for lists (`list`, `search`), shaped by where stdout goes:
 * - a terminal: borderless columns two spaces apart under a header line (as gh and
 *   cargo print lists: borders cost a third of an 80-column terminal), fitted to
 *   the terminal's width: the widest columns are narrowed first and their lines cut
 *   with `…`, so a row never wraps into fragments (a cell may still hold several
 *   lines, by design);
 * - anything else (a pipe, a file): tab-separated lines under a header line,
 *   nothing cut, one line per row (as gh does), for cut/awk/grep.
 * Widths are display columns: printable ASCII is measured by length; anything else
 * (wide characters, emoji) by string-width, loaded only then (table-engine.ts).
 */
import type { OutputShape } from './terminal.js';

// Printable ASCII, plus newlines (a multi-line cell is drawn as extra lines of its row).
const PLAIN = /^[\x20-\x7e\n]*$/;

/** Fitting never narrows a column below this (unless its content is narrower). */
const MIN_COLUMN = 3;
/** The first column (the name people act on) is kept whole up to this width while anything else can give. */
const KEY_COLUMN = 32;
/** Between two columns. */
const GAP = '  ';

/**
 * Column content widths that fit `width` terminal columns (the gaps between
 * columns included), given each column's natural width and header width: columns
 * are capped at one common width, as high as fits (water-filling), so narrow
 * columns stay whole and only the widest are cut. What gives last: first the first
 * column (names), then whole headers. When even that cannot fit (a very narrow
 * terminal) the columns go down to MIN_COLUMN and the table is as narrow as it
 * can be.
 */
export function fitColumns(natural: number[], headers: number[], width: number): number[] {
  const available = width - GAP.length * Math.max(0, natural.length - 1);
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

/** How text is measured and cut in display columns. */
interface Measure {
  width(text: string): number;
  /** The longest start of `text` at most `columns` wide. */
  head(text: string, columns: number): string;
}

const ASCII: Measure = { width: (t) => t.length, head: (t, n) => t.slice(0, n) };

/** Display widths of any text (string-width's rules), cutting between whole characters. */
async function displayMeasure(): Promise<Measure> {
  const { stringWidth } = await import('./table-engine.js');
  return {
    width: (t) => stringWidth(t),
    head(t, n) {
      let out = '';
      let used = 0;
      for (const ch of t) {
        const w = stringWidth(ch);
        if (used + w > n) break;
        out += ch;
        used += w;
      }
      return out;
    },
  };
}

/** Borderless columns under a header line, fitted to `width` terminal columns (0: as wide as the content). */
export async function renderTable(head: string[], rows: string[][], width = 0): Promise<string> {
  // A tab would jump to the terminal's next tab stop: it is a space here.
  const all = (head.length ? [head, ...rows] : rows).map((r) => r.map((c) => c.replace(/\t/g, ' ')));
  const columns = all.reduce((n, r) => Math.max(n, r.length), 0);
  if (columns === 0) return '';
  const m = all.every((r) => r.every((c) => PLAIN.test(c))) ? ASCII : await displayMeasure();
  const cells = all.map((r) => Array.from({ length: columns }, (_, i) => (r[i] ?? '').split('\n')));
  const natural = Array.from({ length: columns }, (_, i) => cells.reduce((w, r) => Math.max(w, ...(r[i] as string[]).map((l) => m.width(l))), 0));
  const widths = fitColumns(
    natural,
    Array.from({ length: columns }, (_, i) => Math.max(0, ...(head[i] ?? '').split('\n').map((l) => m.width(l)))),
    width,
  );
  const fitCell = (line: string, w: number): string => {
    const cut = m.width(line) > w ? `${m.head(line, Math.max(0, w - 1))}…` : line;
    return cut + ' '.repeat(Math.max(0, w - m.width(cut)));
  };
  const lines = (r: string[][]): string[] => {
    const height = Math.max(...r.map((c) => c.length));
    return Array.from({ length: height }, (_, k) =>
      r
        .map((c, i) => fitCell(c[k] ?? '', widths[i] as number))
        .join(GAP)
        .trimEnd(),
    );
  };
  return cells.flatMap(lines).join('\n');
}

/** Tab-separated rows under a header: tabs and newlines inside a cell become spaces and ", " (a space before a line in parentheses, which is a note on the one before). */
export function renderTsv(head: string[], rows: string[][]): string {
  const cell = (c: string): string =>
    c
      .replace(/\t/g, ' ')
      .split('\n')
      .filter((l) => l !== '')
      .map((l, i) => (i === 0 ? l : l.startsWith('(') ? ` ${l}` : `, ${l}`))
      .join('');
  return [head, ...rows].map((r) => r.map(cell).join('\t')).join('\n');
}

/**
 * The words of a cell's line: a `quoted command` (with what sticks to it, a comma) is
 * one word when it fits `w`, so a command to copy is not folded in two; else its own words.
 */
function cellWords(line: string, w: number): string[] {
  return line.split(/ (?=(?:[^`]*`[^`]*`)*[^`]*$)/).flatMap((word) => (word.length > w && word.includes(' ') ? word.split(' ') : [word]));
}

/** `text` folded at spaces into lines of at most `width` columns (a longer word is split, after a `-` when it can); its own newlines kept. */
export function wrapCell(text: string, width: number): string {
  const w = Math.max(1, width);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let current = '';
    for (const word of cellWords(line, w)) {
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
 * The table for this stdout: fitted columns on a terminal, tab-separated lines otherwise.
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
