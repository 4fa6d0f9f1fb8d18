// The content hash computed by the extractor while it writes against the
// plain definition (contentHash's walk), on random trees: nested and empty
// directories, exec bits, `.git` directories and a file named `.git`, symlinks in
// the source tree (never hashed; a crate cannot carry them), names whose UTF-16
// order differs from their UTF-8 order, and archives in sorted, cargo-like,
// reversed and shuffled order (the out-of-order files are read back).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unpackCrate } from '../../src/core/archive/unpack.js';
import { foldName } from '../../src/core/archive/fold-name.js';
import type { ContentHashStream } from '../../src/core/package/content-hash-stream.js';
import { contentHash, sortByUtf8 } from '../../src/core/package/content-hash.js';
import { prng } from '../helpers/prng.js';
import { buildCrate, crateEntriesFromDir, type TarEntry } from '../helpers/tar-builder.js';

const work = mkdtempSync(join(tmpdir(), 'hash-stream-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// "a-b" and "a.b" sort before "a/…" by bytes but after it component-wise (cargo's order).
const NAMES = ['a', 'a-b', 'a.b', 'b', 'src', 'src.rs', 'Z', 'é', 'Ω', '日本', '😀', '\uE000x', '\uFFFDy', 'x y', 'lib.rs', '.git', '.hidden', 'zz'];

interface Built {
  src: string;
  entries: TarEntry[];
}

function randomTree(seed: number, big = false): Built {
  const r = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
  const src = mkdtempSync(join(work, `src-${seed}-`));
  const folded = new Set<string>();
  const dirs: string[] = [];
  const files: string[] = [];
  const take = (rel: string): boolean => {
    const f = foldName(rel);
    if (folded.has(f)) return false;
    folded.add(f);
    return true;
  };
  const grow = (rel: string, depth: number): void => {
    const n = 1 + Math.floor(r() * 5);
    for (let i = 0; i < n; i++) {
      const name = pick(NAMES);
      const child = rel ? `${rel}/${name}` : name;
      if (!take(child)) continue;
      const abs = join(src, child);
      if (depth < 4 && r() < 0.35) {
        mkdirSync(abs);
        dirs.push(child);
        grow(child, depth + 1);
      } else if (r() < 0.08) {
        symlinkSync(r() < 0.5 ? '/etc/passwd' : '.', abs);
      } else {
        const size = r() < 0.2 ? 0 : Math.floor(r() * 3000);
        const content = Buffer.alloc(size);
        for (let k = 0; k < size; k++) content[k] = Math.floor(r() * 256);
        writeFileSync(abs, content);
        if (r() < 0.3) chmodSync(abs, 0o755);
        files.push(child);
      }
    }
  };
  grow('', 0);
  if (big) {
    // Larger than the walk's 1 MiB read chunk and than one inflate chunk.
    const content = Buffer.alloc(2.5 * 1024 * 1024 + 17);
    for (let k = 0; k < content.length; k += 4096) content[k] = Math.floor(r() * 256);
    if (take('big.bin')) writeFileSync(join(src, 'big.bin'), content);
  }
  if (take('plugin.json')) writeFileSync(join(src, 'plugin.json'), '{}');
  // crateEntriesFromDir: files only, sorted component-wise per directory (as cargo does); add the empty directories.
  const entries = crateEntriesFromDir(src, 'pkg', '1.0.0');
  for (const d of dirs) if (readdirSync(join(src, d)).length === 0) entries.push({ path: `pkg-1.0.0/${d}/`, type: 'dir' });
  return { src, entries };
}

function ordered(entries: TarEntry[], how: string, r: () => number): TarEntry[] {
  const xs = entries.slice();
  if (how === 'bytes') return sortByUtf8(xs.map((e) => e.path)).map((p) => xs.find((e) => e.path === p)!);
  if (how === 'reversed') return xs.reverse();
  if (how === 'shuffled') {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
  }
  return xs; // 'cargo': as built
}

let n = 0;
async function unpackHashed(entries: TarEntry[]): Promise<{ into: string; hashed: ContentHashStream }> {
  const file = join(work, `c${n}.crate`);
  writeFileSync(file, buildCrate(entries));
  const into = join(work, `out-${n++}`);
  const hashed = await unpackCrate(file, into, { crateName: 'pkg', version: '1.0.0', compressedSize: statSync(file).size });
  return { into, hashed };
}

/** The 25 random trees every archive order below is tried on, made and walked once (only read after). */
const trees = new Map<number, Promise<Built & { expected: string }>>();
function sharedTree(seed: number): Promise<Built & { expected: string }> {
  let tree = trees.get(seed);
  if (!tree) {
    const built = randomTree(seed * 7919, seed === 3);
    tree = contentHash(built.src).then((expected) => ({ ...built, expected }));
    trees.set(seed, tree);
  }
  return tree;
}

describe('content hash from the extractor = content hash of a walk', () => {
  for (const how of ['cargo', 'bytes', 'reversed', 'shuffled']) {
    it(`on 25 random trees, archive order ${how}`, async () => {
      for (let seed = 1; seed <= 25; seed++) {
        const { entries, expected } = await sharedTree(seed);
        const { into, hashed } = await unpackHashed(ordered(entries, how, prng(seed)));
        expect(await hashed.digest(into), `seed ${seed * 7919}, ${how}`).toBe(expected);
        expect(await contentHash(into)).toBe(expected);
      }
    }, 60_000);
  }

  it('a file written after extraction (plugin.json from Cargo.toml) is read back in its place', async () => {
    for (let seed = 100; seed < 110; seed++) {
      const { entries } = randomTree(seed);
      const without = entries.filter((e) => e.path !== 'pkg-1.0.0/plugin.json');
      const { into, hashed } = await unpackHashed(without);
      writeFileSync(join(into, 'plugin.json'), '{"name":"x"}\n');
      hashed.addFile('plugin.json');
      expect(await hashed.digest(into)).toBe(await contentHash(into));
    }
  });

  it('more than one snapshot interval of files, one of them late', async () => {
    const files: TarEntry[] = [];
    for (let i = 0; i < 300; i++) files.push({ path: `pkg-1.0.0/f${String(i).padStart(3, '0')}`, content: `file ${i}` });
    // f150 arrives last: everything from the snapshot before it is read back.
    const late = files.splice(150, 1);
    const { into, hashed } = await unpackHashed([...files, ...late]);
    expect(await hashed.digest(into)).toBe(await contentHash(into));
    const sorted = await unpackHashed([...files.slice(0, 150), ...late, ...files.slice(150)]);
    expect(await sorted.hashed.digest(sorted.into)).toBe(await contentHash(into));
  });

  it('a host-compat vector: plugin.json only', async () => {
    const { into, hashed } = await unpackHashed([{ path: 'pkg-1.0.0/plugin.json', content: '{}' }]);
    expect(await hashed.digest(into)).toBe('sha256:b6a8e75897979e968f0ea7f1f882152a8c950c1c7340d368cd107a8bd24756ee');
  });

  it('files inside .git directories are not hashed, a file named .git is', async () => {
    const { into, hashed } = await unpackHashed([
      { path: 'pkg-1.0.0/plugin.json', content: '{}' },
      { path: 'pkg-1.0.0/.git/HEAD', content: 'ignored' },
      { path: 'pkg-1.0.0/a/.git/config', content: 'ignored' },
      { path: 'pkg-1.0.0/b/.git', content: 'hashed' },
    ]);
    expect(await hashed.digest(into)).toBe(await contentHash(into));
    expect(await hashed.digest(into).catch((e: Error) => e.message)).toMatch(/twice/);
  });
});
