/**
 * The git mirror travels in the Context (ctx.gitMirror), set once when the context is
 * made: the flag's value wins over YEP_EXT_GIT_MIRROR, an empty value is none, and no
 * command writes a variable into ctx.env to carry it (or anything else) afterwards.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/core/context.js';
import { gitMirrorHost, gitMirrorUrl } from '../../src/core/sources/mirror/git-mirror-url.js';

const SRC = resolve(import.meta.dirname, '../../src');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

describe('ctx.gitMirror', () => {
  it('is read from YEP_EXT_GIT_MIRROR once, the option wins, empty is none', () => {
    const env = { YEP_EXT_GIT_MIRROR: ' https://mirror.internal/git/ ' };
    expect(createContext({ env }).gitMirror).toBe('https://mirror.internal/git/');
    expect(createContext({ env, gitMirror: 'file:///srv/git/' }).gitMirror).toBe('file:///srv/git/');
    expect(createContext({ env: { YEP_EXT_GIT_MIRROR: '' } }).gitMirror).toBeUndefined();
    expect(createContext({ env: {} }).gitMirror).toBeUndefined();
  });

  it('maps a URL into the mirror and names the host the policy rules (file for a local mirror)', () => {
    expect(gitMirrorUrl(undefined, 'https://github.com/acme/ext')).toBeUndefined();
    expect(gitMirrorUrl('https://m.internal/git', 'https://github.com/acme/ext')).toBe('https://m.internal/git/github.com/acme/ext.git');
    expect(gitMirrorHost('https://M.internal/git/', 'https://github.com/acme/ext')).toBe('m.internal');
    expect(gitMirrorHost('file:///srv/mirror/git/', 'https://github.com/acme/ext')).toBe('file');
  });

  it('no source file assigns ctx.env: a flag is a typed Context field, never a variable written into the environment', () => {
    const hits = files(SRC).flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bctx\.env\s*=[^=]/.test(line) ? [`${relative(SRC, f)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(hits).toEqual([]);
  });
});
