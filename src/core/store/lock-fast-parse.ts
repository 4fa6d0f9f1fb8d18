/**
 * A line-based reader for extensions.lock in the shape yep-ext writes it (and the
 * host, whose writer is the same TOML emitter shape): `[[extensions]]` tables,
 * one level of `[extensions.<sub>]` tables, and `key = value` lines whose value is
 * a basic string, a safe integer, a boolean or `[]`. Every command reads the lock, and
 * smol-toml, running cold, costs a command like `list` a visible share of its start-up;
 * this reader costs a small fraction of that.
 *
 * It returns undefined for anything outside that subset (other table headers,
 * dotted or quoted keys, arrays, inline tables, floats, dates, literal strings,
 * trailing comments, duplicate keys, odd escapes, ...), and the caller parses the
 * text with smol-toml instead: the result is always what smol-toml returns, down
 * to the null-prototype tables (test/unit/lock-fast-parse.test.ts compares them).
 */

type Table = Record<string, unknown>;

const KV = /^[ \t]*([A-Za-z0-9_-]+)[ \t]*=[ \t]*([^\r\n]*?)[ \t]*$/;
const ARRAY_HEADER = /^[ \t]*\[\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\]\][ \t]*$/;
const SUB_HEADER = /^[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\.[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*$/;
const BLANK_OR_COMMENT = /^[ \t]*(?:#[^\u0000-\u0008\u000a-\u001f\u007f]*)?$/;
// A basic string whose escapes are the ones TOML and JSON share; no raw control
// characters (TOML forbids them; JSON.parse would reject a raw tab TOML allows).
const BASIC_STRING = /^"(?:[^"\\\u0000-\u001f\u007f]|\\["\\bfnrt]|\\u[0-9A-Fa-f]{4})*"$/;
const SAFE_INT = /^(?:0|[+-]?[1-9][0-9]{0,14})$/;

function decodeValue(raw: string): { value: unknown } | undefined {
  if (raw === 'true') return { value: true };
  if (raw === 'false') return { value: false };
  if (raw === '[]') return { value: [] }; // an empty lock: `extensions = []`
  if (SAFE_INT.test(raw)) return { value: Number(raw) };
  if (raw.startsWith('"') && BASIC_STRING.test(raw)) {
    const s = JSON.parse(raw) as string;
    // \u escapes of surrogates are invalid in TOML (smol-toml rejects them).
    if (/[\ud800-\udfff]/.test(s) && /\\u[dD][89a-fA-F]/.test(raw)) return undefined;
    return { value: s };
  }
  return undefined;
}

function setOnce(table: Table, key: string, value: unknown): boolean {
  if (key === '__proto__' || Object.hasOwn(table, key)) return false;
  table[key] = value;
  return true;
}

/** The lock text as smol-toml would parse it, or undefined: "parse it with smol-toml". */
export function parseLockTomlFast(text: string): Table | undefined {
  const root: Table = Object.create(null) as Table;
  let current: Table = root;
  let arrayName: string | undefined;
  // Sub-tables already opened in the current array element (a second [x.source] is an error).
  let opened = new Set<string>();
  for (let line of text.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (BLANK_OR_COMMENT.test(line)) continue;
    let m = KV.exec(line);
    if (m) {
      const decoded = decodeValue(m[2] as string);
      if (!decoded || !setOnce(current, m[1] as string, decoded.value)) return undefined;
      continue;
    }
    m = ARRAY_HEADER.exec(line);
    if (m) {
      const name = m[1] as string;
      if (arrayName !== undefined && name !== arrayName) return undefined;
      let list = root[name];
      if (list === undefined) {
        if (name === '__proto__') return undefined;
        list = [];
        root[name] = list;
      } else if (!Array.isArray(list) || arrayName === undefined) {
        return undefined;
      }
      arrayName = name;
      current = Object.create(null) as Table;
      (list as Table[]).push(current);
      opened = new Set();
      continue;
    }
    m = SUB_HEADER.exec(line);
    if (m) {
      const list = root[m[1] as string];
      const sub = m[2] as string;
      if (m[1] !== arrayName || !Array.isArray(list) || opened.has(sub)) return undefined;
      const element = list[list.length - 1] as Table;
      const table = Object.create(null) as Table;
      if (!setOnce(element, sub, table)) return undefined;
      opened.add(sub);
      current = table;
      continue;
    }
    return undefined;
  }
  return root;
}
