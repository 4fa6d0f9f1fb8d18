/**
 * The Source table (src/core/sources/index.ts): one Source per kind, selected only
 * there. Each kind's pure half as a table: lock record round trip, describe, pin,
 * identity, exact pins, the "same pin, same bytes" check.
 */
import { describe, expect, it } from 'vitest';
import { parseLock, serializeLock } from '../../src/core/store/lockfile.js';
import { SOURCES, checkRecord, describeSource, isKind, isLinked, sameOrigin, samePin, sourceFor, type LockSource } from '../../src/core/sources/index.js';
import { parseSpec } from '../../src/core/sources/spec.js';
import { replaceVia } from '../../src/core/operations/install-plan.js';
import { recordTable } from '../../src/core/sources/source.js';

const H = (c: string) => `sha256:${c.repeat(64)}`;
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const CK = (c: string) => c.repeat(64);

const crate: LockSource = {
  type: 'crate',
  crate_name: 'yolop-extension-lsp',
  version: '0.3.1',
  cksum: CK('c'),
  requirement: '^0.3',
  index: 'https://mirror.example/index/',
};
const git: LockSource = { type: 'git', url: 'https://h.example/org/repo.git', rev: A, requested_ref: 'v1' };
const path: LockSource = { type: 'path', path: '/home/me/ext' };

describe('the table', () => {
  it('has one Source per kind the parser produces, keyed by its own kind', () => {
    expect(Object.keys(SOURCES).sort()).toEqual(['crate', 'git', 'path']);
    for (const [k, s] of Object.entries(SOURCES)) expect(s.kind).toBe(k);
    for (const text of ['lsp', 'crates.io:x@1', 'https://h.example/r.git', './dir']) {
      const spec = parseSpec(text, '/cwd', '/home');
      expect(spec.kind !== 'invalid' && isKind(spec.kind)).toBe(true);
    }
  });

  it('is not fooled by inherited property names', () => {
    for (const t of ['constructor', '__proto__', 'toString', 'hasOwnProperty', '', 'Crate']) expect(isKind(t)).toBe(false);
    expect(checkRecord({ type: 'constructor' })).toEqual({ problem: 'unknown source type "constructor"' });
  });

  it('says which kinds link to the user directory', () => {
    expect([isLinked(crate), isLinked(git), isLinked(path)]).toEqual([false, false, true]);
  });
});

describe('each kind round-trips its lock record', () => {
  const extra = { mirror: 'x', future: [1, 2] };
  it.each([
    ['crate', { ...crate, binary_sha256: CK('d') }],
    ['git', git],
    ['path', path],
  ] as const)('%s: parse(write(rec)) is rec, unknown keys kept, through the lock text too', (_k, rec) => {
    const withExtra = { ...rec, ...extra } as LockSource;
    const written = recordTable(withExtra);
    expect(Object.keys(written)[0]).toBe('type');
    expect(checkRecord(written)).toEqual({ record: withExtra });
    const lock = parseLock(serializeLock({ extra: {}, entries: [{ name: 'x', content_hash: H('1'), source: withExtra }] }));
    expect(lock.entries[0]!.source).toEqual(withExtra);
  });

  it('drops undefined keys when writing, keeps the record order', () => {
    expect(recordTable({ type: 'crate', crate_name: 'c', version: '1.0.0', cksum: undefined, requirement: '=1.0.0' })).toEqual({
      type: 'crate',
      crate_name: 'c',
      version: '1.0.0',
      requirement: '=1.0.0',
    });
  });

  it.each([
    [{ type: 'crate', crate_name: 'c' }, 'crate source without `crate_name`/`version`'],
    [{ type: 'crate', version: '1.0.0' }, 'crate source without `crate_name`/`version`'],
    [{ type: 'git', url: 'https://h/r.git' }, 'git source without `url`/`rev`'],
    [{ type: 'git', rev: A }, 'git source without `url`/`rev`'],
    [{ type: 'path', path: 3 }, 'path source without `path`'],
    [{ type: 'svn', url: 'x' }, 'unknown source type "svn"'],
    [{ url: 'x' }, 'unknown source type undefined'],
    ['crate', 'missing [extensions.source]'],
    [undefined, 'missing [extensions.source]'],
  ])('refuses %j: %s', (table, problem) => {
    expect(checkRecord(table)).toEqual({ problem });
  });
});

