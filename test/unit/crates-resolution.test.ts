/**
 * Pure crates.io rules: index paths, index line parsing, cargo's requirement
 * dialect (as npm semver), version choice and its messages, dl URL markers.
 */
import { describe, expect, it } from 'vitest';
import { parseCargoRequirement, parseCargoVersion, satisfiesRequirement } from '../../src/core/sources/crates-io/cargo-version.js';
import { pickVersions } from '../../src/core/sources/crates-io/pick-version.js';
import { buildDownloadUrl } from '../../src/core/sources/crates-io/dl-url.js';
import { parseIndexFile } from '../../src/core/sources/crates-io/index-lines.js';
import { indexPath } from '../../src/core/sources/crates-io/index-path.js';

const CK = 'a'.repeat(64);

/** What `install` takes (the one picker, no cooldown, nothing installed) and what it says. */
function chooseVersion(crate: string, entries: ReturnType<typeof parseIndexFile>['entries'], requirement?: string) {
  const pick = pickVersions({ crate, entries, requirement, now: 0 });
  return { entry: pick.candidates[0]!, warnings: pick.warnings };
}

describe('indexPath (cargo rule, lower-cased, - and _ not folded)', () => {
  it.each([
    ['a', '1/a'],
    ['ab', '2/ab'],
    ['abc', '3/a/abc'],
    ['abcd', 'ab/cd/abcd'],
    ['yolop-extension-lsp', 'yo/lo/yolop-extension-lsp'],
    ['Serde_JSON', 'se/rd/serde_json'],
    ['a-b', '3/a/a-b'],
  ])('%s -> %s', (name, path) => expect(indexPath(name)).toBe(path));

  it.each(['', '../x', 'a/b', 'x'.repeat(65), 'é'])('refuses %j', (name) => {
    expect(() => indexPath(name)).toThrow(/not a valid crate name/);
  });
});

