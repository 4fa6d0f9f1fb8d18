import { describe, expect, it } from 'vitest';
import { TarFormatError, decodeHeader, decodeNumber, parseLongName, parsePaxRecords, parsePaxSize } from '../../src/core/archive/tar-header.js';
import { PolicyViolation, TreeIndex, entryComponents, foldName, normalizeMode } from '../../src/core/archive/unpack-policy.js';
import { paxRecord, tarHeader } from '../helpers/tar-builder.js';

const ROOT = 'demo-1.0.0';
const LIMITS = { maxPathBytes: 1024, maxDepth: 64 };

function ruleOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof PolicyViolation || e instanceof TarFormatError) return e.rule;
    throw e;
  }
  return undefined;
}

describe('entryComponents', () => {
  it('strips the crate root and accepts nested paths and a trailing slash on directories', () => {
    expect(entryComponents('demo-1.0.0/src/lib.rs', false, ROOT, LIMITS)).toEqual(['src', 'lib.rs']);
    expect(entryComponents('demo-1.0.0/src/', true, ROOT, LIMITS)).toEqual(['src']);
    expect(entryComponents('demo-1.0.0/', true, ROOT, LIMITS)).toEqual([]);
    expect(entryComponents('demo-1.0.0/.hidden/ü ñ.txt', false, ROOT, LIMITS)).toEqual(['.hidden', 'ü ñ.txt']);
  });

  it.each([
    ['demo-1.0.0/../escape', 'dotdot'],
    ['demo-1.0.0/a/../../escape', 'dotdot'],
    ['../escape', 'dotdot'],
    ['/etc/cron.d/x', 'absolute'],
    ['////home/u/.bashrc', 'absolute'],
    ['C:foo', 'drive-letter'],
    ['demo-1.0.0/C:foo', 'drive-letter'],
    ['\\\\?\\C:\\x', 'backslash'],
    ['demo-1.0.0/a\\..\\..\\x', 'backslash'],
    ['demo-1.0.0//x', 'empty-component'],
    ['demo-1.0.0/./x', 'dot'],
    ['demo-1.0.0/a\u001b[31m', 'control-char'],
    ['demo-1.0.0/a\nb', 'control-char'],
    ['', 'empty-path'],
    ['other-1.0.0/x', 'root'],
    ['Demo-1.0.0/x', 'root'],
    ['demo-1.0.1/x', 'root'],
    ['Cargo.toml', 'root'],
    ['demo-1.0.0/file/', 'trailing-slash'],
    [`demo-1.0.0/${'a/'.repeat(65)}f`, 'depth'],
    [`demo-1.0.0/${'x'.repeat(1100)}`, 'path-length'],
    [`demo-1.0.0/${'x'.repeat(256)}`, 'name-length'],
    [`demo-1.0.0/${'é'.repeat(128)}/f`, 'name-length'],
  ])('refuses %j (%s)', (path, rule) => {
    expect(ruleOf(() => entryComponents(path, false, ROOT, LIMITS))).toBe(rule);
  });

  it('accepts a 255-byte name', () => {
    expect(entryComponents(`demo-1.0.0/${'x'.repeat(255)}`, false, ROOT, LIMITS)).toEqual(['x'.repeat(255)]);
  });

  it('counts the path limit in UTF-8 bytes and depth below the root', () => {
    const path = `demo-1.0.0/${'é'.repeat(510)}`; // 11 + 1020 bytes > 1024, but only 521 characters
    expect(ruleOf(() => entryComponents(path, false, ROOT, LIMITS))).toBe('path-length');
    expect(entryComponents(`demo-1.0.0/${'a/'.repeat(63)}f`, false, ROOT, LIMITS)).toHaveLength(64);
  });
});

describe('normalizeMode', () => {
  it.each([
    [0o755, 0o755],
    [0o4755, 0o755],
    [0o2755, 0o755],
    [0o1777, 0o755],
    [0o777, 0o755],
    [0o700, 0o755],
    [0o100, 0o755],
    [0o644, 0o644],
    [0o666, 0o644],
    [0o600, 0o644],
    [0o4644, 0o644],
    [0, 0o644],
  ])('file %s -> %s', (mode, want) => {
    expect(normalizeMode(mode, false)).toBe(want);
  });

  it('directories are always 0755', () => {
    expect(normalizeMode(0o700, true)).toBe(0o755);
    expect(normalizeMode(0o1777, true)).toBe(0o755);
  });
});