describe('describe, pin and identity', () => {
  it.each([
    [crate, 'crates.io:yolop-extension-lsp@0.3.1', '0.3.1'],
    [git, `https://h.example/org/repo.git#${A.slice(0, 12)}`, A],
    [path, '/home/me/ext', ''],
  ])('%j is "%s", pinned at "%s"', (rec, text, pin) => {
    expect(describeSource(rec)).toBe(text);
    expect(sourceFor(rec.type).pin(rec)).toBe(pin);
  });

  const cases: Array<[string, LockSource, LockSource, boolean, boolean]> = [
    ['crate, name case differs, same version', crate, { ...crate, crate_name: 'Yolop-Extension-LSP' }, true, true],
    ['crate, another version', crate, { ...crate, version: '0.4.0' }, true, false],
    ['crate, another index (same origin: the index is where, not what)', crate, { ...crate, index: undefined }, true, true],
    ['crate, another crate', crate, { ...crate, crate_name: 'yolop-extension-other' }, false, false],
    ['git, another commit', git, { ...git, rev: B }, true, false],
    ['git, another ref, same commit', git, { ...git, requested_ref: 'main' }, true, true],
    ['git, another URL', git, { ...git, url: 'https://h.example/fork/repo.git' }, false, false],
    ['path, same directory', path, { ...path }, true, true],
    ['path, another directory', path, { type: 'path', path: '/home/me/other' }, false, false],
    ['different kinds never match', path, git, false, false],
  ];
  it.each(cases)('%s: sameOrigin=%s samePin=%s', (_label, a, b, origin, pin) => {
    expect(sameOrigin(a, b)).toBe(origin);
    expect(sameOrigin(b, a)).toBe(origin);
    expect(samePin(a, b)).toBe(pin);
  });

  it.each([
    [{ ...crate, requirement: undefined }, false],
    [{ ...crate, requirement: '^0.3' }, false],
    [{ ...crate, requirement: '0.3.1' }, true],
    [{ ...crate, requirement: '=0.3.1' }, true],
    [{ ...git, requested_ref: undefined }, false],
    [{ ...git, requested_ref: 'v1' }, false],
    [{ ...git, requested_ref: B }, true],
    [path, false],
  ] as Array<[LockSource, boolean]>)('pinnedExactly(%j) = %s', (rec, exact) => {
    expect(sourceFor(rec.type).pinnedExactly(rec)).toBe(exact);
  });
});

describe('checkRepin: the same pin must mean the same bytes', () => {
  const entry = (source: LockSource, hash = H('1')) => ({ content_hash: hash, source });
  const code = (f: () => void): string | undefined => {
    try {
      f();
      return undefined;
    } catch (e) {
      return (e as { code: string }).code;
    }
  };
  it.each([
    ['crate, same version, other cksum', entry(crate), entry({ ...crate, cksum: CK('e') }), 'E_INTEGRITY'],
    [
      'crate, same version, other cksum, name case differs',
      entry(crate),
      entry({ ...crate, crate_name: 'YOLOP-extension-lsp', cksum: CK('e') }),
      'E_INTEGRITY',
    ],
    ['crate, same version, a lock without cksum (host-written)', entry({ ...crate, cksum: undefined }), entry({ ...crate, cksum: CK('e') }), undefined],
    ['crate, another version', entry(crate), entry({ ...crate, version: '0.4.0', cksum: CK('e') }), undefined],
    ['crate, another crate at that version', entry(crate), entry({ ...crate, crate_name: 'yolop-extension-x', cksum: CK('e') }), undefined],
    ['git, same commit, other content', entry(git), entry(git, H('2')), 'E_INTEGRITY'],
    ['git, same commit from another URL, other content', entry(git), entry({ ...git, url: 'https://h.example/fork.git' }, H('2')), 'E_INTEGRITY'],
    ['git, another commit', entry(git), entry({ ...git, rev: B }, H('2')), undefined],
    ['path, other content (nothing but the hash is pinned)', entry(path), entry(path, H('2')), undefined],
  ] as const)('%s -> %s', (_label, previous, next, expected) => {
    expect(code(() => sourceFor(next.source.type).checkRepin(previous as never, next as never, 'x'))).toBe(expected);
  });
});

