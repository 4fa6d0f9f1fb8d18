/**
 * unpackCrate against real temp directories: hostile archives built byte by byte
 * (hardening.md A1-A8), archives written by real tools (GNU tar, node-tar, cargo),
 * and the modes, caps and deadline rules of docs/unpack.md.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as tar from 'tar';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { YepError } from '../../src/core/errors.js';
import { TarExtractor } from '../../src/core/archive/tar-extract.js';
import { unpackCrate, unpackLimits, type UnpackLimits } from '../../src/core/archive/unpack.js';
import { contentHash } from '../../src/core/package/content-hash.js';
import { buildCrate, buildTar, crateEntries, crateEntriesFromDir, paxRecord, type TarEntry } from '../helpers/tar-builder.js';
import { cachedCrate } from '../helpers/crate-cache.js';
import { noise } from '../helpers/noise.js';
import { itNeeding, need } from '../helpers/needs.js';

const NAME = 'demo';
const VERSION = '1.0.0';
const ROOT = `${NAME}-${VERSION}`;

let base: string;
let stage: string;
let into: string;
let crateFile: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'yep-unpack-')));
  stage = join(base, 'stage');
  mkdirSync(stage);
  into = join(stage, 'pkg');
  crateFile = join(base, 'in.crate');
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** Every path under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(e.isDirectory() ? `${r}/` : r);
      if (e.isDirectory()) walk(join(d, e.name), r);
    }
  };
  walk(dir, '');
  return out.sort();
}

function mode(path: string): number {
  return statSync(path).mode & 0o7777;
}

function unpack(archive: Buffer | TarEntry[], limits?: Partial<UnpackLimits>, extra: { crateName?: string; version?: string; signal?: AbortSignal } = {}) {
  const data = Buffer.isBuffer(archive) ? archive : cachedCrate(archive);
  writeFileSync(crateFile, data);
  return unpackCrate(crateFile, into, {
    crateName: extra.crateName ?? NAME,
    version: extra.version ?? VERSION,
    compressedSize: data.length,
    ...(limits ? { limits } : {}),
    ...(extra.signal ? { signal: extra.signal } : {}),
  });
}

/** Assert rejection: E_UNSAFE_PACKAGE, message and rule, `into` gone, nothing else written anywhere under base. */
async function expectRejected(archive: Buffer | TarEntry[], message: RegExp, rule: string, limits?: Partial<UnpackLimits>): Promise<YepError> {
  const data = Buffer.isBuffer(archive) ? archive : buildCrate(archive);
  const err = await unpack(data, limits).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the archive was accepted').toBeInstanceOf(YepError);
  const y = err as YepError;
  expect(y.code).toBe('E_UNSAFE_PACKAGE');
  expect(y.message).toMatch(message);
  expect(y.message).toContain(`${NAME}@${VERSION}`);
  expect(y.details?.rule).toBe(rule);
  expect(y.hint).toBeTruthy();
  expect(existsSync(into)).toBe(false);
  expect(tree(base)).toEqual(['in.crate', 'stage/']);
  return y;
}

const file = (rel: string, content: string | Uint8Array = 'x', extra: Partial<TarEntry> = {}): TarEntry => ({ path: `${ROOT}/${rel}`, content, ...extra });
const good = file('Cargo.toml', '[package]\n');

