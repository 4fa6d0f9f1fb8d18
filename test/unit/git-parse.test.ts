/** Pure helpers of the git source: ls-remote/ls-tree parsing, ref picking, tree policy, the reinstall check. */
import { describe, expect, test } from 'vitest';
import { YepError } from '../../src/core/errors.js';
import { inspectTree, parseLsRemote, parseLsTree, pickRef } from '../../src/core/sources/git.js';
import { assertSameCommitSameHash } from '../../src/core/sources/git-source.js';
import { gitFailure, isUnadvertisedRefusal } from '../../src/core/sources/git-errors.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const T = 'd'.repeat(40);

const LS_REMOTE = [
  'ref: refs/heads/main\tHEAD',
  `${A}\tHEAD`,
  `${A}\trefs/heads/main`,
  `${B}\trefs/heads/v1`,
  `${T}\trefs/tags/v1`,
  `${C}\trefs/tags/v1^{}`,
  `${B}\trefs/tags/light`,
  `${B}\trefs/heads/feature/x`,
  `${C}\trefs/heads/other/refs/heads/main`,
  'garbage line',
  '',
].join('\n');

describe('parseLsRemote + pickRef', () => {
  const remote = parseLsRemote(LS_REMOTE);

  test('reads refs, peeled tags and the HEAD symref', () => {
    expect(remote.headTarget).toBe('refs/heads/main');
    expect(remote.refs.get('refs/tags/v1^{}')).toBe(C);
    expect(remote.refs.has('garbage line')).toBe(false);
  });

  test.each([
    [undefined, { rev: A, kind: 'default', refName: 'refs/heads/main' }],
    ['main', { rev: A, kind: 'branch', refName: 'refs/heads/main' }],
    ['feature/x', { rev: B, kind: 'branch', refName: 'refs/heads/feature/x' }],
    // an annotated tag resolves to its commit, never to the tag object
    ['v1', { rev: C, kind: 'tag', refName: 'refs/tags/v1', ambiguous: true }],
    ['light', { rev: B, kind: 'tag', refName: 'refs/tags/light' }],
    ['refs/heads/v1', { rev: B, kind: 'branch', refName: 'refs/heads/v1' }],
    ['refs/tags/v1', { rev: C, kind: 'tag', refName: 'refs/tags/v1' }],
  ])('%j', (ref, expected) => {
    expect(pickRef(remote, ref)).toEqual(expected);
  });

  test('only exact names match (ls-remote patterns match tails)', () => {
    expect(pickRef(parseLsRemote(`${C}\trefs/heads/other/refs/heads/main\n`), 'main')).toBeUndefined();
    expect(pickRef(remote, 'nope')).toBeUndefined();
    expect(pickRef(parseLsRemote(''), undefined)).toBeUndefined();
  });
});

