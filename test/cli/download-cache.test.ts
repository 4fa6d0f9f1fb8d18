/**
 * The shared download cache (issue 14): two homes, one cache -> the second install
 * downloads nothing and places the same bytes; a flipped byte in the cache is
 * detected on read, fetched again and never installed; `cache verify` finds a bad
 * entry, `cache clean` empties it; YEP_EXT_CACHE_DIR=off turns it off.
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { fixtureCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let cacheRoot: TempHome;
let cacheDir: string;
const homes: TempHome[] = [];
const home = (): TempHome => {
  const h = makeTempHome();
  homes.push(h);
  return h;
};
const env = (h: TempHome, extra: Record<string, string> = {}) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', YEP_EXT_CACHE_DIR: cacheDir, ...extra });
const lockOf = (h: TempHome) => readFileSync(join(h.configDir, 'extensions', 'extensions.lock'), 'utf8');
const downloads = () => reg.requestsTo('/crates/').length;

function contentFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(p);
    }
  };
  if (existsSync(join(dir, 'content-v2'))) walk(join(dir, 'content-v2'));
  return out;
}

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0') });
  cacheRoot = makeTempHome('yep-cache-');
});
afterAll(async () => {
  await reg.close();
  cacheRoot.cleanup();
  for (const h of homes) h.cleanup();
});
let n = 0;
beforeEach(() => {
  cacheDir = join(cacheRoot.root, `cache-${n++}`);
});

describe('the shared download cache', () => {
  it('two homes, one cache: the second install downloads nothing and places the same bytes', async () => {
    const [a, b] = [home(), home()];
    reg.requests.length = 0;
    expect((await runCli(['install', 'hello@0.3.0'], { env: env(a) })).code).toBe(0);
    expect(downloads()).toBe(1);
    expect(contentFiles(cacheDir)).toHaveLength(1);
    const r = await runCli(['install', 'hello@0.3.0'], { env: env(b) });
    expect(r.code, r.stderr).toBe(0);
    expect(downloads()).toBe(1);
    expect(lockOf(b)).toBe(lockOf(a));
    expect(await contentHash(join(b.configDir, 'extensions', 'hello'))).toBe(await contentHash(join(a.configDir, 'extensions', 'hello')));
  });

  it('a flipped byte in the cache is detected on read and fetched again, never installed; cache verify and clean', async () => {
    const [a, b] = [home(), home()];
    expect((await runCli(['install', 'hello@0.3.0'], { env: env(a) })).code).toBe(0);
    const [file] = contentFiles(cacheDir);
    const bytes = readFileSync(file!);
    bytes[bytes.length >> 1]! ^= 0xff;
    writeFileSync(file!, bytes);

    const v = await runCli(['cache', 'verify', '--json'], { env: env(a) });
    expect(v.code, v.stderr).toBe(0);
    expect(jsonOf(v)).toMatchObject({ dir: cacheDir, bad: 1 });
    writeFileSync(file!, bytes); // verify removed it; corrupt it again for the install path

    reg.requests.length = 0;
    const r = await runCli(['install', 'hello@0.3.0'], { env: env(b) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/cache entry .* is corrupted; downloading it again/);
    expect(downloads()).toBe(1);
    expect(await contentHash(join(b.configDir, 'extensions', 'hello'))).toBe(await contentHash(join(a.configDir, 'extensions', 'hello')));
    // The re-downloaded bytes replaced the bad entry.
    expect(jsonOf(await runCli(['cache', 'verify', '--json'], { env: env(a) }))).toMatchObject({ bad: 0, verified: 1 });

    const c = await runCli(['cache', 'clean', '--json'], { env: env(a) });
    expect(c.code, c.stderr).toBe(0);
    expect(jsonOf(c).removed).toBe(1);
    expect(contentFiles(cacheDir)).toEqual([]);
  });

  it('YEP_EXT_CACHE_DIR=off: nothing cached, every home downloads', async () => {
    const [a, b] = [home(), home()];
    reg.requests.length = 0;
    for (const h of [a, b]) expect((await runCli(['install', 'hello@0.3.0'], { env: env(h, { YEP_EXT_CACHE_DIR: 'off' }) })).code).toBe(0);
    expect(downloads()).toBe(2);
    expect(existsSync(join(a.root, 'home', '.cache'))).toBe(false);
  });

  it('default location: $HOME/.cache/yep-ext of the home running it', async () => {
    const a = home();
    const e = env(a);
    delete (e as Record<string, string>).YEP_EXT_CACHE_DIR;
    expect((await runCli(['install', 'hello@0.3.0'], { env: e })).code).toBe(0);
    expect(contentFiles(join(a.root, 'home', '.cache', 'yep-ext'))).toHaveLength(1);
  });
});