describe('cargo requirement semantics (translated to npm semver)', () => {
  // [requirement, version, matches]
  const table: [string, string, boolean][] = [
    // A bare full version means exactly that version (cargo install --version).
    ['1.2.3', '1.2.3', true],
    ['1.2.3', '1.2.4', false],
    ['=1.2.3', '1.2.3', true],
    ['=1.2.3', '1.3.0', false],
    // Partial versions without an operator are caret requirements.
    ['1.2', '1.2.0', true],
    ['1.2', '1.9.9', true],
    ['1.2', '2.0.0', false],
    ['1.2', '1.1.9', false],
    ['1', '1.99.0', true],
    ['1', '2.0.0', false],
    ['0.3', '0.3.7', true],
    ['0.3', '0.4.0', false],
    // Caret.
    ['^1.2.3', '1.2.3', true],
    ['^1.2.3', '1.9.0', true],
    ['^1.2.3', '2.0.0', false],
    ['^1.2.3', '1.2.2', false],
    ['^0.3', '0.3.9', true],
    ['^0.3', '0.4.0', false],
    ['^0.0.3', '0.0.3', true],
    ['^0.0.3', '0.0.4', false],
    ['^0', '0.9.0', true],
    ['^0', '1.0.0', false],
    // Tilde.
    ['~1.2.3', '1.2.9', true],
    ['~1.2.3', '1.3.0', false],
    ['~1.2', '1.2.5', true],
    ['~1.2', '1.3.0', false],
    ['~1', '1.9.0', true],
    ['~1', '2.0.0', false],
    // Comparators joined by commas (AND), whitespace after operators allowed.
    ['>=1.2, <2', '1.5.0', true],
    ['>=1.2, <2', '2.0.0', false],
    ['>=1.2, <2', '1.1.0', false],
    ['>= 1.2, < 2', '1.5.0', true],
    ['>1.2.3', '1.2.4', true],
    ['<=1.2.3', '1.2.3', true],
    ['<=1.2.3', '1.2.4', false],
    // Wildcards.
    ['1.*', '1.0.0', true],
    ['1.*', '1.9.9', true],
    ['1.*', '2.0.0', false],
    ['1.2.*', '1.2.9', true],
    ['1.2.*', '1.3.0', false],
    ['1.x', '1.4.0', true],
    ['*', '0.0.1', true],
    ['*', '9.0.0', true],
    // `*` never matches a pre-release.
    ['*', '1.0.0-alpha', false],
    ['1.*', '1.1.0-beta', false],
    // Pre-releases match only when a comparator has the same M.m.p and a pre-release tag.
    ['^1.0.0', '1.1.0-beta', false],
    ['^1.0.0-alpha', '1.0.0-beta', true],
    ['^1.0.0-alpha', '1.0.0', true],
    ['^1.0.0-alpha', '1.1.0', true],
    ['^1.0.0-alpha', '1.0.1-alpha', false],
    ['>=1.0.0-alpha, <2', '1.0.0-rc.1', true],
    ['>=1.0.0-alpha, <2', '1.5.0-beta', false],
    ['1.0.0-alpha', '1.0.0-alpha', true],
    ['1.0.0-alpha', '1.0.0-beta', false],
    ['~1.2.3-beta.2', '1.2.3-beta.10', true],
    ['~1.2.3-beta.2', '1.2.3-beta.1', false],
    // Build metadata is ignored when matching.
    ['1.2.3+build.5', '1.2.3', true],
    ['1.2.3', '1.2.3+other', true],
    ['^1.2', '1.2.3+meta', true],
    ['=0.11.0+wasi', '0.11.0+other', true],
  ];
  it.each(table)('%s vs %s -> %s', (req, vers, expected) => {
    const v = parseCargoVersion(vers);
    expect(v).toBeDefined();
    expect(satisfiesRequirement(v!, parseCargoRequirement(req))).toBe(expected);
  });

  it('marks exactly named versions', () => {
    expect(parseCargoRequirement('1.2.3').exact).toBe('1.2.3');
    expect(parseCargoRequirement('=1.2.3-rc.1').exact).toBe('1.2.3-rc.1');
    expect(parseCargoRequirement('1.2.3+b1')).toMatchObject({ exact: '1.2.3', exactBuild: 'b1', range: '=1.2.3' });
    expect(parseCargoRequirement('1.2').exact).toBeUndefined();
    expect(parseCargoRequirement('^1.2.3').exact).toBeUndefined();
    expect(parseCargoRequirement('>=1.2.3').exact).toBeUndefined();
  });

  it.each([
    ['v1.2.3', /leading "v"/],
    ['=v1.2', /leading "v"/],
    ['V1', /leading "v"/],
    ['01.2.3', /leading zeros/],
    ['1.02', /leading zeros/],
    ['1.2.3-01', /pre-release/],
    ['1.2.3 || 2', /"\|\|"/],
    ['1.2 - 1.4', /hyphen ranges/],
    ['>=1.2 <2', /separated by commas/],
    ['', /empty/],
    ['  ', /empty/],
    ['1.2,', /stray comma/],
    [',', /stray comma/],
    ['^', /missing its version/],
    ['latest', /not a version/],
    ['1.2.3.4', /not a version/],
    ['*, <2', /only comparator/],
    ['1.*.3', /wildcard/],
    ['1.2-beta', /full version/],
    ['1.2.3+', /build metadata/],
  ])('refuses %j', (req, re) => {
    expect(() => parseCargoRequirement(req)).toThrow(re);
    try {
      parseCargoRequirement(req);
    } catch (e) {
      expect((e as { code: string }).code).toBe('E_USAGE');
    }
  });

  it('reads versions the way cargo does (npm leniency refused)', () => {
    expect(parseCargoVersion('1.2.3')?.canonical).toBe('1.2.3');
    expect(parseCargoVersion('0.11.0+wasi')).toMatchObject({ raw: '0.11.0+wasi', canonical: '0.11.0', prerelease: false });
    expect(parseCargoVersion('1.0.0-rc.1')?.prerelease).toBe(true);
    for (const bad of ['v1.2.3', '=1.2.3', '1.2', '01.2.3', ' 1.2.3', '1.2.3-', '1.2.3-a..b', '99999999999999999999.0.0']) {
      expect(parseCargoVersion(bad), bad).toBeUndefined();
    }
  });
});