describe('TreeIndex', () => {
  it('returns the directories to create, parents first, once', () => {
    const t = new TreeIndex(ROOT);
    expect(t.addFile(['a', 'b', 'f'], 'e')).toEqual(['a', 'a/b']);
    expect(t.addFile(['a', 'b', 'g'], 'e')).toEqual([]);
    expect(t.addDir(['a', 'b'], 'e')).toEqual([]); // explicit entry for an implicit directory: once
    expect(t.addDir(['c'], 'e')).toEqual(['c']);
    expect(t.addDir([], 'e')).toEqual([]);
  });

  it.each([
    ['case', [['README'], ['readme']], 'collision'],
    ['NFC vs NFD', [['caf\u00e9'], ['cafe\u0301']], 'collision'],
    [
      'directory case',
      [
        ['Src', 'a'],
        ['src', 'b'],
      ],
      'collision',
    ],
    ['same file twice', [['a'], ['a']], 'duplicate'],
    ['file then directory inside', [['a'], ['a', 'b']], 'file-dir-conflict'],
  ])('refuses %s', (_label, files, rule) => {
    const t = new TreeIndex(ROOT);
    expect(
      ruleOf(() => {
        for (const f of files as string[][]) t.addFile(f, f.join('/'));
      }),
    ).toBe(rule);
  });

  it('refuses a directory entry twice, and a file and a directory of one name', () => {
    const t = new TreeIndex(ROOT);
    t.addDir(['d'], 'd');
    expect(ruleOf(() => t.addDir(['d'], 'd'))).toBe('duplicate');
    expect(ruleOf(() => t.addFile(['d'], 'd'))).toBe('file-dir-conflict');
    expect(ruleOf(() => t.addDir(['D'], 'D'))).toBe('collision');
    t.addFile(['f'], 'f');
    expect(ruleOf(() => t.addDir(['f'], 'f'))).toBe('file-dir-conflict');
    t.addDir([], 'root');
    expect(ruleOf(() => t.addDir([], 'root'))).toBe('duplicate');
  });

  it('keeps a path whose folded name differs (upper case) with its kind: duplicates, conflicts and collisions as for lower case', () => {
    const t = new TreeIndex(ROOT);
    expect(t.addFile(['Src', 'Main.rs'], 'e')).toEqual(['Src']);
    expect(t.addDir(['Src'], 'e')).toEqual([]); // the implicit directory's own entry, once
    expect(ruleOf(() => t.addDir(['Src'], 'e'))).toBe('duplicate');
    expect(ruleOf(() => t.addFile(['Src'], 'e'))).toBe('file-dir-conflict');
    expect(ruleOf(() => t.addFile(['Src', 'Main.rs'], 'e'))).toBe('duplicate');
    expect(ruleOf(() => t.addDir(['Src', 'Main.rs'], 'e'))).toBe('file-dir-conflict');
    expect(ruleOf(() => t.addFile(['Src', 'Main.rs', 'x'], 'e'))).toBe('file-dir-conflict');
    expect(ruleOf(() => t.addFile(['src', 'b'], 'e'))).toBe('collision');
    expect(ruleOf(() => t.addFile(['Src', 'main.RS'], 'e'))).toBe('collision');
    expect(() => t.addFile(['src', 'b'], 'e')).toThrow(/"demo-1\.0\.0\/src" and "demo-1\.0\.0\/Src" differ only in letter case/);
    expect(t.addFile(['Src', 'Other.rs'], 'e')).toEqual([]);
    expect(t.size).toBe(3);
  });

  it('holds one map entry per path and, for a lower-case path, no string of its own (flat peak RSS)', () => {
    // What each entry keeps is what survives V8's young collections and grows its young
    // generation on a 20,000-file crate: one number per lower-case path, the caller's string as key.
    const t = new TreeIndex(ROOT);
    for (let i = 0; i < 300; i++) t.addFile(['src', `m${i % 3}`, `file${i}.rs`], 'e', `src/m${i % 3}/file${i}.rs`);
    t.addFile(['README.md'], 'e');
    expect(t.size).toBe(300 + 4 + 1);
    const values = [...(t as unknown as { byFold: Map<string, unknown> }).byFold.values()];
    expect(values.filter((v) => typeof v === 'string')).toEqual(['1README.md']);
  });

  it('folds case and normalization together', () => {
    expect(foldName('CAFE\u0301')).toBe(foldName('caf\u00e9'));
  });
});

