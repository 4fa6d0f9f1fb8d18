/**
 * unpackCrate creates small files on libuv's thread pool (archive/file-writer.ts):
 * a failure in the middle of concurrent writes is reported as the
 * sync path reported it and leaves nothing behind, and the number of open
 * descriptors stays bounded whatever the file count. `node:fs`'s callback `open`
 * and `close` and its `openSync` are wrapped during each test (everything else is the
 * real module) to inject a failure and to count what is open.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BusyMeter } from '../../src/core/archive/busy-meter.js';
import { YepError } from '../../src/core/errors.js';
import { unpackCrate } from '../../src/core/archive/unpack.js';
import { contentHash } from '../../src/core/package/content-hash.js';
import { buildCrate } from '../helpers/tar-builder.js';
import { cachedCrate } from '../helpers/crate-cache.js';
import { hexContent, manyFiles, noise } from '../helpers/noise.js';

const probe = {
  failOn: undefined as RegExp | undefined,
  /** Files whose open answers late (after the failure): still open when the failure is seen. */
  slowOn: undefined as RegExp | undefined,
  open: 0,
  maxOpen: 0,
  maxProcFds: 0,
  opened: 0,
  /** Files created with openSync (the sync path: a big file, or the pool's queue was full). */
  openedSync: 0,
  /** What the busy meter says (undefined: no meter, as where /proc does not tell). */
  busy: undefined as boolean | undefined,
  countFds: undefined as (() => number) | undefined,
};

// The real node:fs module object, whose functions src's `import { open } from 'node:fs'` reads
// after syncBuiltinESMExports(): patched for each test and put back after it, so the files
// that share this worker never see the wrappers.
const realFs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const original = { open: realFs.open, close: realFs.close, openSync: realFs.openSync };

type OpenCb = (e: NodeJS.ErrnoException | null, fd: number) => void;
function open(path: string, flags: number, mode: number, cb: OpenCb): void {
  if (probe.failOn?.test(String(path))) {
    const e = Object.assign(new Error(`ENOSPC: no space left on device, open '${path}'`), { code: 'ENOSPC', errno: -28, syscall: 'open', path });
    setImmediate(() => cb(e, -1));
    return;
  }
  original.open(path, flags, mode, (e, fd) => {
    if (!e) {
      ours.add(fd);
      probe.opened++;
      probe.maxOpen = Math.max(probe.maxOpen, ++probe.open);
      if (probe.countFds) probe.maxProcFds = Math.max(probe.maxProcFds, probe.countFds());
    }
    if (probe.slowOn?.test(String(path))) setTimeout(() => cb(e, fd), 150);
    else cb(e, fd);
  });
}
/** Descriptors opened through the wrapper: a close of another (the worker's own streams) is not counted. */
const ours = new Set<number>();
function close(fd: number, cb: (e: NodeJS.ErrnoException | null) => void): void {
  const counted = ours.delete(fd);
  original.close(fd, (e) => {
    if (counted) probe.open--;
    cb(e);
  });
}
function openSync(path: string, flags: number, mode: number): number {
  const fd = original.openSync(path, flags, mode);
  if (/\/f\/\d+$/.test(String(path))) probe.openedSync++;
  return fd;
}

function patchFs(): void {
  Object.assign(realFs, { open, close, openSync });
  syncBuiltinESMExports();
}
function restoreFs(): void {
  Object.assign(realFs, original);
  syncBuiltinESMExports();
}

const MiB = 1024 * 1024;
const NAME = 'demo';
const VERSION = '1.0.0';
const ROOT = `${NAME}-${VERSION}`;
let base: string;
let stage: string;
let into: string;
let crateFile: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'yep-unpack-pool-')));
  stage = join(base, 'stage');
  mkdirSync(stage);
  into = join(stage, 'pkg');
  crateFile = join(base, 'in.crate');
  Object.assign(probe, {
    failOn: undefined,
    slowOn: undefined,
    open: 0,
    maxOpen: 0,
    maxProcFds: 0,
    opened: 0,
    openedSync: 0,
    busy: undefined,
    countFds: undefined,
  });
  patchFs();
  // Whether the machine is busy decides how small files past a full queue are written (unpack.ts).
  vi.spyOn(BusyMeter, 'open').mockImplementation(() =>
    probe.busy === undefined ? undefined : ({ busyNow: () => probe.busy, close: () => undefined } as unknown as BusyMeter),
  );
});

afterEach(() => {
  restoreFs();
  vi.restoreAllMocks();
  rmSync(base, { recursive: true, force: true });
});

/** File `i` of a crate here is f/<i, five digits>: ~1-1.5 KB of hex unless said otherwise. */
const FLAT = { path: (i: number) => `f/${String(i).padStart(5, '0')}` };
const WORDS = ['const', 'return', 'function', 'value', 'buffer', 'length', 'import', 'export'];
/** ~3 KB of source-like words that deflate ~10:1: a 32 KiB slice inflates to more files than half the pool's queue. */
function wordsOf(i: number): string {
  let out = '';
  // Every word is at least 5 letters and a space: 512 bytes always give 3,000 characters.
  for (const b of noise(`words/${i}`, 512)) {
    out += `${WORDS[b & 7]} `;
    if (out.length >= 3000) break;
  }
  return out;
}
// The hex files (noise.ts hexContent) deflate about 2:1, like real files (not 100:1: the pool's
// queue cap would send most to the sync path).
/**
 * The crate of 5,000 files of hex, built once (and deflated once across runs, crate-cache.ts):
 * the failure in the middle (at the 1,501st file) and the bounded descriptors over all of them
 * unpack the same archive.
 */
