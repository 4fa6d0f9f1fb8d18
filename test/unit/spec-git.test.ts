/** parseSpec's git branch: how refs are split off, and hostile URLs/refs refused as `invalid`. */
import { describe, expect, test } from 'vitest';
import { parseSpec } from '../../src/core/sources/spec.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('parseSpec: git sources', () => {
  test.each([
    ['https://host.example/acme/ext.git', 'https://host.example/acme/ext.git', undefined],
    ['https://host.example/acme/ext.git@v1.2.0', 'https://host.example/acme/ext.git', 'v1.2.0'],
    ['https://host.example/acme/ext.git@main', 'https://host.example/acme/ext.git', 'main'],
    [`https://host.example/acme/ext.git@${SHA}`, 'https://host.example/acme/ext.git', SHA],
    ['https://host.example/acme/ext.git#feature/x', 'https://host.example/acme/ext.git', 'feature/x'],
    ['https://host.example/acme/ext.git#refs/heads/main', 'https://host.example/acme/ext.git', 'refs/heads/main'],
    ['git@host.example:acme/ext.git', 'git@host.example:acme/ext.git', undefined],
    ['git@host.example:acme/ext.git@v2', 'git@host.example:acme/ext.git', 'v2'],
    ['git@host.example:acme/ext.git#release/1.x', 'git@host.example:acme/ext.git', 'release/1.x'],
    ['ssh://git@host.example:2222/acme/ext.git@v1', 'ssh://git@host.example:2222/acme/ext.git', 'v1'],
    ['git+ssh://git@host.example/acme/ext.git', 'ssh://git@host.example/acme/ext.git', undefined],
    ['git+https://host.example/acme/ext.git@v1', 'https://host.example/acme/ext.git', 'v1'],
    ['file:///tmp/repos/ext.git@v1', 'file:///tmp/repos/ext.git', 'v1'],
    ['http://127.0.0.1:8080/ext.git#feature/x', 'http://127.0.0.1:8080/ext.git', 'feature/x'],
    ['  https://host.example/a/b  ', 'https://host.example/a/b', undefined],
  ])('%j -> url %j ref %j', (text, url, ref) => {
    const spec = parseSpec(text, '/cwd', '/home/u');
    expect(spec).toEqual({ kind: 'git', raw: text, url, ...(ref !== undefined ? { ref } : {}) });
  });

  test.each([
    ['ssh://-oProxyCommand=touch%20x/repo', /host name starting with "-"/],
    ['git@-oProxyCommand=x:y', /host name starting with "-"/],
    ['git+ext::sh', /helper/],
    ['git+fd::3', /helper/],
    ['https://host/acme/ext.git@-evil', /starts with "-"/],
    ['https://host/acme/ext.git#--upload-pack=x', /starts with "-"/],
    ['https://host/acme/ext.git@a..b', /"\.\."/],
    ['https://host/acme/ext.git#a@{1}', /"@\{"/],
    ['https://host/acme/ext.git#x.lock', /\.lock/],
    ['https://host/acme/ext.git@feature/x', /url#ref/],
    ['https://host/acme/ext.git#', /nothing after "#"/],
    ['http://example.com/ext.git', /not loopback/],
    ['git://host/ext.git', /git:\/\//],
    ['https://me:token@host/ext.git', /password or token/],
  ])('%j is invalid', (text, why) => {
    const spec = parseSpec(text, '/cwd', '/home/u');
    expect(spec.kind).toBe('invalid');
    expect((spec as { reason: string }).reason).toMatch(why);
  });

  test('--upload-pack and ext:: without a scheme never become git specs', () => {
    expect(parseSpec('--upload-pack=touch x').kind).toBe('invalid');
    expect(parseSpec('ext::sh -c touch% x').kind).toBe('invalid');
    expect(parseSpec('fd::3').kind).toBe('invalid');
  });
});
