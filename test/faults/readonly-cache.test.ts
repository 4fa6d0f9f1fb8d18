/**
 * The shared download cache on a read-only mount (a cache baked into an
 * image or shared read-only between containers). The tests run as root, which file
 * modes do not stop, so the cache is a real read-only bind mount (`mount --bind`,
 * then `mount -o remount,bind,ro`: needs root; without it the suite is skipped,
 * saying so, or fails under YEP_EXT_REQUIRE_ALL=1, as the disk-full suite does).
 * A warm read-only cache serves installs with zero downloads; a crate it lacks is
 * downloaded and installed, the failed cache write is at most one debug note (never
 * a warning or a failure), and the cache is byte-identical afterwards.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { buildCrate, fixtureCrate } from '../helpers/crates.js';
import { treeBytes } from '../helpers/file-walk.js';
import { runCli, type TempHome } from '../helpers/home.js';
import { homePool } from '../helpers/home-pool.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { bindReadOnly, readOnlyMountable } from '../helpers/readonly-mount.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';

const mountable = readOnlyMountable();

let base: string;
let warm: string;
let ro: string;
let mounted = false;
let reg: TestRegistry;
const homes = homePool();
const home = (): TempHome => homes.make();
const env = (h: TempHome, cacheDir: string) => ({
  ...h.env,
  YEP_EXT_INDEX: reg.indexUrl,
  YEP_EXT_HTTP_RETRIES: '0',
  YEP_EXT_CACHE_DIR: cacheDir,
  YEP_EXT_DEBUG: '1',
});
const store = (h: TempHome, name: string) => join(h.configDir, 'extensions', name);

const tree = treeBytes;

let origin: TempHome;

beforeAll(async () => {
  if (!mountable.ok) return;
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0') });
  reg.publish({ name: HELLO, vers: '0.4.0', data: fixtureCrate(HELLO, '0.4.0') });
  const two = { name: 'two', version: '1.0.0', yolop: { capabilityServer: { command: 'sh' }, tools: [{ name: 't' }] } };
  reg.publish({
    name: 'yolop-extension-two',
    vers: '1.0.0',
    data: buildCrate({ name: 'yolop-extension-two', version: '1.0.0', files: { 'plugin.json': JSON.stringify(two) } }),
  });
  base = mkdtempSync(join(tmpdir(), 'yep-rocache-'));
  warm = join(base, 'warm');
  ro = join(base, 'ro');
  mkdirSync(ro);
  // Warm the cache with hello through a writable path, then expose it read-only.
  origin = home();
  const r = await runCli(['install', 'hello@0.3.0'], { env: env(origin, warm) });
  expect(r.code, r.stderr).toBe(0);
  const m = bindReadOnly(warm, ro);
  expect(m.status, m.stderr).toBe(0);
  mounted = true;
}, 120_000);

afterAll(async () => {
  if (mounted) spawnSync('umount', [ro]);
  if (reg) await reg.close();
  homes.cleanup();
  if (base) rmSync(base, { recursive: true, force: true });
});

describeNeeding(
  need(mountable.ok, `root and a read-only bind mount (mount --bind / remount,bind,ro said: ${mountable.why})`),
  'the download cache on a read-only mount',
  () => {
    it('the mount is really read-only (root cannot write there)', () => {
      const w = spawnSync('touch', [join(ro, 'probe')], { encoding: 'utf8' });
      expect(w.status).not.toBe(0);
      expect(w.stderr).toMatch(/Read-only file system/);
    });

    it('a warm read-only cache: zero downloads, the same content installed, the cache untouched', async () => {
      const before = tree(ro);
      const h = home();
      reg.requests.length = 0;
      const r = await runCli(['install', 'hello@0.3.0'], { env: env(h, ro) });
      expect(r.code, r.stderr).toBe(0);
      expect(reg.requestsTo('/crates/')).toHaveLength(0);
      expect(r.stderr).not.toMatch(/warn|cache not written|read-only/i);
      expect(await contentHash(store(h, 'hello'))).toBe(await contentHash(store(origin, 'hello')));
      expect(tree(ro)).toEqual(before);
    });

    it('crates the cache lacks: downloaded and installed, the failed writes are one debug note, the cache byte-identical', async () => {
      const before = tree(ro);
      const h = home();
      reg.requests.length = 0;
      const r = await runCli(['install', 'hello@0.4.0', 'two'], { env: env(h, ro) });
      expect(r.code, r.stderr).toBe(0);
      expect(reg.requestsTo('/crates/')).toHaveLength(2);
      expect(readdirSync(store(h, 'two'))).toContain('plugin.json');
      expect(readFileSync(join(store(h, 'hello'), 'plugin.json'), 'utf8')).toContain('0.4.0');
      const notes = r.stderr.split('\n').filter((l) => /cache/i.test(l) && !/cache hit/i.test(l));
      // YEP_EXT_DEBUG is on: the one note is there, a debug line, never a warning.
      expect(notes, r.stderr).toHaveLength(1);
      expect(notes[0]).toMatch(/^debug: download cache not written \(EROFS: .* is read-only/);
      expect(tree(ro)).toEqual(before);
    });

    it('each run finds out for itself: a later run into the same read-only cache tries, and notes it once again', async () => {
      const before = tree(ro);
      for (const run of ['first', 'second']) {
        const h = home();
        const r = await runCli(['install', 'hello@0.4.0'], { env: env(h, ro) });
        expect(r.code, `${run}: ${r.stderr}`).toBe(0);
        const notes = r.stderr.split('\n').filter((l) => /download cache not written/.test(l));
        expect(notes, `${run}: ${r.stderr}`).toHaveLength(1);
      }
      expect(tree(ro)).toEqual(before);
    });
  },
);
