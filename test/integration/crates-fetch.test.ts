/**
 * The crates.io fetcher against the loopback registry: resolution over HTTP,
 * download + verification before unpack, and hardening B10-B19 at this layer.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchCrate, fetchCrateExact, resolveCrateVersion } from '../../src/core/sources/crates-io.js';
import { parseRegistryConfig } from '../../src/core/sources/crates-io/registry-config.js';
import type { CrateSpec } from '../../src/core/sources/spec.js';
import { buildCrate, FIXTURE_CRATES, fixtureCrate, packagedCrate } from '../helpers/crates.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const FAST = FAST_HTTP_ENV;
const HELLO = 'yolop-extension-hello';

let reg: TestRegistry;
let home: TempHome;
let stage: string;
let n = 0;

beforeAll(async () => {
  reg = await startRegistry();
  for (const v of ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '1.0.0-beta.1']) {
    reg.publish({ name: HELLO, vers: v, data: fixtureCrate(HELLO, v), keywords: ['yolop-extension'] });
  }
  reg.publish({ name: HELLO, vers: '0.4.0', data: fixtureCrate(HELLO, '0.4.0'), yanked: true });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
  stage = join(home.root, 'stage');
  mkdirSync(stage);
});
afterEach(() => {
  reg.clearFaults();
  reg.requests.length = 0;
  home.cleanup();
});

const ctx = (extra: Record<string, string> = {}) => home.ctx({ ...FAST, YEP_EXT_INDEX: reg.indexUrl, ...extra });
const spec = (crate: string, requirement?: string): CrateSpec => ({ kind: 'crate', raw: crate, crate, ...(requirement ? { requirement } : {}) });
const into = () => join(stage, `pkg${n++}`);
/** The status of a GET of `url` (node:http: the global fetch would load undici into the worker for it). */
const statusOf = (url: string) =>
  new Promise<number | undefined>((resolve, reject) => {
    get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on('error', reject);
  });
const fail = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; hint?: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a failure');
};