function line(vers: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ name: 'yolop-extension-x', vers, deps: [], cksum: CK, features: {}, yanked: false, ...extra });
}
const entriesOf = (...lines: string[]) => parseIndexFile(`${lines.join('\n')}\n`, 'yolop-extension-x', 'test').entries;

describe('index lines, parsed as cargo does (B12)', () => {
  it('skips bad lines, newer schemas and other names; ignores unknown fields', () => {
    const parsed = parseIndexFile(
      [
        line('1.0.0'),
        '{not json',
        line('1.1.0', { v: 3 }),
        line('1.2.0', { v: 2, features2: { a: [] }, brand_new_field: { x: 1 } }),
        JSON.stringify({ name: 'other-crate', vers: '9.0.0', cksum: CK }),
        line('v1.3.0'),
        line('1.4.0', { yanked: 'yes' }),
        '[1,2,3]',
        '',
        line('1.5.0', { yanked: undefined }),
      ].join('\n'),
      'YOLOP-extension-X',
      'test',
    );
    expect(parsed.entries.map((e) => e.vers)).toEqual(['1.0.0', '1.2.0', '1.5.0']);
    expect(parsed.entries[2]!.yanked).toBe(false);
    expect(parsed.skipped).toBe(6);
  });

  it('keeps a version whose cksum is missing or malformed, so it can be refused by name', () => {
    const entries = entriesOf(line('1.0.0', { cksum: undefined }), line('1.1.0', { cksum: 42 }));
    expect(entries.map((e) => [e.vers, e.cksum])).toEqual([
      ['1.0.0', ''],
      ['1.1.0', ''],
    ]);
  });

  it('refuses an HTML page served with status 200', () => {
    expect(() => parseIndexFile('<!DOCTYPE html><html><head></head><body>login</body></html>', 'x', 'https://idx/x')).toThrow(/HTML page/);
    expect(() => parseIndexFile('\n  <html lang="en"><head>', 'x', 'w')).toThrow(/HTML page/);
  });
});