describe('parseLsTree + inspectTree', () => {
  const out = [
    `100644 blob ${A}     120\tplugin.json`,
    `100755 blob ${B}      40\tbin/gitext-server`,
    `160000 commit ${C}       -\tvendor/sub`,
    `100644 blob ${A} 5\tname with\ttab`,
  ].join('\0');

  test('parses modes, types, sizes and paths', () => {
    const entries = parseLsTree(`${out}\0`);
    expect(entries).toEqual([
      { mode: '100644', type: 'blob', size: 120, path: 'plugin.json' },
      { mode: '100755', type: 'blob', size: 40, path: 'bin/gitext-server' },
      { mode: '160000', type: 'commit', size: undefined, path: 'vendor/sub' },
      { mode: '100644', type: 'blob', size: 5, path: 'name with\ttab' },
    ]);
  });

  test('submodules are reported, not fetched', () => {
    const { notes } = inspectTree(parseLsTree(out), { maxFiles: 10, maxTreeBytes: 1000 });
    expect(notes).toEqual([expect.stringContaining('vendor/sub')]);
  });

  test('a symlink anywhere is refused, the manifest one by name', () => {
    const link = parseLsTree(`120000 blob ${A}      20\tplugin.json\0`);
    expect(() => inspectTree(link, { maxFiles: 10, maxTreeBytes: 1000 })).toThrow(/plugin\.json" is a symbolic link \(the manifest itself\)/);
    const bin = parseLsTree(`120000 blob ${A}       8\tbin\0`);
    expect(() => inspectTree(bin, { maxFiles: 10, maxTreeBytes: 1000 })).toThrow(/"bin" is a symbolic link/);
  });

  test('caps on files and bytes', () => {
    expect(() => inspectTree(parseLsTree(out), { maxFiles: 2, maxTreeBytes: 1000 })).toThrow(/3 files/);
    expect(() => inspectTree(parseLsTree(out), { maxFiles: 10, maxTreeBytes: 100 })).toThrow(/165 bytes/);
  });

  test('unexpected output is an error, not silently skipped', () => {
    expect(() => parseLsTree('what is this\0')).toThrow(YepError);
  });
});

describe('assertSameCommitSameHash', () => {
  const source = { type: 'git' as const, url: 'https://h/x', rev: A };
  const prev = { content_hash: 'sha256:1', source: { type: 'git', rev: A } };
  test('same commit, same hash: fine', () => {
    expect(() => assertSameCommitSameHash(prev, source, 'sha256:1')).not.toThrow();
  });
  test('same commit, different hash: E_INTEGRITY with wanted/got', () => {
    try {
      assertSameCommitSameHash(prev, source, 'sha256:2');
      expect.unreachable();
    } catch (e) {
      expect((e as YepError).code).toBe('E_INTEGRITY');
      expect((e as YepError).details).toMatchObject({ wanted: 'sha256:1', got: 'sha256:2', rev: A });
    }
  });
  test('another commit or no previous entry: nothing to compare', () => {
    expect(() => assertSameCommitSameHash({ ...prev, source: { type: 'git', rev: B } }, source, 'sha256:2')).not.toThrow();
    expect(() => assertSameCommitSameHash({ ...prev, source: { type: 'path' } }, source, 'sha256:2')).not.toThrow();
    expect(() => assertSameCommitSameHash(undefined, source, 'sha256:2')).not.toThrow();
  });
});

describe('gitFailure classification', () => {
  test.each([
    ["fatal: could not read Username for 'https://h': terminal prompts disabled", 'E_GIT', /credential helper/],
    ['git@h: Permission denied (publickey).\nfatal: Could not read from remote repository.', 'E_GIT', /ssh-agent/],
    ["remote: Repository not found.\nfatal: repository 'https://h/x/' not found", 'E_GIT', /credential helper/],
    ['Host key verification failed.', 'E_GIT', /known_hosts/],
    ["fatal: '/tmp/x' does not appear to be a git repository", 'E_NOT_FOUND', /Check the URL/],
    ["fatal: unable to access 'https://h/': Could not resolve host: h", 'E_NETWORK', /connection/],
    ["fatal: transport 'ext' not allowed", 'E_GIT', /insteadOf/],
    ['fatal: something new', 'E_GIT', undefined],
  ])('%j', (text, code, hint) => {
    const e = gitFailure(text, 'fetch from', 'https://h/x');
    expect(e.code).toBe(code);
    if (hint) expect(e.hint).toMatch(hint);
    else expect(e.hint).toBeUndefined();
  });

  test('server text is sanitised before it can reach a terminal', () => {
    const e = gitFailure('remote: \u001b[2J\u001b[31mgotcha\nfatal: boom', 'fetch from', 'https://h/x');
    expect(e.message).not.toContain('\u001b');
    expect(e.message).toContain('boom');
  });

  test('recognises a v0 server refusing an unadvertised commit', () => {
    expect(isUnadvertisedRefusal(`error: Server does not allow request for unadvertised object ${A}`)).toBe(true);
    expect(isUnadvertisedRefusal(`fatal: remote error: upload-pack: not our ref ${A}`)).toBe(true);
    expect(isUnadvertisedRefusal('fatal: Authentication failed')).toBe(false);
  });
});