describe('fetchCrate', () => {
  it('installs the latest stable, non-yanked version and records what it fetched', async () => {
    const dir = into();
    const r = await fetchCrate(ctx(), spec(HELLO), dir);
    expect(r.dir).toBe(dir);
    expect(r.source).toMatchObject({ type: 'crate', crate_name: HELLO, version: '0.3.1', index: reg.indexUrl });
    expect(r.source.cksum).toMatch(/^[0-9a-f]{64}$/);
    expect(r.source).not.toHaveProperty('requirement');
    expect(JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')).version).toBe('0.3.1');
    expect(statSync(join(dir, 'bin', 'hello-server')).mode & 0o777).toBe(0o755);
    // Only the unpacked tree is left in staging: no .crate, no .partial.
    expect(readdirSync(stage)).toEqual([dir.split('/').pop()]);
  });

  it('sends cargo-style index headers and a yep-ext User-Agent everywhere', async () => {
    await fetchCrate(ctx(), spec(HELLO), into());
    const idx = reg.requestsTo('/index/yo/lo/')[0]!;
    expect(idx.headers['cargo-protocol']).toBe('version=1');
    expect(idx.headers.accept).toBe('text/plain');
    for (const r of reg.requests) expect(String(r.headers['user-agent'])).toMatch(/^yep-ext\//);
  });

  it.each([
    ['0.2.0', '0.2.0'],
    ['=0.3.0', '0.3.0'],
    ['^0.3', '0.3.1'],
    ['~0.3.0', '0.3.1'],
    ['>=0.1, <0.3', '0.2.0'],
    ['1.0.0-beta.1', '1.0.0-beta.1'],
  ])('resolves %s to %s and keeps the requirement', async (req, vers) => {
    const r = await fetchCrate(ctx(), spec(HELLO, req), into());
    expect(r.source).toMatchObject({ version: vers, requirement: req });
  });

  it('installs an exactly named yanked version with a warning (B13)', async () => {
    const c = ctx();
    const r = await fetchCrate(c, spec(HELLO, '0.4.0'), into());
    expect(r.source.version).toBe('0.4.0');
    expect(
      c.log.lines
        .filter((l) => l.level === 'warn')
        .map((l) => l.message)
        .join(),
    ).toMatch(/0\.4\.0 is yanked/);
  });

  it('says no version matches, listing what exists', async () => {
    const e = await fail(fetchCrate(ctx(), spec(HELLO, '^2'), into()));
    expect(e.code).toBe('E_NOT_FOUND');
    expect(e.message).toBe(`No version of ${HELLO} matches ^2.`);
    expect(e.hint).toBe('Available: 1.0.0-beta.1, 0.3.1, 0.3.0, 0.2.0, 0.1.0.');
  });

  it('says "no such crate", suggesting the other -/_ spelling (index 404/410/451, no retries)', async () => {
    reg.publish({ name: 'yolop-extension-foo_bar', vers: '1.0.0', data: fixtureCrate(HELLO, '1.0.0') });
    for (const status of [404, 410, 451] as const) {
      reg.setMissingStatus(status);
      reg.requests.length = 0;
      const e = await fail(fetchCrate(ctx(), spec('yolop-extension-foo-bar'), into()));
      expect(e.code).toBe('E_NOT_FOUND');
      expect(e.message).toMatch(/No crate named yolop-extension-foo-bar/);
      expect(e.hint).toMatch(/Did you mean yolop-extension-foo_bar\? Install it with `yep-ext install foo_bar`/);
      expect(reg.requestsTo('/index/yo/lo/yolop-extension-foo-bar')).toHaveLength(1);
    }
    reg.setMissingStatus(404);
    const e = await fail(fetchCrate(ctx(), spec('yolop-extension-nothing'), into()));
    expect(e.hint).toMatch(/yep-ext search nothing/);
  });

  it('finds a crate whatever the case the user typed, recording the published name', async () => {
    const r = await fetchCrate(ctx(), spec('Yolop-Extension-HELLO', '0.1.0'), into());
    expect(r.source.crate_name).toBe(HELLO);
  });

  it('writes plugin.json from [package.metadata.yolop] of a real cargo-made crate', async () => {
    reg.publish({ name: 'yolop-extension-cargo-made', vers: '0.2.0', data: packagedCrate() });
    const dir = into();
    const c = ctx();
    const r = await fetchCrate(c, spec('yolop-extension-cargo-made'), dir);
    expect(r.source.cksum).toBe('a644b6ec3c7ab40a633c023992070f240253921e111e49bd16025f6fc972bf36');
    expect(JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'))).toEqual({
      name: 'cargo-made',
      description: 'A test extension packaged by cargo; its manifest lives in Cargo.toml',
      version: '0.2.0',
      yolop: {
        protocol_version: '1.0',
        capabilityServer: { command: 'cargo-made-server' },
        tools: [{ name: 'made', description: 'Report that cargo made this package' }],
      },
    });
    expect(statSync(join(dir, 'bin', 'cargo-made-server')).mode & 0o777).toBe(0o755);
    expect(existsSync(join(dir, 'Cargo.toml.orig'))).toBe(true);
  });

  it('downloads versions with +build metadata (raw + and %2B both served)', async () => {
    // The crate root is `{name}-{version}/` with the build metadata included.
    reg.publish({ name: 'yolop-extension-plus', vers: '2.0.0+x', data: buildNamed('yolop-extension-plus', '2.0.0+x') });
    const r = await fetchCrate(ctx(), spec('yolop-extension-plus'), into());
    expect(r.source.version).toBe('2.0.0+x');
    expect(reg.requestsTo('/crates/')[0]!.url).toBe('/crates/yolop-extension-plus/2.0.0+x/download');
    expect(await statusOf(`${reg.url}crates/yolop-extension-plus/2.0.0%2Bx/download`)).toBe(200);
    expect(await statusOf(`${reg.url}crates/yolop-extension-plus/yolop-extension-plus-2.0.0%2Bx.crate`)).toBe(200);
  });

  it('uses the dl template from config.json (markers), never a hard-coded location', async () => {
    reg.setConfig({ dl: `${reg.url}crates/{crate}/{crate}-{version}.crate?p={prefix}&l={lowerprefix}&s={sha256-checksum}` });
    try {
      const r = await fetchCrate(ctx(), spec(HELLO, '0.1.0'), into());
      const dl = reg.requestsTo('/crates/')[0]!.url;
      expect(dl).toBe(`/crates/${HELLO}/${HELLO}-0.1.0.crate?p=yo/lo&l=yo/lo&s=${r.source.cksum}`);
    } finally {
      reg.setConfig(undefined as never);
    }
  });

  it('asks for config.json while the index file is still arriving, not after it', async () => {
    // The index file dripped over >= 2 s: fetched one after the other, config.json
    // would be requested only once it is complete.
    const indexFile = `/index/yo/lo/${HELLO}`;
    const chunk = Math.ceil(Buffer.byteLength(reg.indexFile(HELLO)!) / 20);
    reg.fault(indexFile, { kind: 'slow-drip', intervalMs: 100, chunk });
    await fetchCrate(ctx({ YEP_EXT_HTTP_MIN_RATE: '1' }), spec(HELLO, '0.1.0'), into());
    const index = reg.requestsTo(indexFile)[0]!;
    const config = reg.requestsTo('/index/config.json')[0]!;
    expect(config.at - index.at).toBeLessThan(1000);
  });

  it('revalidates the cached index file with If-None-Match and uses it on 304', async () => {
    await resolveCrateVersion(ctx(), HELLO);
    reg.requests.length = 0;
    const again = await resolveCrateVersion(ctx(), HELLO);
    expect(again.vers).toBe('0.3.1');
    const req = reg.requestsTo('/index/yo/lo/')[0]!;
    expect(req.headers['if-none-match']).toMatch(/^"[0-9a-f]+"$/);
  });
});

describe('config.json cache', () => {
  it('a warm fetch revalidates config.json with If-None-Match and gets a 304, not the file again', async () => {
    await fetchCrate(ctx(), spec(HELLO, '0.1.0'), into());
    reg.requests.length = 0;
    const again = await fetchCrate(ctx(), spec(HELLO, '0.1.0'), into());
    expect(existsSync(join(again.dir, 'plugin.json'))).toBe(true);
    const config = reg.requestsTo('/index/config.json');
    expect(config).toHaveLength(1);
    expect(config[0]!.headers['if-none-match']).toMatch(/^"[0-9a-f]+"$/);
    expect(config.map((r) => r.status)).toEqual([304]);
  });

  it('a crate that does not exist: the call settles after the concurrent config.json fetch, so nothing is written after it returns', async () => {
    // config.json drips in (~0.4 s); the index file's 404 is immediate. The failure must not
    // return while config.json's fetch is still running and will write its cache entry later
    // (into a home the caller may already have removed: the suite leaked such homes).
    reg.fault('/index/config.json', { kind: 'slow-drip', intervalMs: 40, chunk: 8 });
    const key = (await import('node:crypto')).createHash('sha256').update(`${reg.indexUrl}config.json`).digest('hex').slice(0, 32);
    const file = join(ctx().paths.cacheDir, 'index', key.slice(0, 2), `${key}.json`);
    // 8 bytes per 40 ms is 200 B/s, under FAST's 2,048 B/s minimum rate: the drip finished
    // inside the 400 ms rate window only on a quiet machine; under load the slow-transfer
    // guard cut config.json and nothing was cached (a drip at 120 ms fails every time).
    // The guard is not what this test is about.
    const e = await fail(fetchCrate(ctx({ YEP_EXT_HTTP_MIN_RATE: '1' }), spec('yolop-extension-nope'), into()));
    expect(e.code).toBe('E_NOT_FOUND');
    expect(existsSync(file)).toBe(true);
  });

  it('a config.json cache entry that does not match its digest is not used', async () => {
    await fetchCrate(ctx(), spec(HELLO, '0.1.0'), into());
    const { createHash } = await import('node:crypto');
    const url = `${reg.indexUrl}config.json`;
    const key = createHash('sha256').update(url).digest('hex').slice(0, 32);
    const file = join(ctx().paths.cacheDir, 'index', key.slice(0, 2), `${key}.json`);
    const rec = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...rec, body: JSON.stringify({ dl: 'http://127.0.0.1:1/evil' }) }));
    reg.requests.length = 0;
    await fetchCrate(ctx(), spec(HELLO, '0.1.0'), into());
    const config = reg.requestsTo('/index/config.json');
    expect(config[0]!.headers['if-none-match']).toBeUndefined();
    expect(config.map((r) => r.status)).toEqual([200]);
  });
});