describe('tar header decoding', () => {
  const header = (over: Parameters<typeof tarHeader>[0]) => tarHeader(over);

  it('decodes GNU and ustar headers, joining the ustar prefix', () => {
    const g = decodeHeader(header({ name: Buffer.from('demo-1.0.0/a'), size: 5, typeflag: '0', mode: 0o4755 }), 0);
    expect(g).toMatchObject({ mode: 0o4755, size: 5, type: '0', format: 'gnu' });
    expect(g.name.toString()).toBe('demo-1.0.0/a');
    const u = decodeHeader(header({ name: Buffer.from('f'), prefix: Buffer.from('demo-1.0.0/dir'), size: 0, typeflag: '5', format: 'ustar' }), 0);
    expect(u.name.toString()).toBe('demo-1.0.0/dir/f');
    expect(u.type).toBe('5');
  });

  it('reports an old NUL typeflag as a regular file', () => {
    expect(decodeHeader(header({ name: Buffer.from('x'), size: 0, typeflag: '\0' }), 0).type).toBe('0');
  });

  it('refuses a bad checksum, an unknown format, a negative or malformed size', () => {
    expect(ruleOf(() => decodeHeader(header({ name: Buffer.from('x'), size: 0, typeflag: '0', badChecksum: true }), 0))).toBe('bad-checksum');
    const v7 = header({ name: Buffer.from('x'), size: 0, typeflag: '0' });
    v7.fill(0, 257, 265);
    // fix the checksum so only the magic is wrong
    v7.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of v7) sum += b;
    v7.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
    expect(ruleOf(() => decodeHeader(v7, 0))).toBe('bad-format');
    expect(ruleOf(() => decodeHeader(header({ name: Buffer.from('x'), size: 0, typeflag: '0', sizeField: 'negative' }), 0))).toBe('negative-number');
    expect(ruleOf(() => decodeHeader(header({ name: Buffer.from('x'), size: 0, typeflag: '0', sizeField: Buffer.from('0000000012x\0') }), 0))).toBe(
      'bad-number',
    );
  });

  it('decodes octal with space padding and base-256 numbers', () => {
    expect(decodeNumber(Buffer.from(' 644 \0\0\0'), 0, 8, 'mode')).toBe(0o644);
    expect(decodeNumber(Buffer.alloc(8), 0, 8, 'mode')).toBe(0);
    const big = Buffer.alloc(12);
    big[0] = 0x80;
    big.writeUInt32BE(1234567, 8);
    expect(decodeNumber(big, 0, 12, 'size')).toBe(1234567);
    const odd = Buffer.alloc(12);
    odd[0] = 0x81;
    expect(ruleOf(() => decodeNumber(odd, 0, 12, 'size'))).toBe('bad-number');
  });
});

