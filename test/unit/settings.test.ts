import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { applySettingsEdit, readSettingsFromText, type SettingsEdit } from '../../src/core/settings/settings.js';
import { YepError } from '../../src/core/errors.js';

/** The reading without its instance list (asserted on its own where it matters). */
const read = (text: string) => {
  const { instances: _i, ...rest } = readSettingsFromText(text, 'logfire');
  return rest;
};

/**
 * Fixtures are `before + entry + after`, where `entry` is the ext:logfire table
 * (empty when the file has none). Any edit of the entry must leave `before` and
 * `after` byte for byte: the result must start with one and end with the other.
 */
interface Fixture {
  name: string;
  before: string;
  entry: string;
  after: string;
}

const OTHER_STUFF = `# yolop settings — hand-written, keep my comments!
theme = "dark"      # trailing comment
model.name = "big"  # dotted key
limits = { tokens = 1000, "odd key" = true }
started = 1979-05-27 07:32:00Z

[[capabilities]]
ref = "lsp"   # a built-in
servers = [
  "rust-analyzer", # comment inside an array
  "pyright ] [ tricky",
]
[capabilities.overrides]
timeout = 30

`;

const PROFILES = `

# --- profiles ---
[profiles.work]
model = "huge"
notes = """
[[capabilities]]
ref = "ext:logfire"
this is only a string
"""

[[profiles.work.capabilities]]
ref = "ext:logfire"
endpoint = "profile-level, not ours"
`;

const FIXTURES: Fixture[] = [
  { name: 'only our table', before: '', entry: '[[capabilities]]\nref = "ext:logfire"\n', after: '' },
  {
    name: 'comments, other capabilities, profiles',
    before: OTHER_STUFF,
    entry: '[[capabilities]]\nref = "ext:logfire"\nendpoint = "https://logfire.example"   # prod\nservice_name = "yolop"\n',
    after: PROFILES,
  },
  {
    name: 'CRLF line endings',
    before: 'theme = "light"\r\n\r\n[[capabilities]]\r\nref = "lsp"\r\n\r\n',
    entry: '[[capabilities]]\r\nref = "ext:logfire"\r\nendpoint = "x"\r\n',
    after: '\r\n[profiles.a]\r\nk = 1\r\n',
  },
  {
    name: 'odd formatting: indentation, quoted keys, literal strings',
    before: '\t# tabbed comment\n',
    entry: '  [[ capabilities ]]   # ours\n    "ref"   =   \'ext:logfire\'   # literal\n    \'endpoint\'= "a = b # not a comment"\n',
    after: '\n\n\n[other]\n"quoted.key" = 1\n',
  },
  {
    name: 'id instead of ref',
    before: '[[capabilities]]\nid = "git"\n\n',
    entry: '[[capabilities]]\nid = "ext:logfire"\nendpoint = "e"\n',
    after: '\n[[capabilities]]\nid = "ext:other"\n',
  },
  {
    name: 'multi-line values and a sub-table inside our entry',
    before: 'x = 1\n\n',
    entry:
      '[[capabilities]]\nref = "ext:logfire"\ndescription = """\nline one\n  [[capabilities]] is text here\nquote: \\"""\n"""\nliteral = \'\'\'\nraw \\n "\'\'\'\nlist = [\n  1,\n  # comment ]\n  [2, 3],\n]\n[capabilities.extra]\nnested = "kept"\n',
    after: '\n[tail]\nz = true\n',
  },
  { name: 'our entry at EOF without a trailing newline', before: 'a = 1\n\n', entry: '[[capabilities]]\nref = "ext:logfire"\nendpoint = "e"', after: '' },
  {
    name: 'look-alikes: other ext names, strings and comments mentioning ours',
    before: '# [[capabilities]] ref = "ext:logfire" (a comment)\n[[capabilities]]\nref = "ext:logfire2"\nnote = "ext:logfire"\n\n',
    entry: '[[capabilities]]\nref = "ext:logfire"\n',
    after: '\n[[capabilities]]\nref = "ext:logfire-old"\n',
  },
  {
    name: 'already disabled with a comment',
    before: '[[capabilities]]\nref = "lsp"\n\n',
    entry: '[[capabilities]]\nref = "ext:logfire"\nenabled = false # paused while on holiday\nendpoint = "e"\n',
    after: '\n# end\n',
  },
  { name: 'byte-order mark', before: '\ufeff[[capabilities]]\nref = "lsp"\n\n', entry: '[[capabilities]]\nref = "ext:logfire"\n', after: '' },
  {
    name: 'unicode and emoji',
    before: 'greeting = "héllo 👋"\n"ключ" = "значение"\n\n',
    entry: '[[capabilities]]\nref = "ext:logfire"\nlabel = "日本語 ✓"\n',
    after: '\n[[capabilities]]\nref = "fs"\n',
  },
];

