import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/core/package/manifest.js';
import { validateManifest } from '../../src/core/package/manifest-validate.js';
import { planConfigInjection } from '../../src/core/settings/server-config.js';
import { redactText, redactValue } from '../../src/core/text/redact.js';
import { parseDoctorTarget } from '../../src/core/doctor/doctor.js';

function manifest(properties: Record<string, unknown>, required: string[] = []): Manifest {
  const r = validateManifest({
    name: 'x',
    yolop: { capabilityServer: { command: 'x' }, tools: [{ name: 't' }], config_schema: { type: 'object', properties, required } },
  });
  if ('problems' in r) throw new Error(r.problems.join());
  return r.manifest;
}

describe('planConfigInjection (the host rules)', () => {
  const m = manifest(
    {
      token: { type: 'string', secret: true, env: 'X_TOKEN' },
      orphan: { type: 'string', secret: true },
      endpoint: { type: 'string', env: 'X_ENDPOINT' },
      retries: { type: 'integer', env: 'X_RETRIES' },
      region: { type: 'string' },
    },
    ['token', 'region'],
  );

  it('secrets travel only as env; plain values in initialize.config and, with env, as env too', () => {
    const p = planConfigInjection(m, { values: { endpoint: 'https://e', retries: 3, region: 'eu', extra: true }, secrets: { token: 's3cr3t', orphan: 'o' } });
    expect(p.env).toEqual({ X_TOKEN: 's3cr3t', X_ENDPOINT: 'https://e', X_RETRIES: '3' });
    expect(p.initConfig).toEqual({ endpoint: 'https://e', retries: 3, region: 'eu', extra: true });
    expect(p.secretValues.sort()).toEqual(['o', 's3cr3t']);
    expect(p.unreachableSecrets).toEqual(['orphan']);
    expect(p.missing).toEqual([]);
  });

  it('never puts a secret key in initialize.config, even when the settings table has one', () => {
    const p = planConfigInjection(m, { values: { token: 'leaked-into-settings' }, secrets: {} });
    expect(p.initConfig).toEqual({});
    expect(p.env).toEqual({});
  });

  it('lists required fields without a value', () => {
    const p = planConfigInjection(m, undefined);
    expect(p.missing.map((f) => f.key)).toEqual(['token', 'region']);
    expect(p.env).toEqual({});
  });
});

describe('redaction', () => {
  it('hides every secret, longest first, in text and nested values', () => {
    expect(redactText('token=abcdef and abc', ['abc', 'abcdef'])).toBe('token=[redacted] and [redacted]');
    expect(redactValue({ a: ['x abc'], abc: 1 }, ['abc'])).toEqual({ a: ['x [redacted]'], '[redacted]': 1 });
    expect(redactText('nothing', [''])).toBe('nothing');
  });
});

describe('parseDoctorTarget', () => {
  it.each([
    ['lsp', { kind: 'installed', name: 'lsp', raw: 'lsp' }],
    ['yolop-extension-lsp', { kind: 'installed', name: 'lsp', raw: 'yolop-extension-lsp' }],
    ['./ext', { kind: 'path', dir: '/work/ext' }],
    ['../ext', { kind: 'path', dir: '/ext' }],
    ['.', { kind: 'path', dir: '/work' }],
    ['/abs/ext', { kind: 'path', dir: '/abs/ext' }],
    ['sub/ext', { kind: 'path', dir: '/work/sub/ext' }],
    ['~/ext', { kind: 'path', dir: '/home/me/ext' }],
  ])('%j -> %j', (arg, want) => {
    expect(parseDoctorTarget(arg, '/work', '/home/me')).toEqual(want);
  });

  it('validates names before any path is built', () => {
    expect(() => parseDoctorTarget('bad name', '/work')).toThrow(/Invalid extension name/);
    expect(() => parseDoctorTarget('', '/work')).toThrow(/Invalid extension name/);
  });
});