describe('PAX records and GNU long names', () => {
  it('parses well-formed records, last one wins', () => {
    const data = Buffer.concat([paxRecord('path', 'demo-1.0.0/é'), paxRecord('mtime', '1.5'), paxRecord('path', 'demo-1.0.0/b')]);
    const r = parsePaxRecords(data);
    expect(r.get('path')?.toString()).toBe('demo-1.0.0/b');
    expect(r.get('mtime')?.toString()).toBe('1.5');
  });

  it.each([
    ['a NUL in a value', paxRecord('path', 'demo-1.0.0/a\0/../../x'), 'pax-nul'],
    ['a NUL in a key', paxRecord('pa\0th', 'x'), 'pax-nul'],
    ['a wrong length', Buffer.from('99 path=x\n'), 'bad-pax'],
    ['no newline', Buffer.from('9 path=xy'), 'bad-pax'],
    ['no key', Buffer.from('6 =xy\n'), 'bad-pax'],
    ['junk', Buffer.from('hello'), 'bad-pax'],
    ['a leading zero length', Buffer.from('010 path=x\n'), 'bad-pax'],
  ])('refuses %s', (_l, data, rule) => {
    expect(ruleOf(() => parsePaxRecords(data))).toBe(rule);
  });

  it('accepts plain decimal sizes only', () => {
    expect(parsePaxSize(Buffer.from('123'))).toBe(123);
    expect(ruleOf(() => parsePaxSize(Buffer.from('-1')))).toBe('negative-number');
    for (const bad of ['1e3', '+5', '1.5', '', ' 5', '0x10', '99999999999999999']) {
      expect(ruleOf(() => parsePaxSize(Buffer.from(bad)))).toBe('bad-pax');
    }
  });

  it('takes a GNU long name up to its NUL padding, and refuses data after the NUL', () => {
    expect(parseLongName(Buffer.from('abc\0\0\0')).toString()).toBe('abc');
    expect(parseLongName(Buffer.from('abc')).toString()).toBe('abc');
    expect(ruleOf(() => parseLongName(Buffer.from('abc\0../x')))).toBe('longname-nul');
  });
});

describe('collision key: full Unicode case folding after normalisation', () => {
  // Pairs one file system or another treats as one name; the key must join each.
  it.each([
    ['server', 'ſerver', 'long s (U+017F) folds to s'],
    ['σ.txt', 'ς.txt', 'final sigma folds to sigma'],
    ['Σ.txt', 'ς.txt', 'capital sigma and final sigma'],
    ['β.txt', 'ϐ.txt', 'beta symbol (U+03D0) folds to beta'],
    ['θ', 'ϑ', 'theta symbol (U+03D1)'],
    ['\u00b5', '\u03bc', 'micro sign (U+00B5) and mu'],
    ['K', '\u212a', 'Kelvin sign (U+212A) and K'],
    ['\u00c5', '\u212b', 'Angstrom sign (U+212B) and A with ring'],
    ['straße', 'STRASSE', 'sharp s folds to ss (status F)'],
    ['ẞ', 'ß', 'capital sharp s (U+1E9E)'],
    ['ﬁle', 'file', 'fi ligature (U+FB01, status F)'],
    ['ı', 'I', 'dotless i: NTFS upcases it to I'],
    ['ı', 'i', 'dotless i and i: NTFS upcases both to I'],
    ['ͅ', 'ι', 'combining ypogegrammeni (U+0345) folds to iota'],
    ['ᾳ', 'αι', 'alpha with ypogegrammeni (status F)'],
    ['café', 'cafe\u0301', 'NFC vs NFD'],
    ['CAFÉ', 'cafe\u0301', 'case and normalisation together'],
    ['Ǆ', 'ǆ', 'titlecase digraphs'],
    ['ǅ', 'ǆ', 'titlecase digraphs'],
    ['Ꭰ', 'ꭰ', 'Cherokee (folds to upper case)'],
    ['𐐀', '𐐨', 'Deseret, outside the BMP'],
  ])('%s ~ %s (%s)', (a, b) => {
    expect(foldName(a)).toBe(foldName(b));
    const t = new TreeIndex(ROOT);
    t.addFile(['bin', a], `bin/${a}`);
    expect(ruleOf(() => t.addFile(['bin', b], `bin/${b}`))).toBe('collision');
  });

  it.each([
    ['i', 'İ', 'dotted capital I folds to i + combining dot, not i'],
    ['a', 'b', 'different letters'],
    ['ss', 's', 'different lengths'],
    ['ﬀ', 'f', 'ff ligature is two letters'],
    ['Ａ', 'A', 'full-width letters are other names (no file system joins them)'],
  ])('%s and %s stay apart (%s)', (a, b) => {
    expect(foldName(a)).not.toBe(foldName(b));
  });

  it('the ASCII fast path agrees with the full key', () => {
    for (let c = 0; c < 128; c++) {
      const s = `x${String.fromCharCode(c)}Y`;
      expect(foldName(s)).toBe(foldName(`${s}\u00e9`).slice(0, -2));
    }
  });
});