let hexCrate: Buffer | undefined;
const hexCrateOnce = (): Buffer => (hexCrate ??= cachedCrate(manyFiles(ROOT, 5000, FLAT)));
/** The crate of 3,000 files of words, built once: both machine-load cases below unpack it. */
let wordsCrate: Buffer | undefined;
const wordsCrateOnce = (): Buffer => (wordsCrate ??= cachedCrate(manyFiles(ROOT, 3000, { ...FLAT, content: wordsOf })));
// Declared under 2 MiB: bigger crates create their small files on a worker thread instead (unpack-worker.test.ts).
const unpack = () => unpackCrate(crateFile, into, { crateName: NAME, version: VERSION, compressedSize: Math.min(MiB, statSync(crateFile).size) });

describe('unpacking on the thread pool', () => {
  it('a write that fails in the middle is reported with its errno, and nothing is left or comes back', async () => {
    writeFileSync(crateFile, hexCrateOnce());
    probe.failOn = /\/f\/01500$/;
    probe.slowOn = /\/f\/01(49[89]|50[1-9])$/;
    const err = await unpack().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(YepError);
    expect((err as YepError).code).toBe('E_STATE');
    expect((err as YepError).message).toMatch(/ENOSPC/);
    expect(existsSync(into)).toBe(false);
    // Every descriptor the pool opened was closed before the tree was removed.
    expect(probe.open).toBe(0);
    expect(probe.opened).toBeGreaterThan(0);
    // Nothing is still being written into the removed tree.
    const opened = probe.opened;
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 40));
      expect(readdirSync(stage)).toEqual([]);
    }
    expect(probe.opened).toBe(opened);
  });

  it('a policy violation while files are still being written waits for them before removing the tree', async () => {
    // The symlink is parsed while the pool is still creating the files before it
    // (30 files fit in the pool's queue: parsing never waits for room).
    writeFileSync(crateFile, buildCrate([...manyFiles(ROOT, 30, FLAT), { path: `${ROOT}/zz-link`, type: 'symlink', linkpath: '/etc/passwd' }]));
    // The first files answer late: the pool is still holding them when the link is parsed.
    probe.slowOn = /\/f\/0000[0-5]$/;
    const err = await unpack().catch((e: unknown) => e);
    expect((err as YepError).code).toBe('E_UNSAFE_PACKAGE');
    expect((err as YepError).message).toMatch(/zz-link/);
    expect(probe.open).toBe(0);
    expect(existsSync(into)).toBe(false);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 40));
      expect(readdirSync(stage)).toEqual([]);
    }
  });

  it('keeps the open descriptors bounded over 5,000 files and gives the tree and hash of the archive', async () => {
    writeFileSync(crateFile, hexCrateOnce());
    const fdDir = '/proc/self/fd';
    const hasProc = existsSync(fdDir);
    const before = hasProc ? readdirSync(fdDir).length : 0;
    if (hasProc) probe.countFds = () => readdirSync(fdDir).length;
    const hashed = await unpack();
    expect(probe.open).toBe(0);
    // Most files went through the pool (past its queue cap a file is written synchronously).
    expect(probe.opened).toBeGreaterThan(2000);
    // At most three files at a time on the pool (file-writer.ts MAX_ACTIVE).
    expect(probe.maxOpen).toBeGreaterThan(1);
    expect(probe.maxOpen).toBeLessThanOrEqual(3);
    if (hasProc) expect(probe.maxProcFds - before).toBeLessThanOrEqual(8);
    expect(readdirSync(join(into, 'f'))).toHaveLength(5000);
    for (const i of [0, 1, 2499, 4999]) {
      expect(readFileSync(join(into, 'f', String(i).padStart(5, '0')), 'utf8')).toBe(hexContent(i));
    }
    expect(await hashed.digest(into)).toBe(await contentHash(into));
  });

  // The first files answer late and the crate deflates ~10:1, so the pool's queue fills
  // and the rest of the slice being inflated is written synchronously. The last of those
  // files usually runs past the slice's end. On a busy machine that must not count as
  // "inside a big file", where the rest of the 1 MiB read is inflated at once: that
  // flooded the queue again and again, and most of these 3,000 files were created on
  // the main thread, which under load left the pool's threads idle. On a quiet
  // machine it must: the synchronous path is the faster one there (docs/performance.md,
  // install-small).
  it.each([
    ['on a busy machine, small files past a full queue are written synchronously one slice at a time, not the rest of the read', true],
    ['on a quiet machine, the rest of such a read is written synchronously (the faster path there), with the same tree', false],
  ] as const)(
    '%s',
    async (_name, busy) => {
      writeFileSync(crateFile, wordsCrateOnce());
      probe.slowOn = /\/f\/0000[0-2]$/;
      probe.busy = busy;
      const hashed = await unpack();
      expect(probe.open).toBe(0);
      expect(readdirSync(join(into, 'f'))).toHaveLength(3000);
      const sync = `${probe.openedSync} of 3,000 files created with sync calls`;
      if (busy) {
        expect(probe.openedSync, sync).toBeGreaterThan(0);
        expect(probe.openedSync, sync).toBeLessThan(1500);
      } else {
        expect(probe.openedSync, sync).toBeGreaterThan(1500);
      }
      expect(await hashed.digest(into)).toBe(await contentHash(into));
    },
    120_000,
  );
});