describe('replaceVia: what a refused replacement offers besides --yes (updateReaches per kind)', () => {
  const at = (version: string, requirement?: string): LockSource => ({
    type: 'crate',
    crate_name: 'yolop-extension-lsp',
    version,
    cksum: CK('c'),
    ...(requirement !== undefined ? { requirement } : {}),
  });
  const ref = (rev: string, requested_ref?: string): LockSource => ({
    type: 'git',
    url: 'https://h.example/org/repo.git',
    rev,
    ...(requested_ref !== undefined ? { requested_ref } : {}),
  });

  it('a crate: forward within what the installed one follows is `update`; a downgrade, another requirement or an exact pin is not', () => {
    expect(replaceVia(at('0.1.0'), at('0.2.0'))).toBe('update');
    expect(replaceVia(at('0.1.0'), at('0.2.0', '=0.2.0'))).toBe('update');
    expect(replaceVia(at('0.2.0'), at('0.1.0'))).toBe('yes-only');
    expect(replaceVia(at('0.1.0', '^0.1'), at('0.1.5'))).toBe('update');
    expect(replaceVia(at('0.1.0', '^0.1'), at('0.2.0', '^0.2'))).toBe('yes-only');
    // The newest stable is what a bare name follows: a pre-release is not where `update` goes.
    expect(replaceVia(at('0.1.0'), at('0.2.0-beta.1'))).toBe('yes-only');
    expect(replaceVia(at('0.1.0', '=0.1.0'), at('0.2.0'))).toBe('pinned-exactly');
    expect(replaceVia(at('0.1.0', 'not a requirement'), at('0.2.0'))).toBe('yes-only');
    // Names are case-insensitive on crates.io; another crate is another origin.
    expect(replaceVia(at('0.1.0'), { ...at('0.2.0'), crate_name: 'Yolop-Extension-LSP' })).toBe('update');
    expect(replaceVia(at('0.1.0'), { ...at('0.2.0'), crate_name: 'other' })).toBe('yes-only');
    // From another index (a mirror) it is a change of source, not a move `update` would make.
    expect(replaceVia(at('0.1.0'), { ...at('0.2.0'), index: 'https://mirror.example/index/' })).toBe('yes-only');
    expect(replaceVia({ ...at('0.1.0'), index: 'https://mirror.example/index' }, { ...at('0.2.0'), index: 'https://mirror.example/index/' })).toBe('update');
  });

  it('git: the same ref at another commit is `update`; another ref, a full commit or another repository is not', () => {
    expect(replaceVia(ref(A, 'main'), ref(B, 'main'))).toBe('update');
    expect(replaceVia(ref(A), ref(B))).toBe('update');
    expect(replaceVia(ref(A, 'main'), ref(B, 'v2'))).toBe('yes-only');
    expect(replaceVia(ref(A, A), ref(B, 'main'))).toBe('pinned-exactly');
    expect(replaceVia(ref(A, 'main'), { ...ref(B, 'main'), url: 'https://h.example/org/fork.git' })).toBe('yes-only');
  });

  it('a path, and across kinds: only --yes', () => {
    expect(replaceVia(path, { type: 'path', path: '/home/me/other' })).toBe('yes-only');
    expect(replaceVia(crate, path)).toBe('yes-only');
    expect(replaceVia(git, crate)).toBe('yes-only');
  });
});

describe('withUnknownRecordKeys: a rewrite keeps what another tool wrote under [extensions.source]', () => {
  it('carries unknown keys of the same kind, never yep-ext’s own keys nor across kinds', async () => {
    const { withUnknownRecordKeys } = await import('../../src/core/sources/index.js');
    const prev = { type: 'crate', crate_name: 'c', version: '1.0.0', cksum: 'a', requirement: '^1', binary_sha256: 'b', mirror_of: 'x', seen: [1] } as const;
    const next = { type: 'crate', crate_name: 'c', version: '1.1.0', cksum: 'd' } as const;
    // `requirement` and the binary digest are yep-ext's: a record without them means they went away.
    expect(withUnknownRecordKeys(next as never, prev as never)).toEqual({ ...next, mirror_of: 'x', seen: [1] });
    expect(withUnknownRecordKeys({ ...next, mirror_of: 'y' } as never, prev as never)).toMatchObject({ mirror_of: 'y' });
    expect(withUnknownRecordKeys({ type: 'path', path: '/p' } as never, prev as never)).toEqual({ type: 'path', path: '/p' });
    expect(withUnknownRecordKeys(next as never, undefined)).toBe(next);
  });
});