const parsed = (text: string) => parse(text) as Record<string, any>;
const ours = (text: string) => (parsed(text).capabilities ?? []).filter((c: any) => (c.ref ?? c.id) === 'ext:logfire');

function apply(text: string, edit: SettingsEdit) {
  return applySettingsEdit(text, 'logfire', edit);
}

describe('settings.toml edits keep every byte outside our table', () => {
  const withEntry = FIXTURES;
  describe.each(withEntry)('$name', ({ before, entry, after }) => {
    const text = before + entry + after;

    it('is valid TOML to start with', () => {
      expect(() => parsed(text)).not.toThrow();
      expect(ours(text)).toHaveLength(1);
    });

    it('disable keeps the table and its config, marks enabled = false', () => {
      const r = apply(text, { op: 'disable' });
      const wasDisabled = ours(text)[0].enabled === false;
      expect(r.changed).toBe(!wasDisabled);
      expect(r.text.startsWith(before)).toBe(true);
      expect(r.text.endsWith(after)).toBe(true);
      const [table] = ours(r.text);
      const { enabled: _e, ...config } = table;
      const { enabled: _o, ...originalConfig } = ours(text)[0];
      expect(table.enabled).toBe(false);
      expect(config).toEqual(originalConfig);
      expect(readSettingsFromText(r.text, 'logfire').enabled).toBe(false);
    });

    it('disable is idempotent', () => {
      const once = apply(text, { op: 'disable' }).text;
      expect(apply(once, { op: 'disable' })).toEqual({ text: once, changed: false });
    });

    it('enable / disable / enable keeps inline config', () => {
      const e1 = apply(text, { op: 'enable' }).text;
      const d = apply(e1, { op: 'disable' }).text;
      const e2 = apply(d, { op: 'enable' });
      expect(e2.text).toBe(e1);
      expect(readSettingsFromText(e2.text, 'logfire')).toMatchObject({ enabled: true, entries: 1 });
      expect(e2.text.startsWith(before) && e2.text.endsWith(after)).toBe(true);
      expect(apply(e2.text, { op: 'enable' }).changed).toBe(false);
    });

    it('set writes typed values inside our table only', () => {
      const r = apply(text, {
        op: 'set',
        values: { endpoint: 'https://new.example', port: 8080, ratio: 0.25, on: true, tags: ['a', 'b"c'], opts: { deep: 1 } },
      });
      expect(r.changed).toBe(true);
      expect(r.text.startsWith(before)).toBe(true);
      expect(r.text.endsWith(after)).toBe(true);
      expect(ours(r.text)[0]).toMatchObject({ endpoint: 'https://new.example', port: 8080, ratio: 0.25, on: true, tags: ['a', 'b"c'], opts: { deep: 1 } });
      // Enabled state is not touched by config.
      expect(readSettingsFromText(r.text, 'logfire').enabled).toBe(readSettingsFromText(text, 'logfire').enabled);
      expect(apply(r.text, { op: 'set', values: { port: 8080 } }).changed).toBe(false);
    });

    it('set with undefined removes a key', () => {
      const withKey = apply(text, { op: 'set', values: { endpoint: 'e2' } }).text;
      const r = apply(withKey, { op: 'set', values: { endpoint: undefined } });
      expect(ours(r.text)[0]).not.toHaveProperty('endpoint');
      expect(r.text.startsWith(before) && r.text.endsWith(after)).toBe(true);
    });

    it('remove deletes our table and nothing else', () => {
      const r = apply(text, { op: 'remove' });
      expect(r.changed).toBe(true);
      expect(ours(r.text)).toEqual([]);
      const other = (t: string) => {
        const d = parsed(t);
        d.capabilities = (d.capabilities ?? []).filter((c: any) => (c.ref ?? c.id) !== 'ext:logfire');
        if (d.capabilities.length === 0) delete d.capabilities;
        return d;
      };
      expect(other(r.text)).toEqual(other(text));
      // Whole statements of others survive: the text is before+after minus at most one blank line.
      const plain = before + after;
      expect([plain, plain.replace(/\r?\n(\r?\n)?$/, '$1'), before.replace(/\r?\n$/, '') + after, before + after.replace(/^\r?\n/, '')]).toContain(r.text);
      expect(apply(r.text, { op: 'remove' }).changed).toBe(false);
    });
  });
});

