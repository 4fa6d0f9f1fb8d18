import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSpec } from '../../src/core/sources/spec.js';

const cwd = '/work/here';
const home = '/home/u';

describe('parseSpec', () => {
  it.each([
    ['lsp', { kind: 'crate', crate: 'yolop-extension-lsp' }],
    ['lsp@0.3.1', { kind: 'crate', crate: 'yolop-extension-lsp', requirement: '0.3.1' }],
    ['lsp@^0.3', { kind: 'crate', crate: 'yolop-extension-lsp', requirement: '^0.3' }],
    ['yolop-extension-lsp', { kind: 'crate', crate: 'yolop-extension-lsp' }],
    ['crates.io:yolop-extension-lsp@~0.3', { kind: 'crate', crate: 'yolop-extension-lsp', requirement: '~0.3' }],
    ['crates.io:other_crate', { kind: 'crate', crate: 'other_crate' }],
    ['  lsp  ', { kind: 'crate', crate: 'yolop-extension-lsp' }],
    ['https://example.com/acme/ext.git', { kind: 'git', url: 'https://example.com/acme/ext.git' }],
    ['https://example.com/acme/ext.git@v1.2.0', { kind: 'git', url: 'https://example.com/acme/ext.git', ref: 'v1.2.0' }],
    ['ssh://git@example.com/acme/ext.git', { kind: 'git', url: 'ssh://git@example.com/acme/ext.git' }],
    ['https://example.com/acme/ext.git#feature/x', { kind: 'git', url: 'https://example.com/acme/ext.git', ref: 'feature/x' }],
    ['git@github.com:acme/ext.git', { kind: 'git', url: 'git@github.com:acme/ext.git' }],
    ['git@github.com:acme/ext.git@main', { kind: 'git', url: 'git@github.com:acme/ext.git', ref: 'main' }],
    [
      'ssh://git@host/acme/ext.git@0123456789abcdef0123456789abcdef01234567',
      { kind: 'git', url: 'ssh://git@host/acme/ext.git', ref: '0123456789abcdef0123456789abcdef01234567' },
    ],
    ['git+https://example.com/x.git', { kind: 'git', url: 'https://example.com/x.git' }],
    ['file:///tmp/repo.git', { kind: 'git', url: 'file:///tmp/repo.git' }],
    ['./ext', { kind: 'path', path: '/work/here/ext' }],
    ['../ext', { kind: 'path', path: '/work/ext' }],
    ['/abs/ext', { kind: 'path', path: '/abs/ext' }],
    ['~/ext', { kind: 'path', path: '/home/u/ext' }],
    ['.', { kind: 'path', path: '/work/here' }],
    // What shell completion types: no crate name or git URL ends in `/`.
    ['my-ext/', { kind: 'path', path: '/work/here/my-ext' }],
    ['sub/my-ext/', { kind: 'path', path: '/work/here/sub/my-ext' }],
  ])('%s', (text, expected) => {
    expect(parseSpec(text, cwd, home)).toMatchObject(expected);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['lsp@', 'nothing after'],
    ['crates.io:', 'not a valid'],
    ['-rf', 'cannot start with'],
    ['a/b', 'not a valid'],
    ['lsp\u001b[2J', 'control'],
    ['https://h/x.git#', 'nothing after "#"'],
    ['1abc', 'not a valid'],
    ['https://ghp_secret@github.com/o/r.git', 'often a token'],
  ])('%j is invalid', (text, reason) => {
    const s = parseSpec(text, cwd, home);
    expect(s.kind).toBe('invalid');
    expect(s.kind === 'invalid' && s.reason).toContain(reason);
  });

  it('reads a word that is no crate name as the package directory it names here, and a crate name as a crate even then', () => {
    const here = mkdtempSync(join(tmpdir(), 'spec-'));
    try {
      for (const d of ['examples/echo', 'lsp', 'plain/dir']) mkdirSync(join(here, d), { recursive: true });
      writeFileSync(join(here, 'examples/echo/plugin.json'), '{}');
      writeFileSync(join(here, 'lsp/plugin.json'), '{}');
      expect(parseSpec('examples/echo', here, home)).toMatchObject({ kind: 'path', path: join(here, 'examples/echo') });
      // npm's rule: a bare valid name is the registry's, even beside a same-named folder.
      expect(parseSpec('lsp', here, home)).toMatchObject({ kind: 'crate', crate: 'yolop-extension-lsp' });
      // A directory without plugin.json is no package: still the crate-name error.
      expect(parseSpec('plain/dir', here, home).kind).toBe('invalid');
    } finally {
      rmSync(here, { recursive: true, force: true });
    }
  });

  it('is total: never throws on arbitrary text', () => {
    for (const t of ['@', '@@', '#', 'crates.io:@1', 'git@', '://', '\0', 'x'.repeat(5000)]) expect(() => parseSpec(t, cwd, home)).not.toThrow();
  });

  it('keeps what the user typed', () => {
    expect(parseSpec(' lsp@1 ', cwd, home).raw).toBe(' lsp@1 ');
  });
});
