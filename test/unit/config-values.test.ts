import { describe, expect, it } from 'vitest';
import { assertConfigValue, checkTypedText, coerceConfigValue, parseAssignment } from '../../src/core/settings/config-values.js';
import type { ConfigField } from '../../src/core/package/manifest.js';

const field = (key: string, schema: Record<string, unknown>, extra: Partial<ConfigField> = {}): ConfigField => ({
  key,
  secret: schema.secret === true,
  required: false,
  schema,
  ...(typeof schema.type === 'string' ? { type: schema.type } : {}),
  ...(Array.isArray(schema.enum) ? { enum: schema.enum as string[] } : {}),
  ...extra,
});

describe('coerceConfigValue types text by the schema', () => {
  const ok: [string, Record<string, unknown>, string, unknown][] = [
    ['string stays text', { type: 'string' }, '0042', '0042'],
    ['untyped stays text', {}, 'true', 'true'],
    ['integer', { type: 'integer' }, '8080', 8080],
    ['negative integer', { type: 'integer' }, '-3', -3],
    ['number', { type: 'number' }, '0.25', 0.25],
    ['number with exponent', { type: 'number' }, '1e3', 1000],
    ['boolean true', { type: 'boolean' }, 'true', true],
    ['boolean false', { type: 'boolean' }, 'false', false],
    ['array, comma separated', { type: 'array', items: { type: 'string' } }, 'a, b,c', ['a', 'b', 'c']],
    ['array of integers', { type: 'array', items: { type: 'integer' } }, '1,2', [1, 2]],
    ['array as JSON', { type: 'array' }, '["x", 1]', ['x', 1]],
    ['empty array', { type: 'array' }, '', []],
    ['object as JSON', { type: 'object' }, '{"a":1}', { a: 1 }],
    ['union prefers the narrower type', { type: ['integer', 'string'] }, '7', 7],
    ['union falls back to string', { type: ['integer', 'string'] }, 'seven', 'seven'],
  ];
  it.each(ok)('%s', (_l, schema, raw, expected) => {
    expect(coerceConfigValue(field('k', schema), raw, 'ext')).toEqual(expected);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['integer from text', { type: 'integer' }, 'abc'],
    ['integer from a float', { type: 'integer' }, '1.5'],
    ['unsafe integer', { type: 'integer' }, '9007199254740993'],
    ['number from text', { type: 'number' }, '1x'],
    ['boolean from yes', { type: 'boolean' }, 'yes'],
    ['object from text', { type: 'object' }, 'a=1'],
    ['array with a bad item', { type: 'array', items: { type: 'integer' } }, '1,x'],
  ];
  it.each(bad)('%s is refused with E_USAGE', (_l, schema, raw) => {
    expect(() => coerceConfigValue(field('k', schema), raw, 'ext')).toThrow(
      expect.objectContaining({ code: 'E_USAGE', message: expect.stringContaining('ext.k') }),
    );
  });
});

describe('schema validation (ajv)', () => {
  it('reports bounds, enums, formats and patterns clearly', () => {
    expect(() => assertConfigValue(field('port', { type: 'integer', minimum: 1 }), 0, 'ext')).toThrow('Invalid value for ext.port: port must be >= 1.');
    expect(() => assertConfigValue(field('mode', { type: 'string', enum: ['fast', 'slow'] }), 'medium', 'ext')).toThrow(
      /mode must be equal to one of the allowed values: "fast", "slow"/,
    );
    expect(() => assertConfigValue(field('url', { type: 'string', format: 'uri' }), 'not a url', 'ext')).toThrow(/url must match format "uri"/);
    expect(() => assertConfigValue(field('tags', { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } }), ['ok', 'NO'], 'ext')).toThrow(
      /tags\[1\] must match pattern/,
    );
    expect(() => assertConfigValue(field('url', { type: 'string', format: 'uri' }), 'https://ok.example', 'ext')).not.toThrow();
  });

  it('accepts the yolop keywords secret and env, and unknown formats', () => {
    expect(() => assertConfigValue(field('t', { type: 'string', secret: true, env: 'T', format: 'made-up' }), 'abcd', 'ext')).not.toThrow();
  });

  it("a broken schema is the manifest's fault", () => {
    expect(() => assertConfigValue(field('r', { $ref: '#/definitions/missing' }), 'x', 'ext')).toThrow(expect.objectContaining({ code: 'E_MANIFEST' }));
  });

  it('secret problems never quote the value', () => {
    const f = field('token', { type: 'string', secret: true, minLength: 40, pattern: '^ghp_' });
    const msg = checkTypedText(f, 'CANARY-value', 'ext');
    expect(msg).not.toBe(true);
    expect(String(msg)).not.toContain('CANARY');
    expect(checkTypedText(f, '', 'ext')).toBe('A value is required.');
  });

  it('prompt text is typed before it is checked', () => {
    const f = field('port', { type: 'integer', minimum: 1 });
    expect(checkTypedText(f, '80', 'ext')).toBe(true);
    expect(checkTypedText(f, '0', 'ext')).toBe('port must be >= 1');
    expect(checkTypedText(f, 'x', 'ext')).toMatch(/expected integer/);
  });
});

describe('parseAssignment', () => {
  it('splits at the first =', () => {
    expect(parseAssignment('url=https://x/?a=b')).toEqual({ key: 'url', raw: 'https://x/?a=b' });
    expect(parseAssignment('k=')).toEqual({ key: 'k', raw: '' });
    expect(() => parseAssignment('novalue')).toThrow(/key=value/);
    expect(() => parseAssignment('=x')).toThrow(/key=value/);
  });
});