describe('adding a table to a file that has none for us', () => {
  const bases = [
    '',
    'theme = "dark"\n',
    OTHER_STUFF,
    `${OTHER_STUFF.trimEnd()}\n${PROFILES}`,
    '# only a comment\n',
    '\ufeffa = 1\n',
    'a = 1\r\n[t]\r\nb = 2\r\n',
    'x = """\nno trailing newline"""',
  ];
  it.each(bases)('enable then remove restores the file exactly (%#)', (base) => {
    const enabled = apply(base, { op: 'enable' });
    expect(enabled.changed).toBe(true);
    expect(readSettingsFromText(enabled.text, 'logfire')).toMatchObject({ enabled: true, present: true });
    const removed = apply(enabled.text, { op: 'remove' }).text;
    if (base.endsWith('\n') || base === '') expect(removed).toBe(base);
    else expect(removed).toBe(`${base}\n`);
  });

  it('inserts after the last [[capabilities]] element (and its sub-tables), not at the end', () => {
    const text = `${OTHER_STUFF}[profiles.x]\nk = 1\n`;
    const r = apply(text, { op: 'enable' }).text;
    expect(r).toBe(`${OTHER_STUFF.replace('timeout = 30\n', 'timeout = 30\n\n[[capabilities]]\nref = "ext:logfire"\n')}[profiles.x]\nk = 1\n`);
    expect(parsed(r).capabilities.map((c: any) => c.ref)).toEqual(['lsp', 'ext:logfire']);
  });

  it('uses CRLF in a CRLF file', () => {
    expect(apply('a = 1\r\n', { op: 'enable' }).text).toBe('a = 1\r\n\r\n[[capabilities]]\r\nref = "ext:logfire"\r\n');
  });

  it('config for an extension without a table is written disabled (never enables as a side effect)', () => {
    const r = apply('a = 1\n', { op: 'set', values: { endpoint: 'e' } });
    expect(r.text).toBe('a = 1\n\n[[capabilities]]\nref = "ext:logfire"\nenabled = false\nendpoint = "e"\n');
    // Disabled: the host applies no config; the value is kept for `enable`.
    expect(read(r.text)).toEqual({ present: true, enabled: false, config: {}, kept: { endpoint: 'e' }, entries: 1 });
  });

  it('disable and remove of an absent extension change nothing', () => {
    expect(apply('a = 1\n', { op: 'disable' })).toEqual({ text: 'a = 1\n', changed: false });
    expect(apply('a = 1\n', { op: 'remove' })).toEqual({ text: 'a = 1\n', changed: false });
  });
});

