import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { canonicalToml, formatTomlKey, formatTomlValue, scanTomlLines } from '../../src/core/settings/toml-edit.js';

const DOCS: Record<string, string> = {
  plain: 'a = 1\nb = "two"\n',
  'headers with quotes and spaces': '[ "a.b" . c ]\nx = 1\n[[ arr ]]\n[ "]" ]\ny = 2\n',
  'multi-line basic with quotes at the end': 'a = """x ""\ny"""""\nb = 2\n',
  'multi-line literal with quotes': "a = '''it''s'''\nb = '''\n\"\"\"\n'''\n",
  'line continuation': 'a = """\\\n   folded \\\n   text"""\nb = 1\n',
  'arrays across lines with comments and brackets in strings': 'a = [\n  "]", # ] in a comment\n  [1, [2]],\n  { x = "}" },\n]\nb = 1\n',
  'inline table across lines (TOML 1.1)': 'a = { x = 1,\n  y = [1,\n 2] }\nb = true\n',
  'dates with a space': 'd = 1979-05-27 07:32:00Z # when\nt = 07:32:00\n',
  'dotted and quoted keys': 'a.b."c d" = 1\n"e=f" = 2\n\'g#h\' = 3\n',
  'bare dotted keys with spaces': '[ t .\tu ]\nx . y-z = 1\n__proto__ = 2\n1.2 = 3\n',
  CRLF: 'a = 1\r\n\r\n[t]\r\nb = "x"\r\n# c\r\n',
  'no trailing newline': '[t]\nx = [1,\n2]',
  'comments and blanks': '# one\n\n   # indented\n\t\na = 1 # tail\n',
  BOM: '\ufeffa = 1\n',
};

describe('scanTomlLines', () => {
  it.each(Object.entries(DOCS))('%s: statements tile the text and every value span parses', (_name, text) => {
    expect(() => parse(text)).not.toThrow();
    const lines = scanTomlLines(text);
    expect(lines.map((l) => text.slice(l.start, l.end)).join('')).toBe(text);
    for (let i = 1; i < lines.length; i++) expect(lines[i]!.start).toBe(lines[i - 1]!.end);
    for (const l of lines.filter((x) => x.kind === 'kv')) {
      const valueText = text.slice(l.valueStart, l.valueEnd);
      expect(() => parse(`v = ${valueText}`), valueText).not.toThrow();
    }
  });

  it('names key paths the way the parser does', () => {
    const lines = scanTomlLines(DOCS['headers with quotes and spaces']!);
    expect(lines.filter((l) => l.kind === 'header').map((l) => [l.path, l.array])).toEqual([
      [['a.b', 'c'], false],
      [['arr'], true],
      [[']'], false],
    ]);
    expect(scanTomlLines(DOCS['dotted and quoted keys']!).map((l) => l.path)).toEqual([['a', 'b', 'c d'], ['e=f'], ['g#h']]);
    expect(scanTomlLines(DOCS['bare dotted keys with spaces']!).map((l) => l.path)).toEqual([['t', 'u'], ['x', 'y-z'], ['__proto__'], ['1', '2']]);
  });

  it('value spans exclude surrounding whitespace and comments', () => {
    const text = 'd = 1979-05-27 07:32:00Z   # when\n';
    const [l] = scanTomlLines(text);
    expect(text.slice(l!.valueStart, l!.valueEnd)).toBe('1979-05-27 07:32:00Z');
  });

  it('a multi-line value is one statement', () => {
    const kinds = scanTomlLines(DOCS['arrays across lines with comments and brackets in strings']!).map((l) => l.kind);
    expect(kinds).toEqual(['kv', 'kv']);
  });
});

describe('formatTomlValue round-trips through the parser', () => {
  const values: unknown[] = [
    '',
    'plain',
    'quote " backslash \\ \n \t \r \b \f \u0000 \u0007 \u007f \u001b',
    'unicode é 日本 👋 \u2028',
    0,
    -12,
    3.5,
    1e-7,
    1e21,
    true,
    false,
    [],
    [1, 'a', [true]],
    { a: 1, 'b c': ['x'], nested: { k: 'v' } },
  ];
  it.each(values.map((v) => [JSON.stringify(v), v]))('%s', (_label, v) => {
    const text = `v = ${formatTomlValue(v)}\n`;
    expect((parse(text) as { v: unknown }).v).toEqual(v);
  });

  it('refuses what TOML cannot hold', () => {
    expect(() => formatTomlValue(null)).toThrow(/null/);
    expect(() => formatTomlValue('\ud800')).toThrow(/surrogate/);
    expect(() => formatTomlValue(undefined)).toThrow();
  });

  it('quotes keys only when needed', () => {
    expect(formatTomlKey('bare_key-1')).toBe('bare_key-1');
    expect(formatTomlKey('ext:x')).toBe('"ext:x"');
  });

  it('canonical form ignores table key order, not array order', () => {
    expect(canonicalToml({ a: 1, b: [1, 2] })).toBe(canonicalToml({ b: [1, 2], a: 1 }));
    expect(canonicalToml({ b: [1, 2] })).not.toBe(canonicalToml({ b: [2, 1] }));
    expect(canonicalToml(9007199254740993n)).not.toBe(canonicalToml(9007199254740992));
  });
});
