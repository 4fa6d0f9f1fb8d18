/**
 * A changed text, as lines a person reads in a terminal: the lines removed (`-`) and
 * added (`+`) with one line of context, long lines cut around the first changed
 * character, and no more than a screenful. Pure. Every piece of text passes sanitize()
 * after it is cut, so the text of a package cannot move the cursor or hide a line.
 */
import { redactUrls } from '../core/text/redact.js';
import { sanitize } from '../core/text/sanitize.js';

export interface TextDiffLine {
  sign: '-' | '+' | ' ' | '…';
  text: string;
}

export interface TextDiffOptions {
  /** Most diff lines shown (the rest are counted). */
  maxLines?: number;
  /** Most characters of one line shown. */
  width?: number;
}

/** Above this many cells the line matching gives up and shows the middle as replaced. */
const LCS_LIMIT = 250_000;

type Op = { sign: '-' | '+' | ' '; line: string };

/** The edit script from `a` to `b` by longest common subsequence, common head and tail first. */
function editScript(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const middle: Op[] = [];
  if (x.length * y.length > LCS_LIMIT) {
    middle.push(...x.map((line): Op => ({ sign: '-', line })), ...y.map((line): Op => ({ sign: '+', line })));
  } else {
    // lcs[i][j]: the common subsequence length of x[i..] and y[j..].
    const lcs = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
    for (let i = x.length - 1; i >= 0; i--)
      for (let j = y.length - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        middle.push({ sign: ' ', line: x[i]! });
        i++;
        j++;
      } else if (j >= y.length || (i < x.length && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) middle.push({ sign: '-', line: x[i++]! });
      else middle.push({ sign: '+', line: y[j++]! });
    }
  }
  return [...a.slice(0, head).map((line): Op => ({ sign: ' ', line })), ...middle, ...b.slice(b.length - tail).map((line): Op => ({ sign: ' ', line }))];
}

/**
 * `line` cut to `width` characters from `start`, with `…` where text was left out and, after
 * the cut, how many characters follow: a line padded out of sight (blanks, then more words)
 * still says that it goes on.
 */
function cut(line: string, start: number, width: number): string {
  const chars = [...line];
  const from = Math.max(0, Math.min(start, chars.length - width));
  const shown = chars.slice(from, from + width).join('');
  const rest = chars.length - from - width;
  return `${from > 0 ? '…' : ''}${shown}${rest > 0 ? `…(+${rest} characters)` : ''}`;
}

/**
 * A changed line's trailing blanks, counted in words: a terminal shows none of them, and a
 * change that only adds some would otherwise read as two identical lines.
 */
function trailingBlanksShown(text: string): string {
  const m = /[ \t]+$/.exec(text);
  if (!m) return text;
  const n = m[0].length;
  return `${text.slice(0, m.index)}${n === text.length ? '' : ' '}(+${n} trailing blank${n === 1 ? '' : 's'})`;
}

/** Where two lines first differ (in characters). */
function firstDifference(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}

/**
 * The lines that show how `before` became `after` (`before` undefined: no old text is
 * known, so `after` is shown whole as added). Context lines are kept next to a change
 * only; a run of unchanged lines is one `…` line.
 */
export function textDiff(before: string | undefined, after: string, options: TextDiffOptions = {}): TextDiffLine[] {
  const maxLines = options.maxLines ?? 12;
  const width = options.width ?? 100;
  const ops = before === undefined ? after.split('\n').map((line): Op => ({ sign: '+', line })) : editScript(before.split('\n'), after.split('\n'));
  const changedAt = (i: number) => ops[i] !== undefined && ops[i]!.sign !== ' ';
  const shown: TextDiffLine[] = [];
  let hidden = 0;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    if (shown.length >= maxLines) {
      if (op.sign !== ' ') hidden++;
      continue;
    }
    // An unchanged line is context next to a change; a run of two or more others is one `…`.
    const far = (k: number) => ops[k]?.sign === ' ' && !changedAt(k - 1) && !changedAt(k + 1);
    if (far(i) && (far(i - 1) || far(i + 1))) {
      if (shown.at(-1)?.sign !== '…') shown.push({ sign: '…', text: '' });
      continue;
    }
    // A line replaced by one other line: both are cut at the same place, around their first difference.
    const other =
      op.sign === '-' && ops[i + 1]?.sign === '+' && ops[i - 1]?.sign !== '-' && ops[i + 2]?.sign !== '+'
        ? ops[i + 1]
        : op.sign === '+' && ops[i - 1]?.sign === '-' && ops[i - 2]?.sign !== '-' && ops[i + 1]?.sign !== '+'
          ? ops[i - 1]
          : undefined;
    // Redacted whole before it is cut: a cut URL would keep part of its userinfo out of reach of redaction.
    const line = redactUrls(op.line);
    const start = other ? Math.max(0, firstDifference(line, redactUrls(other.line)) - Math.floor(width / 4)) : 0;
    const text = sanitize(cut(line, start, width), { max: width * 2 });
    shown.push({ sign: op.sign, text: op.sign === ' ' ? text : trailingBlanksShown(text) });
  }
  if (hidden > 0) shown.push({ sign: '…', text: `${hidden} more changed line${hidden === 1 ? '' : 's'} (the whole text is in --json)` });
  return shown;
}
