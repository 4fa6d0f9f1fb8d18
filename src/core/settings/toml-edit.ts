/**
 * Text-level TOML editing for files the user owns (settings.toml, connections.toml).
 * smol-toml parses but drops comments and layout, so edits are made on the text:
 * scanTomlLines splits a *valid* document into statements (blank, comment, table
 * header, key/value with its exact byte span, multi-line strings and arrays
 * included), callers splice only the spans they own, and the result is re-parsed
 * and compared with what was intended before anything is written.
 */
import { readRegularFileSync } from '../fs/read-regular-file.js';
import { parse as parseToml } from 'smol-toml';
import { formatPosition, tomlErrorAt, type TomlPosition } from '../text/toml-position.js';

export type TomlTable = Record<string, unknown>;

export interface TomlLine {
  kind: 'blank' | 'comment' | 'header' | 'kv';
  /** Offset of the first character of the statement's first line. */
  start: number;
  /** Offset just past the statement's final newline (or the end of the text). */
  end: number;
  /** header: table path; kv: dotted key path. */
  path: string[];
  /** header: `[[...]]` (an array-of-tables element). */
  array: boolean;
  /** kv: the value's exact span (without surrounding whitespace or comment). */
  valueStart: number;
  valueEnd: number;
  /** Leading whitespace of the first line. */
  indent: string;
}

/** Parse a whole document; integers beyond 2^53 become bigints instead of failing. */
export function parseTomlText(text: string): TomlTable {
  return parseToml(text, { integersAsBigInt: 'asNeeded' }) as TomlTable;
}

/** The line ending a document mostly uses, so inserted lines match. */
function detectEol(text: string): '\n' | '\r\n' {
  const crlf = text.split('\r\n').length - 1;
  const lf = text.split('\n').length - 1 - crlf;
  return crlf > lf ? '\r\n' : '\n';
}

/** Bare keys joined by dots (`a.b-c . d`): no quotes, no escapes, nothing for a parser to resolve. */
const BARE_DOTTED_KEY_RE = /^[A-Za-z0-9_-]+(?:[ \t]*\.[ \t]*[A-Za-z0-9_-]+)*$/;

/**
 * Resolve key text (`a."b c".d`) to its path. Bare dotted keys, nearly every key of a
 * settings file, are their parts; anything quoted is read by the real parser.
 */
function keyPath(keyText: string): string[] {
  if (BARE_DOTTED_KEY_RE.test(keyText)) return keyText.split('.').map((part) => part.trim());
  let node: unknown = parseToml(`${keyText} = 0`);
  const path: string[] = [];
  while (typeof node === 'object' && node !== null) {
    const keys = Object.keys(node);
    if (keys.length !== 1) break;
    const k = keys[0] as string;
    path.push(k);
    node = (node as Record<string, unknown>)[k];
  }
  return path;
}

class Scanner {
  constructor(
    readonly text: string,
    public pos = 0,
  ) {}

  get ch(): string {
    return this.text[this.pos] ?? '';
  }

  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  skipSpaces(): void {
    while (this.ch === ' ' || this.ch === '\t') this.pos++;
  }

  /** Past the next newline (or to the end). */
  skipLine(): void {
    const nl = this.text.indexOf('\n', this.pos);
    this.pos = nl === -1 ? this.text.length : nl + 1;
  }

  /** A quoted string of any of the four kinds starting at pos. */
  skipString(): void {
    const t = this.text;
    if (this.startsWith('"""') || this.startsWith("'''")) {
      const q = t.slice(this.pos, this.pos + 3);
      const basic = q === '"""';
      this.pos += 3;
      for (;;) {
        if (this.pos >= t.length) throw new Error('unterminated multi-line string');
        if (basic && this.ch === '\\') {
          this.pos += 2;
          continue;
        }
        if (this.startsWith(q)) {
          this.pos += 3;
          // Up to two quote characters may sit right before the closing delimiter.
          let extra = 0;
          while (extra < 2 && this.ch === q[0]) {
            this.pos++;
            extra++;
          }
          return;
        }
        this.pos++;
      }
    }
    const q = this.ch;
    this.pos++;
    for (;;) {
      if (this.pos >= t.length || this.ch === '\n') throw new Error('unterminated string');
      if (q === '"' && this.ch === '\\') {
        this.pos += 2;
        continue;
      }
      if (this.ch === q) {
        this.pos++;
        return;
      }
      this.pos++;
    }
  }

