/**
 * Crates of 2 MiB and more have their small files created on one worker thread
 * (archive/worker-writer.ts): the tree, modes and streamed
 * content hash are the archive's, a failure inside the worker (a real ENOSPC, on a
 * small tmpfs) is reported as the sync path reports it and leaves nothing, and a
 * policy violation parsed while the worker still holds files waits for it before
 * the tree is removed. The worker's `node:fs` cannot be mocked, so the faults are
 * real ones. `compressedSize` is what decides the path: the tests declare 4 MiB.
 */
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { YepError } from '../../src/core/errors.js';
import { unpackCrate } from '../../src/core/archive/unpack.js';
import { warmUnpackWorker, workerFilesHandedOver } from '../../src/core/archive/worker-writer.js';
import { contentHash } from '../../src/core/package/content-hash.js';
import { cachedCrate } from '../helpers/crate-cache.js';
import { hexContent, manyFiles } from '../helpers/noise.js';
import { itNeeding, need } from '../helpers/needs.js';

const NAME = 'demo';
const VERSION = '1.0.0';
const ROOT = `${NAME}-${VERSION}`;
const MiB = 1024 * 1024;
let base: string;
let stage: string;
let into: string;
let crateFile: string;

beforeEach(async () => {
  // Thousands of files a test: where creating and removing them is cheap (../helpers/scratch.ts).
  base = realpathSync(mkdtempSync(join(tmpdir(), 'yep-unpack-worker-')));
  stage = join(base, 'stage');
  mkdirSync(stage);
  into = join(stage, 'pkg');
  crateFile = join(base, 'in.crate');
  // Ready before the first file: otherwise the first ones are written on the main thread while it starts.
  await warmUnpackWorker();
});

afterEach(() => {
  spawnSync('umount', [stage]);
  rmSync(base, { recursive: true, force: true });
});

/** File `i` of a crate here: ~1-1.5 KB of hex (noise.ts hexContent) in one of seven directories, group-writable, every fifth executable. */
const SPREAD = { path: (i: number) => `d${i % 7}/f${String(i).padStart(5, '0')}`, mode: (i: number) => (i % 5 === 0 ? 0o775 : 0o664) };
/**
 * The crate of 4,000 files, built once: the tree-and-hash case and the abort case unpack the
 * same archive. These crates are deflated once across runs (crate-cache.ts): the same bytes.
 */
let crate4000: Buffer | undefined;
const crate4000Once = (): Buffer => (crate4000 ??= cachedCrate(manyFiles(ROOT, 4000, SPREAD)));
const unpack = () => unpackCrate(crateFile, into, { crateName: NAME, version: VERSION, compressedSize: Math.max(4 * MiB, statSync(crateFile).size) });

async function nothingComesBack(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 40));
    expect(readdirSync(stage).filter((n) => n !== 'filler')).toEqual([]);
  }
}

const tmpfs = ((): { ok: boolean; missing: string } => {
  const at = mkdtempSync(join(tmpdir(), 'yep-unpack-worker-probe-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', at], { encoding: 'utf8' });
  if (r.status === 0) spawnSync('umount', [at]);
  rmSync(at, { recursive: true, force: true });
  return { ok: r.status === 0, missing: `mounting a tmpfs (root): ${(r.stderr || r.error?.message || '').trim()}` };
})();

describe('unpacking with the worker thread', () => {
  it('creates the archive tree with its modes and the streamed hash of a fresh walk', async () => {
    writeFileSync(crateFile, crate4000Once());
    const before = workerFilesHandedOver();
    const hashed = await unpack();
    // Most files went to the worker (past its in-flight cap a file is written on the main thread).
    expect(workerFilesHandedOver() - before).toBeGreaterThan(2000);
    for (let d = 0; d < 7; d++) expect(statSync(join(into, `d${d}`)).mode & 0o7777).toBe(0o755);
    for (const i of [0, 1, 2, 1999, 3995, 3999]) {
      const p = join(into, `d${i % 7}`, `f${String(i).padStart(5, '0')}`);
      expect(readFileSync(p, 'utf8')).toBe(hexContent(i));
      expect(statSync(p).mode & 0o7777).toBe(i % 5 === 0 ? 0o755 : 0o644);
    }
    expect(readdirSync(into).sort()).toEqual(['Cargo.toml', 'd0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6']);
    expect(await hashed.digest(into)).toBe(await contentHash(into));
  });

  itNeeding(need(tmpfs.ok, tmpfs.missing), 'a full disk inside the worker is E_STATE with its errno, and nothing is left or comes back', async () => {
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', stage]).status).toBe(0);
    writeFileSync(crateFile, cachedCrate(manyFiles(ROOT, 3000, SPREAD)));
    const before = workerFilesHandedOver();
    const err = await unpack().catch((e: unknown) => e);
    expect(workerFilesHandedOver() - before).toBeGreaterThan(0);
    expect(err).toBeInstanceOf(YepError);
    expect((err as YepError).code).toBe('E_STATE');
    expect((err as YepError).message).toBe(`Could not unpack ${NAME}@${VERSION} into ${into}: ENOSPC`);
    expect(existsSync(into)).toBe(false);
    await nothingComesBack();
    // The worker is usable again (its stop flag was reset): the next unpack on a roomy disk works.
    spawnSync('umount', [stage]);
    const hashed = await unpack();
    expect(await hashed.digest(into)).toBe(await contentHash(into));
  });

  it('a policy violation while the worker still holds files waits for it before removing the tree', async () => {
    writeFileSync(crateFile, cachedCrate([...manyFiles(ROOT, 1500, SPREAD), { path: `${ROOT}/zz-link`, type: 'symlink', linkpath: '/etc/passwd' }]));
    const err = await unpack().catch((e: unknown) => e);
    expect((err as YepError).code).toBe('E_UNSAFE_PACKAGE');
    expect((err as YepError).message).toMatch(/zz-link/);
    expect(existsSync(into)).toBe(false);
    await nothingComesBack();
  });

  it('an abort while the worker holds files is E_INTERRUPTED and leaves nothing', async () => {
    writeFileSync(crateFile, crate4000Once());
    const ac = new AbortController();
    const before = workerFilesHandedOver();
    const watch = setInterval(() => {
      if (workerFilesHandedOver() - before > 500) ac.abort();
    }, 1);
    try {
      const err = await unpackCrate(crateFile, into, { crateName: NAME, version: VERSION, compressedSize: 4 * MiB, signal: ac.signal }).catch(
        (e: unknown) => e,
      );
      expect((err as YepError).code).toBe('E_INTERRUPTED');
    } finally {
      clearInterval(watch);
    }
    expect(existsSync(into)).toBe(false);
    await nothingComesBack();
  });
});