describe('accepted archives', () => {
  it('unpacks a cargo-shaped crate with the root stripped, nested directories and contents intact', async () => {
    const big = noise('big', 3 * 1024 * 1024 + 123); // spans several 1 MiB chunks
    await unpack(
      crateEntries(NAME, VERSION, {
        'Cargo.toml': '[package]\nname = "demo"\n',
        'plugin.json': '{"name":"demo"}',
        'src/deep/er/lib.rs': 'fn main() {}\n',
        'data/big.bin': big,
        'empty.txt': '',
        'bin/server': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
      }),
    );
    expect(tree(into)).toEqual([
      'Cargo.toml',
      'bin/',
      'bin/server',
      'data/',
      'data/big.bin',
      'empty.txt',
      'plugin.json',
      'src/',
      'src/deep/',
      'src/deep/er/',
      'src/deep/er/lib.rs',
    ]);
    expect(readFileSync(join(into, 'src/deep/er/lib.rs'), 'utf8')).toBe('fn main() {}\n');
    expect(readFileSync(join(into, 'data/big.bin')).equals(big)).toBe(true);
    expect(statSync(join(into, 'empty.txt')).size).toBe(0);
    expect(mode(join(into, 'bin/server'))).toBe(0o755);
    expect(mode(join(into, 'plugin.json'))).toBe(0o644);
    expect(mode(into)).toBe(0o755);
    expect(mode(join(into, 'src/deep'))).toBe(0o755);
    expect(statSync(join(into, 'plugin.json')).uid).toBe(process.getuid!());
  });

  it('writes every byte of a highly compressible archive (one read inflates to many MiB in the reused output buffer)', async () => {
    // 16 KiB random blocks, each stamped with its index: deflate shrinks the 12 MiB
    // file to a few hundred KiB, so one 1 MiB read comes out as a dozen 1 MiB
    // buffers in a row, and a stale or overwritten buffer shows as a wrong stamp.
    const block = noise('block', 16 * 1024);
    const big = Buffer.alloc(12 * 1024 * 1024);
    for (let i = 0; i < big.length / block.length; i++) {
      block.copy(big, i * block.length);
      big.writeUInt32LE(i, i * block.length);
    }
    const small: Record<string, string> = {};
    for (let i = 0; i < 300; i++) small[`many/f${String(i).padStart(3, '0')}.txt`] = `file ${i}\n`.repeat(1 + (i % 40));
    const hasher = await unpack(crateEntries(NAME, VERSION, { 'Cargo.toml': '[package]\n', 'a/big.bin': big, ...small, 'z/last.txt': 'last\n' }));
    expect(readFileSync(join(into, 'a/big.bin')).equals(big)).toBe(true);
    for (const [rel, text] of Object.entries(small)) expect(readFileSync(join(into, rel), 'utf8')).toBe(text);
    expect(readFileSync(join(into, 'z/last.txt'), 'utf8')).toBe('last\n');
    // The hash fed from the same buffers is the hash of the tree as written.
    expect(await hasher.digest(into)).toBe(await contentHash(into));
  });

  it('normalises modes: any exec bit -> 0755, else 0644; directories 0755; no setuid/setgid/sticky or group/world write', async () => {
    const modes: Record<string, number> = { a: 0o755, b: 0o4755, c: 0o2755, d: 0o1777, e: 0o777, f: 0o666, g: 0o600, h: 0o700, i: 0o6644 };
    await unpack([
      { path: `${ROOT}/dir/`, type: 'dir', mode: 0o1777 },
      { path: `${ROOT}/private/`, type: 'dir', mode: 0o700 },
      ...Object.entries(modes).map(([n, m]) => file(`dir/${n}`, n, { mode: m })),
    ]);
    const got = Object.fromEntries(Object.keys(modes).map((n) => [n, mode(join(into, 'dir', n))]));
    expect(got).toEqual({ a: 0o755, b: 0o755, c: 0o755, d: 0o755, e: 0o755, f: 0o644, g: 0o644, h: 0o755, i: 0o644 });
    expect(mode(join(into, 'dir'))).toBe(0o755);
    expect(mode(join(into, 'private'))).toBe(0o755);
  });

  it('gives the same modes under a restrictive or permissive umask', async () => {
    for (const umask of [0o077, 0o000]) {
      const old = process.umask(umask);
      try {
        rmSync(into, { recursive: true, force: true });
        await unpack([file('sub/x', 'x', { mode: 0o777 }), file('sub/y', 'y', { mode: 0o666 })]);
        expect([mode(into), mode(join(into, 'sub')), mode(join(into, 'sub/x')), mode(join(into, 'sub/y'))]).toEqual([0o755, 0o755, 0o755, 0o644]);
      } finally {
        process.umask(old);
      }
    }
  });

  it('carries long names by GNU ././@LongLink, PAX path and the ustar prefix', async () => {
    const long = (tag: string) => `${'d'.repeat(60)}/${tag}-${'n'.repeat(90)}.rs`;
    await unpack(
      buildCrate([
        file(long('gnu'), 'gnu', { longName: 'gnu' }),
        file(long('pax'), 'pax', { longName: 'pax', format: 'ustar' }),
        file(long('prefix'), 'prefix', { longName: 'prefix', format: 'ustar' }),
      ]),
    );
    for (const tag of ['gnu', 'pax', 'prefix']) expect(readFileSync(join(into, long(tag)), 'utf8')).toBe(tag);
  });

  it('ignores a .cargo-ok entry at the root (but not elsewhere), keeping the data around it aligned', async () => {
    await unpack([good, file('.cargo-ok', '{"v":1}'.repeat(100)), file('sub/.cargo-ok', 'kept'), file('after', 'after')]);
    expect(tree(into)).toEqual(['Cargo.toml', 'after', 'sub/', 'sub/.cargo-ok']);
    expect(readFileSync(join(into, 'after'), 'utf8')).toBe('after');
  });

  it('accepts explicit directory entries (root included), before or after their files, and PAX/global metadata it does not apply', async () => {
    await unpack([
      { path: `${ROOT}/`, type: 'dir' },
      file('src/lib.rs', 'lib', { pax: { mtime: '1700000000.5', 'SCHILY.xattr.user.x': 'y', uname: 'someone' } }),
      { path: `${ROOT}/src/`, type: 'dir' },
      { path: `${ROOT}/empty/`, type: 'dir' },
    ]);
    expect(tree(into)).toEqual(['empty/', 'src/', 'src/lib.rs']);
  });

  it('handles a version with build metadata in the root', async () => {
    await unpack(crateEntries(NAME, '1.0.0+build.5', { 'a.txt': 'a' }), undefined, { version: '1.0.0+build.5' });
    expect(tree(into)).toEqual(['a.txt']);
  });

  it('accepts archives written by GNU tar (gnu and posix formats) and by node-tar', async () => {
    const src = join(base, 'src');
    const longDir = `${'l'.repeat(70)}/${'m'.repeat(70)}`;
    mkdirSync(join(src, ROOT, longDir), { recursive: true });
    writeFileSync(join(src, ROOT, 'Cargo.toml'), 'toml');
    writeFileSync(join(src, ROOT, longDir, 'x.rs'), 'x');
    writeFileSync(join(src, ROOT, 'run.sh'), '#!/bin/sh\n', { mode: 0o775 });
    const want = ['Cargo.toml', `${'l'.repeat(70)}/`, `${'l'.repeat(70)}/${'m'.repeat(70)}/`, `${longDir}/x.rs`, 'run.sh'].sort();
    for (const format of ['gnu', 'posix']) {
      const out = join(base, `gnu-${format}.crate`);
      const r = spawnSync('tar', [`--format=${format}`, '-czf', out, '-C', src, ROOT]);
      expect(r.status, String(r.stderr)).toBe(0);
      rmSync(into, { recursive: true, force: true });
      await unpack(readFileSync(out));
      expect(tree(into)).toEqual(want);
      expect(mode(join(into, 'run.sh'))).toBe(0o755);
      rmSync(out);
    }
    const nt = join(base, 'node-tar.crate');
    await tar.c({ gzip: true, file: nt, cwd: src }, [ROOT]);
    rmSync(into, { recursive: true, force: true });
    await unpack(readFileSync(nt));
    expect(tree(into)).toEqual(want);
    rmSync(nt);
    rmSync(src, { recursive: true, force: true });
  });

  const cargo = spawnSync('cargo', ['--version']).status === 0;
  itNeeding(need(cargo, 'cargo (https://rustup.rs)'), 'unpacks a real .crate made by `cargo package`', async () => {
    const src = join(base, 'cargo-src');
    mkdirSync(join(src, 'src'), { recursive: true });
    mkdirSync(join(src, 'bin'));
    writeFileSync(
      join(src, 'Cargo.toml'),
      '[package]\nname = "yolop-extension-demo"\nversion = "0.3.1"\nedition = "2021"\ndescription = "d"\nlicense = "MIT"\n',
    );
    writeFileSync(join(src, 'src/main.rs'), 'fn main() {}\n');
    writeFileSync(join(src, 'bin/server'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(src, 'plugin.json'), '{}');
    const r = spawnSync('cargo', ['package', '--offline', '--no-verify', '--allow-dirty', '--quiet'], {
      cwd: src,
      env: { ...process.env, CARGO_TARGET_DIR: join(src, 'target') },
    });
    expect(r.status, String(r.stderr)).toBe(0);
    const data = readFileSync(join(src, 'target/package/yolop-extension-demo-0.3.1.crate'));
    rmSync(src, { recursive: true, force: true });
    await unpack(data, undefined, { crateName: 'yolop-extension-demo', version: '0.3.1' });
    expect(tree(into)).toEqual(['Cargo.lock', 'Cargo.toml', 'Cargo.toml.orig', 'bin/', 'bin/server', 'plugin.json', 'src/', 'src/main.rs']);
    expect(mode(join(into, 'bin/server'))).toBe(0o755);
  });
});

describe('A1: paths that leave the root', () => {
  it.each([
    [`${ROOT}/../escape`, /"demo-1\.0\.0\/\.\.\/escape".*"\.\." component/, 'dotdot'],
    [`${ROOT}/a/../../escape`, /"\.\." component/, 'dotdot'],
    ['/etc/cron.d/yep-unpack-test', /absolute path/, 'absolute'],
    ['////home/u/.bashrc', /absolute path/, 'absolute'],
    ['C:foo', /drive letter/, 'drive-letter'],
    ['\\\\?\\C:\\x', /backslash/, 'backslash'],
    [`${ROOT}/a\\..\\..\\x`, /backslash/, 'backslash'],
    [`${ROOT}//x`, /empty component/, 'empty-component'],
    [`${ROOT}/./x`, /"\." component/, 'dot'],
  ])('refuses %j', async (path, message, rule) => {
    const y = await expectRejected([good, { path, content: 'pwned' }], message, rule);
    expect(y.details?.entry).toBe(path);
  });

  it('refuses `..` and absolute paths carried by a GNU long name or a PAX path', async () => {
    await expectRejected([good, file(`${'a'.repeat(120)}/../../../escape`, 'x', { longName: 'gnu' })], /"\.\." component/, 'dotdot');
    await expectRejected([good, file('placeholder', 'x', { pax: { path: '/tmp/yep-unpack-escape' } })], /"\/tmp\/yep-unpack-escape".*absolute/, 'absolute');
    expect(existsSync('/tmp/yep-unpack-escape')).toBe(false);
  });

  it('neutralises control characters of a hostile name in the message', async () => {
    const y = await expectRejected([good, file('evil\u001b[2J\u0007', 'x')], /control character/, 'control-char');
    expect(y.message).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe('A2: entry types other than file and directory', () => {
  it.each([
    ['symlink inside the tree', { type: 'symlink', linkpath: 'Cargo.toml' }, /symbolic link/],
    ['symlink out of the tree', { type: 'symlink', linkpath: '/etc/passwd' }, /symbolic link/],
    ['hard link', { type: 'hardlink', linkpath: `${ROOT}/Cargo.toml` }, /hard link/],
    ['character device', { type: 'char' }, /character device/],
    ['block device', { type: 'block' }, /block device/],
    ['FIFO', { type: 'fifo' }, /FIFO/],
    ['contiguous file', { type: 'contiguous', content: 'x' }, /contiguous file/],
    ['GNU sparse file', { type: 'sparse', content: 'x' }, /GNU sparse file/],
    ['GNU long link name', { typeflag: 'K', content: 'x\0' }, /GNU long link name/],
    ['volume label', { typeflag: 'V' }, /volume label/],
    ['GNU dump directory', { typeflag: 'D' }, /GNU dump directory/],
    ['unknown type', { typeflag: 'Z' }, /unknown entry type 'Z'/],
  ] as const)('refuses a %s', async (_label, extra, message) => {
    await expectRejected(
      [good, { path: `${ROOT}/bad`, ...extra } as TarEntry, file('after')],
      new RegExp(`"demo-1.0.0/bad".*${message.source}.*only regular files and directories`),
      'entry-type',
    );
  });

  it('refuses a link target on a regular file, and PAX linkpath / sparse records', async () => {
    await expectRejected([good, file('f', 'x', { linkpath: '/etc/passwd' })], /link target/, 'link-target');
    await expectRejected([good, file('f', 'x', { pax: { linkpath: '/etc/passwd' } })], /PAX header carries a link target/, 'link-target');
    await expectRejected([good, file('f', 'x', { pax: { 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0' } })], /sparse file/, 'sparse');
  });

  it('removes files already written before the violation', async () => {
    await expectRejected(
      [good, file('src/a.rs', 'a'.repeat(100_000)), { path: `${ROOT}/link`, type: 'symlink', linkpath: '/' }],
      /symbolic link/,
      'entry-type',
    );
  });
});

describe('A3: roots', () => {
  it('refuses another root, mixed roots, a file at the top and a root file', async () => {
    await expectRejected(
      [{ path: 'other-1.0.0/Cargo.toml', content: 'x' }],
      /"other-1\.0\.0\/Cargo\.toml".*not under the crate's root directory "demo-1\.0\.0\/"/,
      'root',
    );
    await expectRejected([good, { path: 'other-1.0.0/x', content: 'x' }], /not under the crate's root/, 'root');
    await expectRejected([{ path: 'Cargo.toml', content: 'x' }], /not under the crate's root/, 'root');
    await expectRejected([{ path: `${NAME}-1.0.1/Cargo.toml`, content: 'x' }], /not under the crate's root/, 'root');
    await expectRejected([{ path: ROOT, content: 'x' }], /file in place of the root directory/, 'root');
  });
});

describe('A4: collisions', () => {
  it.each([
    ['case', ['README', 'readme'], 'collision', /"demo-1\.0\.0\/readme" and "demo-1\.0\.0\/README" differ only in letter case or Unicode normalization/],
    ['NFC vs NFD', ['caf\u00e9.txt', 'cafe\u0301.txt'], 'collision', /differ only in letter case or Unicode normalization/],
    ['directory case', ['Src/a.rs', 'src/b.rs'], 'collision', /differ only in letter case/],
    ['same path twice', ['a.rs', 'a.rs'], 'duplicate', /appears twice/],
    ['file used as a directory', ['a', 'a/b'], 'file-dir-conflict', /needs "demo-1\.0\.0\/a" to be a directory/],
  ])('refuses %s', async (_l, names, rule, message) => {
    await expectRejected(
      names.map((n) => file(n, n)),
      message,
      rule,
    );
  });

  it('refuses a directory entry twice and a directory entry over a file', async () => {
    await expectRejected([good, { path: `${ROOT}/d/`, type: 'dir' }, { path: `${ROOT}/d/`, type: 'dir' }], /appears twice/, 'duplicate');
    await expectRejected([good, file('d'), { path: `${ROOT}/d/`, type: 'dir' }], /also has a file of that name/, 'file-dir-conflict');
  });
});

describe('A6: caps', () => {
  it('stops a gzip bomb at the total-size cap before writing it', async () => {
    const bomb = buildCrate([good, file('zeros', Buffer.alloc(8 * 1024 * 1024))]);
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expectRejected(bomb, /"demo-1\.0\.0\/zeros".*would exceed 1 MiB/, 'total-size', { maxTotalBytes: 1024 * 1024 });
  });

  it("uses cargo's max(512 MiB, 20 x compressed size) by default", () => {
    expect(unpackLimits(1000).maxTotalBytes).toBe(512 * 1024 * 1024);
    expect(unpackLimits(100 * 1024 * 1024).maxTotalBytes).toBe(2000 * 1024 * 1024);
    expect(unpackLimits(1000, { maxEntries: 5 })).toMatchObject({ maxEntries: 5, maxDepth: 64, maxPathBytes: 1024 });
  });

  it('stops at the entry cap', async () => {
    const many = Array.from({ length: 60 }, (_, i) => file(`f${i}`, ''));
    await expectRejected(many, /would create more than 50 files and directories/, 'entry-count', { maxEntries: 50 });
    // one file 40 directories deep is 41 entries: implicit directories count
    await expectRejected([file(`${'d/'.repeat(40)}f`)], /more than 30 files and directories/, 'entry-count', { maxEntries: 30 });
    await unpack([file(`${'d/'.repeat(40)}f`)], { maxEntries: 41 });
    expect(existsSync(join(into, `${'d/'.repeat(40)}f`))).toBe(true);
  });

  it('stops at the depth cap and the path-length cap (5,000-deep, 5,000-byte)', async () => {
    await expectRejected([good, file(`${'a/'.repeat(65)}f`)], /66 levels below the root \(the limit is 64\)/, 'depth');
    await expectRejected([good, file(`${'a/'.repeat(5000)}f`)], /GNU long name record of 10013 bytes exceeds the path limit \(1024 bytes\)/, 'path-length');
    await expectRejected([good, file('x'.repeat(5000), 'x', { longName: 'pax', format: 'ustar' })], /5011 bytes long \(the limit is 1024\)/, 'path-length');
  });

  it('refuses an oversized PAX header and too many extended headers in a row', async () => {
    await expectRejected([good, file('f', 'x', { pax: { comment: 'c'.repeat(70_000) } })], /PAX header of \d+ bytes/, 'pax-too-large');
    const ls = Array.from({ length: 5 }, () => ({ path: '././@LongLink', typeflag: 'L', content: `${ROOT}/x\0` }) as TarEntry);
    await expectRejected([good, ...ls, file('x')], /too many extended headers/, 'too-many-headers');
  });

  it('stops at the deadline on a stream that never ends', async () => {
    const fifo = join(base, 'slow.crate');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const fd = openSync(fifo, 'r+'); // hold a writer so the reader waits instead of seeing EOF
    try {
      writeSync(fd, gzipSync(buildTar([good])).subarray(0, 20));
      const t0 = Date.now();
      const err = await unpackCrate(fifo, into, { crateName: NAME, version: VERSION, compressedSize: 20, limits: { timeoutMs: 300 } }).catch((e: unknown) => e);
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(err).toBeInstanceOf(YepError);
      expect((err as YepError).code).toBe('E_UNSAFE_PACKAGE');
      expect((err as YepError).message).toMatch(/unpacking did not finish within 300 ms/);
      expect((err as YepError).details?.rule).toBe('deadline');
      expect((err as YepError).hint).toMatch(/limited to 300 ms/);
      expect(existsSync(into)).toBe(false);
    } finally {
      closeSync(fd);
    }
  });

  it("stops when the caller aborts, with E_INTERRUPTED (or the caller's own YepError)", async () => {
    const fifo = join(base, 'slow.crate');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const fd = openSync(fifo, 'r+');
    try {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      const err = await unpackCrate(fifo, into, { crateName: NAME, version: VERSION, compressedSize: 20, signal: ac.signal }).catch((e: unknown) => e);
      expect((err as YepError).code).toBe('E_INTERRUPTED');
      expect(existsSync(into)).toBe(false);
      const mine = new YepError('E_NETWORK', 'download deadline');
      const err2 = await unpackCrate(fifo, into, { crateName: NAME, version: VERSION, compressedSize: 20, signal: AbortSignal.abort(mine) }).catch(
        (e: unknown) => e,
      );
      expect(err2).toBe(mine);
      expect(existsSync(into)).toBe(false);
    } finally {
      closeSync(fd);
    }
  });

  it('an abort while a chunk is being inflated stops zlib: nothing more reaches the extractor, nothing is left', async () => {
    // 3,000 files of 2 KB deflate into one read of the .crate but ~9 chunks of 1 MiB of tar:
    // the abort lands after the first chunk's files exist, with the rest still to inflate.
    const entries = [good, ...Array.from({ length: 3000 }, (_, i) => file(`f/${String(i).padStart(5, '0')}`, `${i}`.repeat(700)))];
    writeFileSync(crateFile, cachedCrate(entries));
    const writes = vi.spyOn(TarExtractor.prototype, 'write');
    try {
      const ac = new AbortController();
      let onDisk = 0;
      let writesAtAbort = -1;
      const err = await unpackCrate(crateFile, into, {
        crateName: NAME,
        version: VERSION,
        compressedSize: statSync(crateFile).size,
        signal: ac.signal,
        checkpoint: (point) => {
          if (point !== 'unpack:mid') return;
          onDisk = readdirSync(join(into, 'f')).length;
          writesAtAbort = writes.mock.calls.length;
          ac.abort();
        },
      }).catch((e: unknown) => e);
      expect((err as YepError).code).toBe('E_INTERRUPTED');
      expect(onDisk).toBeGreaterThan(0);
      expect(onDisk).toBeLessThan(3000);
      expect(writesAtAbort).toBe(1);
      // Nothing is left, and nothing comes back: no chunk inflated after the abort reaches
      // the extractor (which would create files while the caller removes the tree).
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 40));
        expect(readdirSync(stage)).toEqual([]);
      }
      expect(writes.mock.calls.length).toBe(writesAtAbort);
    } finally {
      writes.mockRestore();
    }
  });
});

describe('A7: malformed archives', () => {
  const tarOf = (entries: TarEntry[]) => buildTar(entries);

  it('refuses a truncated gzip stream', async () => {
    const data = buildCrate([good, file('big', randomBytes(200_000))]);
    await expectRejected(data.subarray(0, data.length >> 1), /gzip stream is corrupt or truncated \(unexpected end of file\)/, 'gzip');
  });

  it('refuses a corrupt gzip CRC or length trailer', async () => {
    const data = buildCrate([good, file('a', 'hello')]);
    const badCrc = Buffer.from(data);
    badCrc[badCrc.length - 8]! ^= 0xff;
    await expectRejected(badCrc, /gzip stream is corrupt or truncated \(incorrect data check\)/, 'gzip');
    const badLen = Buffer.from(data);
    badLen[badLen.length - 1]! ^= 0x01;
    await expectRejected(badLen, /gzip stream is corrupt or truncated \(incorrect length check\)/, 'gzip');
  });

  it('refuses something that is not gzip at all, and an empty file', async () => {
    await expectRejected(tarOf([good]), /gzip stream is corrupt/, 'gzip');
    await expectRejected(Buffer.alloc(0), /gzip stream is corrupt or truncated/, 'gzip');
    await expectRejected(Buffer.concat([buildCrate([good]), Buffer.from('trailing garbage')]), /gzip stream is corrupt/, 'gzip');
  });

  it('accepts concatenated gzip members, as gzip and tar do', async () => {
    const t = buildTar([good, file('b', 'b')]);
    await unpack(Buffer.concat([gzipSync(t.subarray(0, 1024)), gzipSync(t.subarray(1024))]));
    expect(tree(into)).toEqual(['Cargo.toml', 'b']);
  });

  it('refuses a tar truncated inside an entry or missing its end marker', async () => {
    const t = tarOf([good, file('a', 'x'.repeat(5000))]);
    await expectRejected(gzipSync(t.subarray(0, 512 * 4)), /truncated in the middle of an entry \(in entry "demo-1\.0\.0\/a"\)/, 'truncated');
    await expectRejected(gzipSync(t.subarray(0, 512 * 2 + 100)), /truncated in the middle of an entry/, 'truncated');
    await expectRejected(gzipSync(buildTar([good], { end: false })), /no end-of-archive marker/, 'truncated');
  });

  it('refuses a bad header checksum, naming the entry before it', async () => {
    await expectRejected([good, file('a', 'x', { badChecksum: true })], /checksum mismatch.*\(after entry "demo-1\.0\.0\/Cargo\.toml"\)/, 'bad-checksum');
  });

  it('refuses negative sizes (base-256 and PAX) and malformed size fields', async () => {
    await expectRejected([good, file('a', 'x', { sizeField: 'negative' })], /negative size/, 'negative-number');
    await expectRejected([good, file('a', 'x', { pax: { size: '-1' } })], /invalid PAX size "-1"/, 'negative-number');
    await expectRejected([good, file('a', 'x', { pax: { size: '1e3' } })], /invalid PAX size/, 'bad-pax');
    await expectRejected([good, file('a', 'x', { sizeField: Buffer.from('00000000001x') })], /malformed size field/, 'bad-number');
  });

  it('refuses NUL in a PAX value and malformed PAX records', async () => {
    await expectRejected([good, file('a', 'x', { pax: { path: `${ROOT}/ok\0/../../escape` } })], /NUL byte in the PAX record "path"/, 'pax-nul');
    await expectRejected([good, file('a', 'x', { paxRaw: Buffer.from('30 path=demo-1.0.0/short\n') })], /PAX record/, 'bad-pax');
  });

  it('refuses interpretation conflicts: PAX size vs header size, PAX path vs GNU long name, global path', async () => {
    await expectRejected([good, file('a', 'xy', { pax: { size: '1' } })], /PAX size and the header size differ/, 'size-conflict');
    const conflict: TarEntry[] = [
      good,
      { path: '././@LongLink', typeflag: 'L', content: `${ROOT}/one\0` },
      file('two', 'x', { pax: { path: `${ROOT}/three` } }),
    ];
    await expectRejected(conflict, /two different names/, 'name-conflict');
    await expectRejected(
      [good, { path: 'pax_global_header', typeflag: 'g', content: paxRecord('path', `${ROOT}/x`) }, file('a')],
      /global header sets "path"/,
      'pax-global',
    );
  });

  it('refuses a directory entry with data and a regular file whose name ends in "/"', async () => {
    await expectRejected([good, { path: `${ROOT}/d/`, type: 'dir', content: 'hidden header?' }], /directory with 14 bytes of data/, 'dir-size');
    await expectRejected([good, { path: `${ROOT}/f/`, content: 'x' }], /regular file whose path ends with "\/"/, 'trailing-slash');
  });

  it('refuses data after the end-of-archive marker, and an endless zero padding', async () => {
    const hidden = tarOf([file('hidden', 'x')]);
    await expectRejected(gzipSync(buildTar([good], { trailing: hidden })), /data follows the end-of-archive marker/, 'after-end');
    await expectRejected(gzipSync(buildTar([good], { trailing: Buffer.alloc(2 * 1024 * 1024) })), /more than 1 MiB of padding/, 'after-end');
  });

  it('refuses an extended header not followed by an entry, and a non-UTF-8 name', async () => {
    await expectRejected(
      gzipSync(buildTar([good, { path: '././@LongLink', typeflag: 'L', content: `${ROOT}/x\0` }])),
      /not followed by an entry/,
      'dangling-header',
    );
    await expectRejected(
      [good, { path: `${ROOT}/bad\u00ff`, content: 'x', pax: { path: Buffer.from([...Buffer.from(`${ROOT}/`), 0xff, 0xfe]) } }],
      /not valid UTF-8/,
      'bad-utf8',
    );
  });
});

describe('A8: nothing to install', () => {
  it('refuses zero entries, directories only, only .cargo-ok, and an empty stream', async () => {
    await expectRejected(gzipSync(buildTar([])), /no installable content/, 'no-content');
    await expectRejected(
      [
        { path: `${ROOT}/`, type: 'dir' },
        { path: `${ROOT}/src/`, type: 'dir' },
      ],
      /no installable content.*no regular file under demo-1\.0\.0\//,
      'no-content',
    );
    await expectRejected([file('.cargo-ok', 'ok')], /no installable content/, 'no-content');
    await expectRejected(gzipSync(Buffer.alloc(0)), /no installable content/, 'no-content');
  });
});

describe('contract', () => {
  it('refuses to unpack into an existing directory and leaves it alone', async () => {
    mkdirSync(into);
    writeFileSync(join(into, 'keep'), 'mine');
    const err = await unpack([good]).catch((e: unknown) => e);
    expect((err as YepError).code).toBe('E_INTERNAL');
    expect((err as YepError).message).toMatch(/already exists/);
    expect(readFileSync(join(into, 'keep'), 'utf8')).toBe('mine');
  });

  it('reports a missing archive as a read error without creating anything', async () => {
    const err = await unpackCrate(join(base, 'missing.crate'), into, { crateName: NAME, version: VERSION, compressedSize: 1 }).catch((e: unknown) => e);
    expect((err as YepError).code).toBe('E_STATE');
    expect((err as YepError).message).toMatch(/Could not read .*missing\.crate: ENOENT/);
    expect(existsSync(into)).toBe(false);
  });
});

describe('TarExtractor chunking', () => {
  it('gives the same tree whatever the chunk boundaries (headers, PAX and data split anywhere)', () => {
    const entries: TarEntry[] = [
      { path: `${ROOT}/`, type: 'dir' },
      file('a.txt', 'a'.repeat(700)),
      file(`${'p'.repeat(120)}.txt`, 'pax', { longName: 'pax', format: 'ustar' }),
      file(`${'g'.repeat(120)}.txt`, 'gnu', { longName: 'gnu' }),
      file('.cargo-ok', 'skip me'),
      file('empty', ''),
      file('z/y/x', randomBytes(5000)),
    ];
    const data = buildTar(entries, { trailing: Buffer.alloc(9000) });
    const results: string[][] = [];
    for (const size of [1, 7, 511, 512, 513, 4096, data.length]) {
      const out = join(base, `chunk-${size}`);
      mkdirSync(out);
      const x = new TarExtractor(out, ROOT, { ...unpackLimits(data.length) });
      for (let i = 0; i < data.length; i += size) x.write(data.subarray(i, i + size));
      x.finish();
      results.push(tree(out));
      expect(readFileSync(join(out, 'z/y/x')).equals(entries[6]!.content as Buffer)).toBe(true);
    }
    for (const r of results) expect(r).toEqual(results[0]);
    expect(results[0]).toEqual(['a.txt', 'empty', `${'g'.repeat(120)}.txt`, `${'p'.repeat(120)}.txt`, 'z/', 'z/y/', 'z/y/x']);
  });
});

describe('tar-builder helper', () => {
  it('builds a crate from a source tree, keeping execute bits', async () => {
    const src = join(base, 'fixture');
    mkdirSync(join(src, 'bin'), { recursive: true });
    writeFileSync(join(src, 'plugin.json'), '{}');
    writeFileSync(join(src, 'bin/server'), '#!/bin/sh\n', { mode: 0o755 });
    const data = buildCrate(crateEntriesFromDir(src, NAME, VERSION));
    rmSync(src, { recursive: true });
    await unpack(data);
    expect(tree(into)).toEqual(['bin/', 'bin/server', 'plugin.json']);
    expect(mode(join(into, 'bin/server'))).toBe(0o755);
  });
});