describe('resolveCrateVersion', () => {
  it('returns the chosen index entry', async () => {
    const r = await resolveCrateVersion(ctx(), HELLO, '^0.2');
    expect(r).toEqual({ name: HELLO, vers: '0.2.0', cksum: expect.stringMatching(/^[0-9a-f]{64}$/), yanked: false });
  });
  it('reports only pre-releases and only yanked over the network too (B13)', async () => {
    reg.publish({ name: 'yolop-extension-pre', vers: '0.1.0-rc.1', data: Buffer.from('x') });
    reg.publish({ name: 'yolop-extension-gone', vers: '0.1.0', data: Buffer.from('x'), yanked: true });
    expect((await fail(resolveCrateVersion(ctx(), 'yolop-extension-pre'))).message).toMatch(/only pre-release versions \(0\.1\.0-rc\.1\)/);
    expect((await fail(resolveCrateVersion(ctx(), 'yolop-extension-gone'))).message).toMatch(/Every release of yolop-extension-gone is yanked/);
  });
});

describe('verification before unpack (B10, B11)', () => {
  it('rejects a download whose SHA-256 differs from cksum; nothing unpacked, no partial left (B10)', async () => {
    reg.fault('/crates/', { kind: 'corrupt' });
    const dir = into();
    const e = await fail(fetchCrate(ctx(), spec(HELLO), dir));
    expect(e.code).toBe('E_INTEGRITY');
    expect(e.message).toMatch(/does not match the registry checksum; nothing was unpacked/);
    expect(e.details).toMatchObject({ wanted: expect.stringMatching(/^[0-9a-f]{64}$/), got: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(readdirSync(stage)).toEqual([]);
  });

  it('rejects a crate whose index cksum names other bytes (B10)', async () => {
    reg.publish({ name: 'yolop-extension-liar', vers: '1.0.0', data: fixtureCrate(HELLO, '1.0.0'), cksum: 'b'.repeat(64) });
    const e = await fail(fetchCrate(ctx(), spec('yolop-extension-liar'), into()));
    expect(e.code).toBe('E_INTEGRITY');
    expect(readdirSync(stage)).toEqual([]);
  });

  it.each([
    ['missing', null],
    ['empty', ''],
    ['63 chars', 'a'.repeat(63)],
    ['uppercase', 'A'.repeat(64)],
    ['non-hex', 'z'.repeat(64)],
    ['hex+zz', `${'a'.repeat(64)}zz`],
  ])('never installs a version whose cksum is %s, and never downloads it (B11)', async (_label, cksum) => {
    const name = `yolop-extension-ck${n++}`;
    reg.publish({ name, vers: '1.0.0', data: Buffer.from('whatever'), cksum: cksum as string | null });
    const e = await fail(fetchCrate(ctx(), spec(name), into()));
    expect(e.code).toBe('E_INTEGRITY');
    expect(e.message).toMatch(/no valid checksum/);
    expect(reg.requestsTo('/crates/')).toHaveLength(0);
  });
});

describe('hostile index and HTTP (B12, B14-B19)', () => {
  it('ignores one malformed line among good ones (B12)', async () => {
    reg.publish({ name: 'yolop-extension-mixed', vers: '1.0.0', data: buildNamed('yolop-extension-mixed', '1.0.0') });
    reg.addIndexLine('yolop-extension-mixed', '{"name": "yolop-extension-mixed", "vers": "2.0.0", "cksum": ');
    reg.addIndexLine('yolop-extension-mixed', JSON.stringify({ name: 'yolop-extension-mixed', vers: '3.0.0', cksum: 'c'.repeat(64), v: 3 }));
    const r = await fetchCrate(ctx(), spec('yolop-extension-mixed'), into());
    expect(r.source.version).toBe('1.0.0');
  });

  it('refuses an HTML page served with status 200 for the index file (B12)', async () => {
    reg.fault('/index/yo/', { kind: 'html' });
    const e = await fail(fetchCrate(ctx(), spec(HELLO), into()));
    expect(e.code).toBe('E_NETWORK');
    expect(e.message).toMatch(/is an HTML page, not sparse index lines/);
  });

  it('refuses an HTML page for config.json (wrong --index)', async () => {
    reg.fault('/index/config.json', { kind: 'html' });
    const e = await fail(fetchCrate(ctx(), spec(HELLO), into()));
    expect(e.message).toMatch(/config\.json is an HTML page/);
  });

  it('stops an endless download at the crate size cap (B14)', async () => {
    reg.fault('/crates/', { kind: 'endless' });
    const e = await fail(fetchCrate(ctx({ YEP_EXT_MAX_CRATE_BYTES: String(1 << 20) }), spec(HELLO), into()));
    expect(e.code).toBe('E_NETWORK');
    expect(e.message).toMatch(/larger than the 1 MiB limit/);
    expect(readdirSync(stage)).toEqual([]);
  });

  it('stops an endless index body at its cap (B14)', async () => {
    reg.fault('/index/yo/', { kind: 'endless', chunkBytes: 1 << 20 });
    // The cap must stop it, not the request deadline: FAST's 3 s was too short for 20 MiB on a loaded machine.
    const e = await fail(resolveCrateVersion(ctx({ YEP_EXT_HTTP_TIMEOUT_MS: '60000' }), HELLO));
    expect(e.message).toMatch(/larger than the 20 MiB limit/);
  });

  it('aborts a slow-drip download (B15)', async () => {
    reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 100, chunk: 10 });
    const t0 = Date.now();
    const e = await fail(fetchCrate(ctx(), spec(HELLO), into()));
    expect(e.message).toMatch(/slower than/);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(readdirSync(stage)).toEqual([]);
  });

  it('refuses a download redirected to another host (B16)', async () => {
    reg.fault('/crates/', { kind: 'redirect', location: `${reg.url.replace('127.0.0.1', 'localhost')}crates/${HELLO}/0.3.1/download` });
    const e = await fail(fetchCrate(ctx(), spec(HELLO), into()));
    expect(e.message).toMatch(/refused a redirect .* to another host/);
  });

  it('retries 500 then 200 on both index and download; 429 with Retry-After (B17)', async () => {
    reg.fault('/index/yo/', { kind: 'status', status: 500 }, 1);
    reg.fault('/crates/', { kind: 'status', status: 503 }, 1);
    reg.fault('/crates/', { kind: 'status', status: 429, headers: { 'retry-after': '0' } }, 1);
    const r = await fetchCrate(ctx(), spec(HELLO), into());
    expect(r.source.version).toBe('0.3.1');
    expect(reg.requestsTo('/index/yo/')).toHaveLength(2);
    expect(reg.requestsTo('/crates/')).toHaveLength(3);
  });

  it('retries a download cut mid-body, then verifies the complete one (B18)', async () => {
    reg.fault('/crates/', { kind: 'truncate', afterBytes: 200 }, 1);
    const r = await fetchCrate(ctx(), spec(HELLO), into());
    expect(r.source.version).toBe('0.3.1');
    expect(reg.requestsTo('/crates/')).toHaveLength(2);
  });

  it('fails cleanly when the registry is unreachable (B18)', async () => {
    const e = await fail(fetchCrate(home.ctx({ ...FAST, YEP_EXT_INDEX: 'http://127.0.0.1:9/index/' }), spec(HELLO), into()));
    expect(e.code).toBe('E_NETWORK');
    expect(e.message).toMatch(/connection was refused .*gave up after 3 attempts/);
  });

  it('refuses a config.json whose dl is plain http to a remote host, before downloading (B19)', async () => {
    reg.setConfig({ dl: 'http://cdn.example.com/crates' });
    try {
      const e = await fail(fetchCrate(ctx(), spec(HELLO), into()));
      expect(e.message).toMatch(/refusing plain http to cdn\.example\.com/);
      expect(reg.requestsTo('/crates/')).toHaveLength(0);
    } finally {
      reg.setConfig(undefined as never);
    }
  });

  it('accepts a dl on another (https or loopback) host, still enforcing the checksum (B19)', async () => {
    const cdn = await startRegistry();
    try {
      cdn.publish({ name: HELLO, vers: '0.3.1', data: fixtureCrate(HELLO, '0.3.1') });
      reg.setConfig({ dl: `${cdn.url}crates` });
      const r = await fetchCrate(ctx(), spec(HELLO), into());
      expect(r.source.version).toBe('0.3.1');
      expect(cdn.requestsTo('/crates/')).toHaveLength(1);
      cdn.fault('/crates/', { kind: 'corrupt' });
      // Download again (not from the shared download cache, which now holds the verified copy).
      expect((await fail(fetchCrate(ctx({ YEP_EXT_CACHE_DIR: 'off' }), spec(HELLO), into()))).code).toBe('E_INTEGRITY');
    } finally {
      reg.setConfig(undefined as never);
      await cdn.close();
    }
    expect(parseRegistryConfig(JSON.stringify({ dl: 'https://static.example/crates' }), 'https://idx.example/').dl).toBe('https://static.example/crates');
    expect(() => parseRegistryConfig(JSON.stringify({ dl: 'ftp://x/y' }), 'https://idx.example/')).toThrow(/ftp scheme/);
    expect(() => parseRegistryConfig(JSON.stringify({ api: 'x' }), 'https://idx.example/')).toThrow(/no "dl"/);
    expect(() => parseRegistryConfig(JSON.stringify({ dl: 'https://a/b', 'auth-required': true }), 'https://idx.example/')).toThrow(/requires authentication/);
  });

  it('refuses a plain-http index that is not loopback', async () => {
    const e = await fail(fetchCrate(home.ctx({ ...FAST, YEP_EXT_INDEX: 'http://index.example.com/' }), spec(HELLO), into()));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toMatch(/refusing plain http/);
  });
});