describe('pickVersions: what install takes', () => {
  it('takes the highest stable, non-yanked version by default, whatever the publish order', () => {
    const e = entriesOf(line('0.2.0'), line('0.10.0'), line('0.9.0'), line('0.11.0', { yanked: true }), line('1.0.0-beta.1'));
    expect(chooseVersion('x', e).entry.vers).toBe('0.10.0');
  });

  it('applies a requirement', () => {
    const e = entriesOf(line('0.3.0'), line('0.3.1'), line('0.4.0'), line('1.0.0'));
    expect(chooseVersion('x', e, '^0.3').entry.vers).toBe('0.3.1');
    expect(chooseVersion('x', e, '~0.3.0').entry.vers).toBe('0.3.1');
    expect(chooseVersion('x', e, '0.3.0').entry.vers).toBe('0.3.0');
    expect(chooseVersion('x', e, '>=0.3, <1').entry.vers).toBe('0.4.0');
    expect(chooseVersion('x', e, '*').entry.vers).toBe('1.0.0');
  });

  it('allows an exactly named yanked version, with a warning (B13)', () => {
    const e = entriesOf(line('1.0.0'), line('1.0.1', { yanked: true }));
    const c = chooseVersion('x', e, '1.0.1');
    expect(c.entry.vers).toBe('1.0.1');
    expect(c.warnings.join()).toMatch(/yanked; installing it because you named it exactly/);
    expect(chooseVersion('x', e, '=1.0.1').entry.vers).toBe('1.0.1');
    // A requirement is not an exact name: yanked versions stay out.
    expect(chooseVersion('x', e, '^1.0').entry.vers).toBe('1.0.0');
  });

  it('says when every version is yanked (B13)', () => {
    const e = entriesOf(line('1.0.0', { yanked: true }), line('1.1.0', { yanked: true }));
    expect(() => chooseVersion('x', e)).toThrow(/Every release of x is yanked/);
    expect(() => chooseVersion('x', e, '^1')).toThrow(/Only yanked versions of x match \^1/);
  });

  it('says when only pre-releases exist, and installs one named exactly (B13)', () => {
    const e = entriesOf(line('1.0.0-alpha.1'), line('1.0.0-beta.2'));
    const err = (() => {
      try {
        chooseVersion('x', e);
      } catch (x) {
        return x as { code: string; message: string; hint: string };
      }
    })();
    expect(err?.code).toBe('E_NOT_FOUND');
    expect(err?.message).toMatch(/only pre-release versions \(1\.0\.0-beta\.2, 1\.0\.0-alpha\.1\)/);
    expect(err?.hint).toMatch(/x@1\.0\.0-beta\.2/);
    expect(chooseVersion('x', e, '1.0.0-alpha.1').entry.vers).toBe('1.0.0-alpha.1');
    expect(chooseVersion('x', e, '^1.0.0-alpha').entry.vers).toBe('1.0.0-beta.2');
    expect(() => chooseVersion('x', e, '^1')).toThrow(/No version of x matches \^1/);
  });

  it('lists what is available when nothing matches', () => {
    const e = entriesOf(line('0.1.0'), line('0.2.0'), line('0.3.0', { yanked: true }));
    try {
      chooseVersion('x', e, '^2');
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toBe('No version of x matches ^2.');
      expect((err as { hint: string }).hint).toBe('Available: 0.2.0, 0.1.0.');
    }
  });

  it('never picks a version without a valid cksum (B11)', () => {
    for (const bad of [undefined, '', 'a'.repeat(63), 'A'.repeat(64), 'g'.repeat(64), `${'a'.repeat(64)}zz`]) {
      const e = entriesOf(line('1.0.0', { cksum: bad }));
      try {
        chooseVersion('x', e);
        expect.unreachable();
      } catch (err) {
        expect((err as { code: string }).code).toBe('E_INTEGRITY');
        expect((err as Error).message).toMatch(/no valid checksum/);
      }
    }
  });

  it('falls back past an unverifiable newest version, saying so', () => {
    const e = entriesOf(line('1.0.0'), line('1.1.0', { cksum: 'nope' }));
    const c = chooseVersion('x', e);
    expect(c.entry.vers).toBe('1.0.0');
    expect(c.warnings.join()).toMatch(/skipped x 1\.1\.0: the index gives no valid checksum/);
  });

  it('prefers the exact build when several builds share a version', () => {
    const e = entriesOf(line('1.0.0+a'), line('1.0.0+b'));
    expect(chooseVersion('x', e, '1.0.0+a').entry.vers).toBe('1.0.0+a');
    expect(chooseVersion('x', e, '1.0.0+b').entry.vers).toBe('1.0.0+b');
  });

  it('refuses a requirement cargo would refuse', () => {
    expect(() => chooseVersion('x', entriesOf(line('1.2.3')), 'v1.2.3')).toThrow(/leading "v"/);
  });

  it('says so when no line is readable', () => {
    expect(() => chooseVersion('x', [])).toThrow(/no version of x that yep-ext can read/);
  });
});

describe('download URL (dl markers and the no-marker rule)', () => {
  const t = { name: 'Yolop-extension-lsp', vers: '1.0.0+build.1', cksum: CK };
  it('appends /{crate}/{version}/download when no marker is present', () => {
    expect(buildDownloadUrl('https://static.crates.io/crates', t)).toBe('https://static.crates.io/crates/Yolop-extension-lsp/1.0.0+build.1/download');
    expect(buildDownloadUrl('https://mirror.example/dl/', t)).toBe('https://mirror.example/dl/Yolop-extension-lsp/1.0.0+build.1/download');
  });
  it('substitutes all five markers, raw', () => {
    expect(buildDownloadUrl('https://m.example/{prefix}/{lowerprefix}/{crate}/{crate}-{version}.crate?sum={sha256-checksum}', t)).toBe(
      `https://m.example/Yo/lo/yo/lo/Yolop-extension-lsp/Yolop-extension-lsp-1.0.0+build.1.crate?sum=${CK}`,
    );
    expect(buildDownloadUrl('https://m.example/{prefix}/{crate}', { name: 'abc', vers: '1.0.0', cksum: CK })).toBe('https://m.example/3/a/abc');
  });
});
