import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { contentHash, listHashedFiles, sortByUtf8 } from '../../src/core/package/content-hash.js';

// Every temp root made here, removed after the file (1,400 of them were left in /tmp).
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  roots.push(root);
  return root;
}

function tree(files: Record<string, string>): string {
  const root = tempRoot('hash-');
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return root;
}

describe('contentHash (host-compat §4 vectors)', () => {
  it('empty directory', async () => {
    expect(await contentHash(tree({}))).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
  it('plugin.json only', async () => {
    expect(await contentHash(tree({ 'plugin.json': '{}' }))).toBe('sha256:b6a8e75897979e968f0ea7f1f882152a8c950c1c7340d368cd107a8bd24756ee');
  });
  it('skips .git', async () => {
    expect(await contentHash(tree({ 'plugin.json': '{}', 'a/b.txt': 'x', '.git/HEAD': 'ignored' }))).toBe(
      'sha256:a2e36ec2a69259f9f33427fa043a5d723b11649e65ff97263067af22c539a4c6',
    );
  });
  it('skips nested .git directories too', async () => {
    const a = await contentHash(tree({ 'plugin.json': '{}', 'a/b.txt': 'x' }));
    expect(await contentHash(tree({ 'plugin.json': '{}', 'a/b.txt': 'x', 'a/.git/config': 'y' }))).toBe(a);
  });
  it('does not follow or hash symlinks and special files', async () => {
    const root = tree({ 'plugin.json': '{}', 'a/b.txt': 'x' });
    const base = await contentHash(root);
    symlinkSync('/etc/passwd', join(root, 'link'));
    symlinkSync(join(root, 'a'), join(root, 'dirlink'));
    execFileSync('mkfifo', [join(root, 'fifo')]);
    expect(await contentHash(root)).toBe(base);
  });
  it('sorts by UTF-8 bytes, not locale', async () => {
    const root = tree({ 'é.txt': '1', 'z.txt': '2', 'Z.txt': '3', 'a/b': '4', 'a.b': '5', 'ä/x': '6' });
    // Byte order: "Z" (0x5a) < "a.b" (0x61 0x2e) < "a/b" (0x61 0x2f) < "z" < "ä" (0xc3 0xa4) < "é" (0xc3 0xa9)
    expect(await listHashedFiles(root)).toEqual(['Z.txt', 'a.b', 'a/b', 'z.txt', 'ä/x', 'é.txt']);
  });
  it('sorts astral characters after U+E000..U+FFFF, as their UTF-8 bytes do (not as UTF-16 would)', async () => {
    // UTF-8: U+FF21 is EF BC A1, U+1F600 is F0 9F 98 80, so U+FF21 first; UTF-16 code units
    // (D83D DE00 vs FF21) would put the emoji first.
    const root = tree({ '\u{1F600}.txt': '1', '\uFF21.txt': '2', 'b.txt': '3' });
    expect(await listHashedFiles(root)).toEqual(['b.txt', '\uFF21.txt', '\u{1F600}.txt']);
    expect(sortByUtf8(['\u{1F600}', '\uFF21', '\uE000', '\uD7FF', 'z'])).toEqual(['z', '\uD7FF', '\uE000', '\uFF21', '\u{1F600}']);
  });

  it('changes when content, a name or a length changes', async () => {
    const a = await contentHash(tree({ 'plugin.json': '{}', f: 'ab' }));
    expect(await contentHash(tree({ 'plugin.json': '{}', f: 'ac' }))).not.toBe(a);
    expect(await contentHash(tree({ 'plugin.json': '{}', g: 'ab' }))).not.toBe(a);
    expect(await contentHash(tree({ 'plugin.json': '{}', f: 'ab', e: '' }))).not.toBe(a);
  });
  it('matches the plain definition for files around the 1 MiB read size (one read, several, exact multiples)', async () => {
    const MiB = 1024 * 1024;
    const sizes: Record<string, number> = { empty: 0, one: 1, under: MiB - 1, exact: MiB, over: MiB + 1, three: 3 * MiB };
    const root = tempRoot('hash-sizes-');
    for (const [name, size] of Object.entries(sizes)) writeFileSync(join(root, name), Buffer.alloc(size, name));
    // The definition, computed the slow and obvious way: whole files in memory.
    const h = createHash('sha256');
    for (const name of Object.keys(sizes).sort()) {
      const bytes = readFileSync(join(root, name));
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(bytes.length));
      h.update(Buffer.from(name, 'utf8'))
        .update(Buffer.from([0]))
        .update(len)
        .update(bytes);
    }
    expect(await contentHash(root)).toBe(`sha256:${h.digest('hex')}`);
  });
  it('matches the plain definition on random trees of mixed-script names', async () => {
    // Names from ASCII, Latin-1, U+E000..U+FFFF and astral letters, nested up to 3 deep.
    const alphabet = ['a', 'B', '.', '-', 'é', 'ä', '\uE000', '\uFF21', '\u{1F600}', '\u{10000}', '0'];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    for (let t = 0; t < 20; t++) {
      const files: Record<string, string> = {};
      for (let f = 0; f < 15; f++) {
        const parts = Array.from({ length: 1 + rnd(3) }, () => `n${Array.from({ length: 1 + rnd(4) }, () => alphabet[rnd(alphabet.length)]).join('')}`);
        files[parts.join('/')] = 'x'.repeat(rnd(50));
      }
      // A file name that is also a directory prefix elsewhere would fail to write: keep leaves only.
      const names = Object.keys(files).filter((n) => !Object.keys(files).some((o) => o.startsWith(`${n}/`)));
      const root = tree(Object.fromEntries(names.map((n) => [n, files[n]!])));
      const h = createHash('sha256');
      for (const b of names.map((n) => Buffer.from(n, 'utf8')).sort(Buffer.compare)) {
        const bytes = readFileSync(join(root, b.toString('utf8')));
        const len = Buffer.alloc(8);
        len.writeBigUInt64LE(BigInt(bytes.length));
        h.update(b)
          .update(Buffer.from([0]))
          .update(len)
          .update(bytes);
      }
      expect(await contentHash(root)).toBe(`sha256:${h.digest('hex')}`);
    }
  });
});