describe('fetchCrateExact (frozen installs)', () => {
  it('fetches the locked version with the locked cksum without reading the index file', async () => {
    const cksum = (await resolveCrateVersion(ctx(), HELLO, '0.2.0')).cksum;
    reg.requests.length = 0;
    const r = await fetchCrateExact(ctx(), { crate_name: HELLO, version: '0.2.0', cksum, requirement: '^0.2' }, into());
    expect(r.source).toMatchObject({ crate_name: HELLO, version: '0.2.0', cksum, requirement: '^0.2' });
    expect(reg.requestsTo('/index/yo/')).toHaveLength(0);
  });

  it('consults the index only when the lock has no cksum', async () => {
    const r = await fetchCrateExact(ctx(), { crate_name: HELLO, version: '0.1.0' }, into());
    expect(r.source.version).toBe('0.1.0');
    expect(reg.requestsTo('/index/yo/')).toHaveLength(1);
    const e = await fail(fetchCrateExact(ctx(), { crate_name: HELLO, version: '9.9.9' }, into()));
    expect(e.code).toBe('E_NOT_FOUND');
  });

  it('refuses bytes that do not match the locked cksum', async () => {
    const e = await fail(fetchCrateExact(ctx(), { crate_name: HELLO, version: '0.2.0', cksum: 'd'.repeat(64) }, into()));
    expect(e.code).toBe('E_INTEGRITY');
    const e2 = await fail(fetchCrateExact(ctx(), { crate_name: HELLO, version: '0.2.0', cksum: 'D'.repeat(64) }, into()));
    expect(e2.code).toBe('E_INTEGRITY');
    expect(reg.requestsTo('/crates/')).toHaveLength(1);
  });
});

function buildNamed(name: string, version: string): Buffer {
  return buildCrate({ name, version, dir: join(FIXTURE_CRATES, HELLO) });
}