  /** Key text up to (not including) `stop` outside quotes. */
  readKeyUntil(stop: string): string {
    const from = this.pos;
    while (this.pos < this.text.length && this.ch !== stop) {
      if (this.ch === '"' || this.ch === "'") this.skipString();
      else if (this.ch === '\n') throw new Error('key runs past the end of the line');
      else this.pos++;
    }
    return this.text.slice(from, this.pos);
  }

  /** One value: strings, arrays and inline tables may span lines. Returns its end. */
  skipValue(): number {
    const c = this.ch;
    if (c === '"' || c === "'") {
      this.skipString();
      return this.pos;
    }
    if (c === '[' || c === '{') {
      let depth = 0;
      for (;;) {
        if (this.pos >= this.text.length) throw new Error('unterminated array or inline table');
        const d = this.ch;
        if (d === '"' || d === "'") {
          this.skipString();
          continue;
        }
        if (d === '#') {
          const nl = this.text.indexOf('\n', this.pos);
          this.pos = nl === -1 ? this.text.length : nl;
          continue;
        }
        this.pos++;
        if (d === '[' || d === '{') depth++;
        else if (d === ']' || d === '}') {
          depth--;
          if (depth === 0) return this.pos;
        }
      }
    }
    // Scalars (numbers, booleans, dates; a date-time may contain one space).
    const from = this.pos;
    while (this.pos < this.text.length && this.ch !== '\n' && this.ch !== '#') this.pos++;
    let end = this.pos;
    while (end > from && /[ \t\r]/.test(this.text[end - 1] as string)) end--;
    return end;
  }
}

/**
 * One statement, built as one literal: spreading a shared base and overriding its fields
 * made each statement a slow object copy, the bulk of a scan.
 */
function tomlLine(
  kind: TomlLine['kind'],
  start: number,
  end: number,
  indent: string,
  path: string[] = [],
  array = false,
  valueStart = -1,
  valueEnd = -1,
): TomlLine {
  return { start, path, array, valueStart, valueEnd, indent, kind, end };
}

/**
 * Split a valid TOML document into statements. Call only on text that smol-toml
 * parsed: the scanner trusts the grammar and throws on anything it cannot follow.
 */
export function scanTomlLines(text: string): TomlLine[] {
  const s = new Scanner(text);
  const out: TomlLine[] = [];
  while (s.pos < text.length) {
    const start = s.pos;
    // A byte-order mark is allowed before the first statement; keep it as indentation.
    if (start === 0 && text.charCodeAt(0) === 0xfeff) s.pos = 1;
    s.skipSpaces();
    const indent = text.slice(start, s.pos);
    const c = s.ch;
    if (c === '\n' || (c === '\r' && text[s.pos + 1] === '\n') || c === '') {
      s.skipLine();
      out.push(tomlLine('blank', start, s.pos, indent));
    } else if (c === '#') {
      s.skipLine();
      out.push(tomlLine('comment', start, s.pos, indent));
    } else if (c === '[') {
      const array = text[s.pos + 1] === '[';
      s.pos += array ? 2 : 1;
      const keyText = s.readKeyUntil(']');
      s.skipLine();
      out.push(tomlLine('header', start, s.pos, indent, keyPath(keyText.trim()), array));
    } else {
      const keyText = s.readKeyUntil('=');
      s.pos++; // '='
      s.skipSpaces();
      const valueStart = s.pos;
      const valueEnd = s.skipValue();
      s.skipLine();
      out.push(tomlLine('kv', start, s.pos, indent, keyPath(keyText.trim()), false, valueStart, valueEnd));
    }
  }
  return out;
}

/** A text replacement on the original document. */
/**
 * Read a state file as text for editing: '' when missing; `corrupt(why)` when it is
 * not UTF-8 (a BOM is kept, so an edit writes every byte outside ours back as it was).
 * Anything but a regular file (or a symlink to one) is refused, naming `what` and the file.
 */
export async function loadEditableText(file: string, corrupt: (why: string) => Error, what = 'The file'): Promise<string> {
  const bytes = readRegularFileSync(file, what);
  if (bytes === undefined) return '';
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw corrupt('it is not UTF-8 text');
  }
}

/** A TOML document ready for byte-precise editing: its parse, its line map and its line ending. */
export interface EditableToml {
  text: string;
  data: TomlTable;
  lines: TomlLine[];
  eol: '\n' | '\r\n';
}

/**
 * Parse `text` for editing. `corrupt(why)` builds the caller's error (it names the
 * file). No parser cause is attached: its code frame would quote the offending
 * line, and users paste tokens into these files.
 */