describe('golden edits', () => {
  it('disable inserts enabled = false right after ref, with the same indentation', () => {
    const t = '[[capabilities]]\n  ref = "ext:logfire" # mine\n  endpoint = "e"\n';
    expect(apply(t, { op: 'disable' }).text).toBe('[[capabilities]]\n  ref = "ext:logfire" # mine\n  enabled = false\n  endpoint = "e"\n');
  });

  it('a changed value keeps the key spelling, spacing and trailing comment', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\n"endpoint"   =   "old"   # keep me\n';
    expect(apply(t, { op: 'set', values: { endpoint: 'new' } }).text).toBe('[[capabilities]]\nref = "ext:logfire"\n"endpoint"   =   "new"   # keep me\n');
  });

  it('new keys go after the last key of our table, before its sub-tables', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\n[capabilities.sub]\nx = 1\n';
    expect(apply(t, { op: 'set', values: { port: 1 } }).text).toBe('[[capabilities]]\nref = "ext:logfire"\nport = 1\n[capabilities.sub]\nx = 1\n');
  });

  it('values are escaped as TOML needs', () => {
    const value = 'quote " backslash \\ newline \n tab \t del \u007f bell \u0007 é 👋';
    const r = apply('', { op: 'set', values: { s: value } });
    expect(ours(r.text)[0].s).toBe(value);
  });

  // Several entries for one ref (host-compat §5, checked with the host's own code:
  // test/unit/host-settings-oracle.test.ts): in file order, plain entries merge into the
  // first instance (later keys win), `enabled = false` removes every instance, `append =
  // true` adds one. No edit deletes an entry or a key the user wrote.
  it('two enabled entries merge; disable marks the last, enable unmarks it: byte for byte back', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\na = 1\nendpoint = "https://e"\n\n[[capabilities]]\nid = "ext:logfire"\nb = 2\n';
    expect(read(t)).toEqual({ present: true, enabled: true, config: { a: 1, endpoint: 'https://e', b: 2 }, kept: {}, entries: 2 });
    // Enabling what the host runs changes nothing (it used to fold the entries and lose endpoint).
    expect(apply(t, { op: 'enable' })).toEqual({ text: t, changed: false });
    const d = apply(t, { op: 'disable' }).text;
    expect(d).toBe('[[capabilities]]\nref = "ext:logfire"\na = 1\nendpoint = "https://e"\n\n[[capabilities]]\nid = "ext:logfire"\nenabled = false\nb = 2\n');
    expect(read(d)).toEqual({ present: true, enabled: false, config: {}, kept: { a: 1, endpoint: 'https://e', b: 2 }, entries: 2 });
    expect(apply(d, { op: 'enable' }).text).toBe(t);
    expect(apply(t, { op: 'remove' }).text).toBe('');
  });

  it('--config goes into the last entry merged into the first instance; every other key stays', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\nendpoint = "https://e"\n\n[[capabilities]]\nref = "ext:logfire"\nport = 1\n';
    const s = apply(t, { op: 'enable', values: { port: 2, mode: 'fast' } }).text;
    expect(s).toBe('[[capabilities]]\nref = "ext:logfire"\nendpoint = "https://e"\n\n[[capabilities]]\nref = "ext:logfire"\nport = 2\nmode = "fast"\n');
    expect(read(s).config).toEqual({ endpoint: 'https://e', port: 2, mode: 'fast' });
  });

  it('append = true: another instance with its own config; config goes to the first instance, not the appended one', () => {
    const t =
      '[[capabilities]]\nref = "ext:logfire"\nendpoint = "https://one"\n\n[[capabilities]]\nref = "ext:logfire"\nappend = true\nendpoint = "https://two"\n';
    const r = readSettingsFromText(t, 'logfire');
    expect(r.instances.map((i) => i.config)).toEqual([{ endpoint: 'https://one' }, { endpoint: 'https://two' }]);
    expect(r.config).toEqual({ endpoint: 'https://one' });
    expect(apply(t, { op: 'enable' }).changed).toBe(false);
    const s = apply(t, { op: 'enable', values: { port: 1 } }).text;
    expect(s).toBe(
      '[[capabilities]]\nref = "ext:logfire"\nendpoint = "https://one"\nport = 1\n\n[[capabilities]]\nref = "ext:logfire"\nappend = true\nendpoint = "https://two"\n',
    );
    expect(readSettingsFromText(s, 'logfire').instances.map((i) => i.config)).toEqual([{ endpoint: 'https://one', port: 1 }, { endpoint: 'https://two' }]);
    // Disable marks the appended entry: enabled = false removes every instance seen so far.
    const d = apply(t, { op: 'disable' }).text;
    expect(readSettingsFromText(d, 'logfire').instances).toEqual([]);
    expect(apply(d, { op: 'enable' }).text).toBe(t);
  });

  it('a later enabled = false disables; enable unmarks it and the config comes back', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\nendpoint = "e"\n\n[[capabilities]]\nref = "ext:logfire"\nenabled = false\n';
    expect(read(t)).toEqual({ present: true, enabled: false, config: {}, kept: { endpoint: 'e' }, entries: 2 });
    const e = apply(t, { op: 'enable' });
    expect(e.text).toBe('[[capabilities]]\nref = "ext:logfire"\nendpoint = "e"\n\n[[capabilities]]\nref = "ext:logfire"\n');
    expect(read(e.text)).toEqual({ present: true, enabled: true, config: { endpoint: 'e' }, kept: {}, entries: 2 });
  });

  it('a bare entry appended by the host enables without config; the kept config is reported and enable restores it', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\nenabled = false # mine\nendpoint = "e"\n\n[[capabilities]]\nref = "ext:logfire"\n';
    expect(read(t)).toEqual({ present: true, enabled: true, config: {}, kept: { endpoint: 'e' }, entries: 2 });
    const e = apply(t, { op: 'enable' });
    // The user's own `enabled = false` line keeps its place and comment: only its value turns.
    expect(e).toEqual({
      text: '[[capabilities]]\nref = "ext:logfire"\nenabled = true # mine\nendpoint = "e"\n\n[[capabilities]]\nref = "ext:logfire"\n',
      changed: true,
    });
    expect(read(e.text)).toMatchObject({ enabled: true, config: { endpoint: 'e' }, kept: {} });
    // Config set while such a pair is on file lands in the entry the host merges last, still enabled. That
    // entry now names config of its own, so enable leaves the earlier `enabled = false` alone: nothing is kept.
    const s = apply(t, { op: 'set', values: { port: 1 } }).text;
    expect(s).toBe('[[capabilities]]\nref = "ext:logfire"\nenabled = false # mine\nendpoint = "e"\n\n[[capabilities]]\nref = "ext:logfire"\nport = 1\n');
    expect(read(s)).toMatchObject({ enabled: true, config: { port: 1 }, kept: {} });
    expect(apply(s, { op: 'enable' }).changed).toBe(false);
  });

  it('what enable brings back: every key of the file, later keys winning', () => {
    const entry = (body: string) => `[[capabilities]]\nref = "ext:logfire"\n${body}`;
    const of = (...bodies: string[]) => read(bodies.map(entry).join('\n'));
    expect(of('a = 1\n', 'enabled = false\nb = 2\n')).toMatchObject({ enabled: false, config: {}, kept: { a: 1, b: 2 } });
    expect(of('enabled = false\na = 1\n', 'enabled = false\na = 2\n')).toMatchObject({ enabled: false, kept: { a: 2 } });
    expect(of('a = 1\n', 'b = 2\n', '')).toMatchObject({ enabled: true, config: { a: 1, b: 2 }, kept: {} });
    expect(of('a = 1\n', 'enabled = true\nb = 2\n')).toMatchObject({ enabled: true, config: { a: 1, b: 2 }, kept: {} });
    expect(of('', 'enabled = false\n')).toMatchObject({ enabled: false, config: {}, kept: {} });
    // Config set after the disabling entry is what is in effect: enable leaves that file alone.
    expect(of('a = 1\n', 'enabled = false\n', 'b = 2\n')).toMatchObject({ enabled: true, config: { b: 2 }, kept: {} });
    // Only bare entries after it (the host's enable): enable switches the disabling entry back on.
    expect(of('a = 1\n', 'enabled = false\n', '')).toMatchObject({ enabled: true, config: {}, kept: { a: 1 } });
    // Non-boolean switches are ignored, as the host ignores them; a present non-string ref names nothing.
    expect(of('enabled = "no"\na = 1\n')).toMatchObject({ enabled: true, config: { a: 1 } });
    expect(read('[[capabilities]]\nref = 5\nid = "ext:logfire"\na = 1\n')).toMatchObject({ present: false, enabled: false });
  });
});

