import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { applySecretsEdit, readSecretsFromText } from '../../src/core/settings/secrets.js';
import { Secret } from '../../src/core/settings/secret-value.js';
import { YepError } from '../../src/core/errors.js';
import { inspect } from 'node:util';

const CANARY = 'CANARY-s3cr3t-7f1e';

const HOST_FILE = `# written by yolop
[github]
token = "ghp_other"

["ext:other"]
key = "v"
`;

describe('connections.toml edits keep other tables byte for byte', () => {
  const cases: { name: string; before: string; ours: string; after: string }[] = [
    { name: 'only ours', before: '', ours: '["ext:logfire"]\ntoken = "old"\n', after: '' },
    { name: 'between host tables', before: `${HOST_FILE}\n`, ours: '["ext:logfire"]\ntoken = "old"\nregion = "eu"\n', after: '\n[slack]\nbot = "xoxb"\n' },
    {
      name: 'CRLF, comments',
      before: '# c\r\n[a]\r\nk = "v"\r\n\r\n',
      ours: "[ 'ext:logfire' ]  # ours\r\n  token = 'old' # note\r\n",
      after: '\r\n[z]\r\nq = """\r\nmulti\r\n"""\r\n',
    },
  ];
  describe.each(cases)('$name', ({ before, ours, after }) => {
    const text = before + ours + after;
    it('set replaces a value in place', () => {
      const r = applySecretsEdit(text, 'logfire', { op: 'set', field: 'token', value: new Secret(CANARY) });
      expect(r.changed).toBe(true);
      expect(r.text.startsWith(before) && r.text.endsWith(after)).toBe(true);
      expect(readSecretsFromText(r.text, 'logfire').token).toBe(CANARY);
    });
    it('set adds a new field inside our table', () => {
      const r = applySecretsEdit(text, 'logfire', { op: 'set', field: 'extra', value: 'x"y\\z\n' });
      expect(r.text.startsWith(before) && r.text.endsWith(after)).toBe(true);
      expect(readSecretsFromText(r.text, 'logfire')).toMatchObject({ token: 'old', extra: 'x"y\\z\n' });
    });
    it('set of the same value changes nothing', () => {
      expect(applySecretsEdit(text, 'logfire', { op: 'set', field: 'token', value: 'old' })).toEqual({ text, changed: false });
    });
    it('unset of the last field removes the table; remove too', () => {
      const only = applySecretsEdit(text, 'logfire', { op: 'remove' }).text;
      expect((parse(only) as Record<string, unknown>)['ext:logfire']).toBeUndefined();
      const { 'ext:logfire': _o, ...restBefore } = parse(text) as Record<string, unknown>;
      expect(parse(only)).toEqual(restBefore);
      const single = applySecretsEdit(`${before}["ext:logfire"]\ntoken = "t"\n${after}`, 'logfire', { op: 'unset', field: 'token' }).text;
      expect(single).toBe(only);
    });
  });

  it('creates our table at the end, then removing it restores the file', () => {
    const r = applySecretsEdit(HOST_FILE, 'logfire', { op: 'set', field: 'token', value: 't' });
    expect(r.text).toBe(`${HOST_FILE}\n["ext:logfire"]\ntoken = "t"\n`);
    expect(applySecretsEdit(r.text, 'logfire', { op: 'remove' }).text).toBe(HOST_FILE);
  });

  it('unset of a missing field or remove of a missing table is a no-op', () => {
    expect(applySecretsEdit(HOST_FILE, 'logfire', { op: 'unset', field: 'x' }).changed).toBe(false);
    expect(applySecretsEdit(HOST_FILE, 'logfire', { op: 'remove' }).changed).toBe(false);
  });
});

describe('refusals never quote a secret', () => {
  const bad: [string, string][] = [
    ['invalid TOML with the canary on the bad line', `["ext:logfire"]\ntoken = "${CANARY}\n`],
    ['NUL bytes', `\0${CANARY}`],
    ['a non-string value in our table', `["ext:logfire"]\ntoken = 1\nother = "${CANARY}"\n`],
    ['our table written with dotted keys', `"ext:logfire".token = "${CANARY}"\n`],
  ];
  it.each(bad)('%s', (_label, text) => {
    let err: unknown;
    try {
      applySecretsEdit(text, 'logfire', { op: 'set', field: 'token', value: 'new' }, '/cfg/connections.toml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(YepError);
    const e = err as YepError;
    expect(e.code).toBe('E_STATE');
    expect(JSON.stringify({ m: e.message, h: e.hint, d: e.details, c: String(e.cause ?? '') })).not.toContain(CANARY);
    expect(inspect(e)).not.toContain(CANARY);
  });
});

describe('Secret', () => {
  it('redacts itself everywhere except reveal()', () => {
    const s = new Secret(CANARY);
    expect(`${s}`).toBe('[redacted]');
    expect(JSON.stringify({ s })).toBe('{"s":"[redacted]"}');
    expect(inspect({ s })).not.toContain(CANARY);
    expect(String(s)).not.toContain(CANARY);
    expect(s.reveal()).toBe(CANARY);
  });
});
