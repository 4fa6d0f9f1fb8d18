/**
 * The download cache writes and reads cacache's on-disk layout itself (a hard link or
 * kernel copy to the content path, the index line appended: no second read and hash
 * of a verified file, no cacache loaded by an install). These tests pin that layout
 * against cacache itself, both ways: what we put, cacache reads, lists and keeps
 * through `verify`; what cacache puts, we read. A cacache upgrade that moves either
 * file fails here, not in a user's cache.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import cacache from 'cacache';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheKey, contentPath, integrityOf, readCachedInto, storeInCache, verifyCache } from '../../src/core/cache/download-cache.js';
import { createContext, type Context } from '../../src/core/context.js';

const base = mkdtempSync(join(tmpdir(), 'yep-cache-layout-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let n = 0;
function setup(): { ctx: Context; dir: string; work: string; notes: string[] } {
  const root = join(base, `c${n++}`);
  const dir = join(root, 'cache');
  const work = join(root, 'work');
  mkdirSync(work, { recursive: true });
  const notes: string[] = [];
  const log = { debug: (m: string) => notes.push(m), info: () => undefined, warn: (m: string) => notes.push(`warn: ${m}`), error: () => undefined };
  const ctx = createContext({ env: { HOME: join(root, 'home'), YEP_EXT_CACHE_DIR: dir }, log: log as unknown as Context['log'] });
  return { ctx, dir, work, notes };
}

function file(work: string, name: string, bytes: Buffer): { path: string; sha: string } {
  const path = join(work, name);
  writeFileSync(path, bytes, { mode: 0o600 });
  return { path, sha: createHash('sha256').update(bytes).digest('hex') };
}

describe('download cache layout (cacache 20: content-v2, index-v5)', () => {
  it('a linked .crate: one inode with the content path, and cacache reads it by digest and by key, lists it and keeps it through verify', async () => {
    const { ctx, dir, work, notes } = setup();
    const bytes = Buffer.from('a verified crate\n'.repeat(1000));
    const f = file(work, 'pkg.crate', bytes);
    await storeInCache(ctx, f.sha, f.path, cacheKey(f.sha), 'link');
    expect(notes).toEqual([]);
    const cpath = contentPath(dir, f.sha);
    // Linked, not copied: the same inode (no byte was read or written).
    expect(statSync(cpath).ino).toBe(statSync(f.path).ino);
    // Readable as cacache's content is (0666 less the umask), though the download was made 0600:
    // another user of a cache baked into an image must be able to read it.
    expect(statSync(cpath).mode & 0o777).toBe(0o666 & ~process.umask());
    rmSync(f.path);
    expect((await cacache.get.byDigest(dir, integrityOf(f.sha))).equals(bytes)).toBe(true);
    const byKey = await cacache.get(dir, cacheKey(f.sha));
    expect(byKey.data.equals(bytes)).toBe(true);
    expect(byKey.integrity).toBe(integrityOf(f.sha));
    expect(byKey.size).toBe(bytes.length);
    const info = await cacache.get.info(dir, cacheKey(f.sha));
    expect(info).toMatchObject({ key: cacheKey(f.sha), integrity: integrityOf(f.sha), size: bytes.length, path: cpath });
    expect(Object.keys(await cacache.ls(dir))).toEqual([cacheKey(f.sha)]);
    const v = (await cacache.verify(dir)) as Record<string, number>;
    expect(v).toMatchObject({ verifiedContent: 1, reclaimedCount: 0, badContentCount: 0, totalEntries: 1 });
    expect(existsSync(cpath)).toBe(true);
  });

  it('a copied file (the binary artifact path): a separate inode, the same reads', async () => {
    const { ctx, dir, work, notes } = setup();
    const bytes = Buffer.from('a verified artifact\n'.repeat(500));
    const f = file(work, 'artifact', bytes);
    const key = 'yep-ext:binary:https://example.test/a.tar.gz';
    await storeInCache(ctx, f.sha, f.path, key);
    expect(notes).toEqual([]);
    const cpath = contentPath(dir, f.sha);
    expect(statSync(cpath).ino).not.toBe(statSync(f.path).ino);
    expect(statSync(cpath).mode & 0o777).toBe(0o666 & ~process.umask());
    // Content already there is kept, not copied over again.
    const ino = statSync(cpath).ino;
    await storeInCache(ctx, f.sha, f.path, key);
    expect(statSync(cpath).ino).toBe(ino);
    // The source may change afterwards (the binary step renames and chmods it): the cache keeps its bytes.
    writeFileSync(f.path, 'changed');
    expect(readFileSync(cpath).equals(bytes)).toBe(true);
    // No temp file left behind in cacache's tmp dir.
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    expect((await cacache.get(dir, key)).data.equals(bytes)).toBe(true);
    expect(((await cacache.verify(dir)) as Record<string, number>).verifiedContent).toBe(1);
  });

  it('a copy whose bytes are not the digest it is stored under (the file changed after it was verified) never lands: no content, no index entry, no temp', async () => {
    const { ctx, dir, work, notes } = setup();
    const f = file(work, 'artifact', Buffer.from('the verified bytes\n'));
    writeFileSync(f.path, 'changed after the verification\n');
    await storeInCache(ctx, f.sha, f.path, 'yep-ext:binary:https://example.test/b.tar.gz');
    expect(notes.join('\n')).toContain(f.sha);
    expect(existsSync(contentPath(dir, f.sha))).toBe(false);
    expect(existsSync(join(dir, 'index-v5'))).toBe(false);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('a .crate on another file system than the cache (no hard link possible): copied instead, the same reads', async () => {
    // The suite's temp dir may itself be on /dev/shm (scripts/test.mjs): then the disk's /tmp is the other one.
    const other = ['/dev/shm', '/run', '/tmp', '/var/tmp'].find((d) => existsSync(d) && statSync(d).dev !== statSync(base).dev);
    expect(other, 'a second file system (tmpfs /dev/shm or /run, or the disk) beside the temp dir').toBeDefined();
    const root = mkdtempSync(join(other!, 'yep-cache-layout-'));
    try {
      const { ctx, dir, notes } = setup();
      const bytes = Buffer.from('crossing file systems\n'.repeat(200));
      const f = file(root, 'pkg.crate', bytes);
      await storeInCache(ctx, f.sha, f.path, cacheKey(f.sha), 'link');
      expect(notes).toEqual([]);
      expect(statSync(contentPath(dir, f.sha)).dev).not.toBe(statSync(f.path).dev);
      expect((await cacache.get(dir, cacheKey(f.sha))).data.equals(bytes)).toBe(true);
      expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('what cacache puts, readCachedInto reads (and re-hashes)', async () => {
    const { ctx, dir, work } = setup();
    const bytes = Buffer.from('put by cacache\n'.repeat(300));
    const sha = createHash('sha256').update(bytes).digest('hex');
    await cacache.put(dir, cacheKey(sha), bytes, { integrity: integrityOf(sha), algorithms: ['sha256'] });
    expect(existsSync(contentPath(dir, sha))).toBe(true);
    const dest = join(work, 'got.crate');
    expect(await readCachedInto(ctx, sha, dest)).toBe(bytes.length);
    expect(readFileSync(dest).equals(bytes)).toBe(true);
  });

  it('content already there is kept; a second entry for another key is appended to its own bucket', async () => {
    const { ctx, dir, work, notes } = setup();
    const bytes = Buffer.from('same bytes twice');
    const a = file(work, 'a.crate', bytes);
    const b = file(work, 'b.crate', bytes);
    await storeInCache(ctx, a.sha, a.path, cacheKey(a.sha), 'link');
    await storeInCache(ctx, b.sha, b.path, 'yep-ext:other', 'link');
    expect(notes).toEqual([]);
    expect(statSync(contentPath(dir, a.sha)).ino).toBe(statSync(a.path).ino);
    expect(Object.keys(await cacache.ls(dir)).sort()).toEqual([cacheKey(a.sha), 'yep-ext:other'].sort());
  });

  it('a cache that cannot be written: one debug note, nothing thrown, nothing written', async () => {
    if (process.getuid?.() === 0) {
      // root ignores directory permissions: a file where the cache directory should be fails for anyone.
      const { ctx, dir, work, notes } = setup();
      writeFileSync(dir, 'not a directory');
      const f = file(work, 'x.crate', Buffer.from('x'));
      await storeInCache(ctx, f.sha, f.path, cacheKey(f.sha), 'link');
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatch(/^download cache not written/);
      expect(readFileSync(dir, 'utf8')).toBe('not a directory');
    } else {
      const { ctx, dir, work, notes } = setup();
      mkdirSync(dir);
      chmodSync(dir, 0o500);
      const f = file(work, 'x.crate', Buffer.from('x'));
      await storeInCache(ctx, f.sha, f.path, cacheKey(f.sha), 'link');
      expect(notes).toEqual([expect.stringMatching(/^download cache not written \(EACCES/)]);
      chmodSync(dir, 0o700);
    }
  });

  it("verify sweeps a dead writer's temps from cacache's tmp (the atomic writer's names and the older ones), never a live writer's or cacache's own", async () => {
    const { ctx, dir, work } = setup();
    const f = file(work, 'pkg.crate', Buffer.from('copied through the atomic writer\n'.repeat(50)));
    await storeInCache(ctx, f.sha, f.path, cacheKey(f.sha), 'copy');
    const dead = spawnSync('true').pid!;
    const tmp = join(dir, 'tmp');
    const names = {
      deadAtomic: `.${f.sha.slice(4)}.yep-${dead}-0.tmp`,
      deadOld: `yep-${dead}-0123456789ab`,
      liveAtomic: `.${f.sha.slice(4)}.yep-${process.pid}-7.tmp`,
      cacaches: 'a1b2c3d4',
    };
    for (const name of Object.values(names)) writeFileSync(join(tmp, name), 'partial');
    await verifyCache(ctx);
    expect(readdirSync(tmp).sort()).toEqual([names.liveAtomic, names.cacaches].sort());
    expect(readFileSync(contentPath(dir, f.sha)).equals(readFileSync(f.path))).toBe(true);
  });

  it('refuses a digest that is not 64 hex digits (no path is built from it)', () => {
    expect(() => contentPath('/c', '../../etc/passwd')).toThrow(/not a sha256 digest/);
  });
});