describe('files yep-ext refuses to touch', () => {
  const refuse: [string, string, RegExp][] = [
    ['NUL bytes', '\0\0\0\0', /NUL bytes/],
    ['invalid TOML', '[[capabilities]\nref = "x"\n', /not valid TOML.*line 1/],
    ['duplicate keys', 'a = 1\na = 2\n', /not valid TOML/],
    ['capabilities as an inline array', 'capabilities = [{ ref = "lsp" }]\n', /inline array/],
    ['capabilities as a plain table', '[capabilities]\nref = "lsp"\n', /not an array of tables/],
  ];
  it.each(refuse)('%s -> E_STATE naming the file, text unchanged', (_label, text, message) => {
    let err: unknown;
    try {
      applySettingsEdit(text, 'logfire', { op: 'enable' }, '/cfg/settings.toml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(YepError);
    expect((err as YepError).code).toBe('E_STATE');
    expect((err as YepError).message).toMatch(message);
    expect((err as YepError).message).toContain('/cfg/settings.toml');
  });

  it('reading an inline-array file still works (only editing is refused)', () => {
    expect(read('capabilities = [{ ref = "ext:logfire", enabled = false, x = 1 }]\n')).toEqual({
      present: true,
      enabled: false,
      config: {},
      kept: { x: 1 },
      entries: 1,
    });
    expect(read('capabilities = [{ ref = "ext:logfire", x = 1 }]\n')).toEqual({
      present: true,
      enabled: true,
      config: { x: 1 },
      kept: {},
      entries: 1,
    });
  });

  it('dotted keys inside our table are not rewritten', () => {
    const t = '[[capabilities]]\nref = "ext:logfire"\nendpoint.host = "h"\n';
    expect(() => apply(t, { op: 'set', values: { endpoint: 'x' } })).toThrow(/dotted key or sub-table/);
  });

  it('reserved keys are refused as config', () => {
    for (const k of ['ref', 'id', 'enabled', 'append']) expect(() => apply('', { op: 'set', values: { [k]: 'x' } })).toThrow(/reserved/);
  });

  it('invalid names are refused before anything is built', () => {
    expect(() => applySettingsEdit('', '../x', { op: 'enable' })).toThrow(/Invalid extension name/);
  });
});

describe('every reading is the reader’s own', () => {
  it('a reading changed in place (the library hands out nested tables) changes no later reading of the same text, and an edit from it is written', () => {
    const text = '[[capabilities]]\nref = "ext:a"\nheaders = { x = "1" }\nlist = [1, 2]\n';
    const first = readSettingsFromText(text, 'a');
    const list = first.config.list as number[];
    (first.config.headers as Record<string, string>).x = 'changed';
    list.push(3);
    expect(readSettingsFromText(text, 'a').config).toEqual({ headers: { x: '1' }, list: [1, 2] });
    const edited = applySettingsEdit(text, 'a', { op: 'set', values: { list } });
    expect(edited.changed).toBe(true);
    // The edit writes the list asked for and nothing of the other change made to the reading.
    expect(parse(edited.text)).toEqual({ capabilities: [{ ref: 'ext:a', headers: { x: '1' }, list: [1, 2, 3] }] });
    expect(edited.text).toContain('headers = { x = "1" }\n');
  });
});