export function parseEditableToml(text: string, file: string, corrupt: (why: string, at?: TomlPosition) => Error): EditableToml {
  if (text.includes('\0')) throw corrupt('it contains NUL bytes (a torn write?)');
  let data: TomlTable;
  try {
    data = parseTomlText(text);
  } catch (e) {
    // Described by position only: the parser's code frame could quote a value.
    const { reason, at } = tomlErrorAt(e);
    throw corrupt(at ? `not valid TOML at line ${at.line}, column ${at.column} (${formatPosition(file, at)}): ${reason}` : `not valid TOML: ${reason}`, at);
  }
  let lines: TomlLine[];
  try {
    lines = scanTomlLines(text);
  } catch (e) {
    throw corrupt(`yep-ext could not follow its layout (${(e as Error).message.split('\n')[0]})`);
  }
  return { text, data, lines, eol: detectEol(text) };
}

export interface Splice {
  start: number;
  end: number;
  text: string;
}

/** Apply non-overlapping splices (any order) to `text`. */
export function applySplices(text: string, splices: Splice[]): string {
  const sorted = [...splices].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const sp of sorted) out = out.slice(0, sp.start) + sp.text + out.slice(sp.end);
  return out;
}

const BARE_KEY_RE = /^[A-Za-z0-9_-]+$/;
const LONE_SURROGATE_RE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A TOML basic string. JSON escapes are TOML escapes; DEL must be escaped too. */
export function formatTomlString(s: string): string {
  if (LONE_SURROGATE_RE.test(s)) throw new TypeError('string is not valid Unicode (lone surrogate)');
  return JSON.stringify(s).replace(/\u007f/g, '\\u007f');
}

export function formatTomlKey(key: string): string {
  return BARE_KEY_RE.test(key) ? key : formatTomlString(key);
}

/** Serialise one value as inline TOML (arrays and tables inline). */
export function formatTomlValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return formatTomlString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'number':
      if (Number.isNaN(value)) return 'nan';
      if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) return value.toExponential();
      return String(value);
    case 'object': {
      if (value === null) throw new TypeError('TOML has no null');
      if (Array.isArray(value)) return `[${value.map(formatTomlValue).join(', ')}]`;
      if (value instanceof Date) throw new TypeError('dates are not supported as config values');
      const entries = Object.entries(value);
      return entries.length === 0 ? '{}' : `{ ${entries.map(([k, v]) => `${formatTomlKey(k)} = ${formatTomlValue(v)}`).join(', ')} }`;
    }
    default:
      throw new TypeError(`cannot write a ${typeof value} to TOML`);
  }
}

/**
 * An order-insensitive canonical string for parsed TOML (table key order carries
 * no meaning; array order does). Used to prove an edit changed only what it meant to.
 */
export function canonicalToml(value: unknown): string {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'bigint') return { $bigint: v.toString() };
    if (typeof v === 'number') return Number.isFinite(v) ? v : { $number: String(v) };
    if (v instanceof Date) return { $date: v.toISOString() };
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) {
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) o[k] = walk((v as Record<string, unknown>)[k]);
      return o;
    }
    return v;
  };
  return JSON.stringify(walk(value));
}

/**
 * Remove the statements lines[first..last] plus one separating blank line (the
 * one before, else the one after), so insert-then-remove restores the text.
 */
export function removalSplice(lines: TomlLine[], first: number, last: number): Splice {
  const a = lines[first] as TomlLine;
  const b = lines[last] as TomlLine;
  const before = lines[first - 1];
  const after = lines[last + 1];
  if (before?.kind === 'blank') return { start: before.start, end: b.end, text: '' };
  if (after?.kind === 'blank') return { start: a.start, end: after.end, text: '' };
  return { start: a.start, end: b.end, text: '' };
}

/**
 * Insert a block of whole lines (each ending in `eol`) at `pos`, a line boundary
 * or the end of the text, separated from what precedes it by one blank line.
 */
export function insertionSplice(text: string, pos: number, eol: string, block: string): Splice {
  if (pos === 0) return { start: 0, end: 0, text: block };
  let prefix = text[pos - 1] === '\n' ? '' : eol;
  const before = (text.slice(0, pos) + prefix).replace(/\r?\n$/, '');
  const previousLineBlank = before === '' || before.endsWith('\n');
  if (!previousLineBlank) prefix += eol;
  return { start: pos, end: pos, text: prefix + block };
}
