/**
 * `yep-ext mirror` and installs from a mirror:
 * lock (crate + path entries) -> mirror -> install --frozen into an empty home
 * from a file:// root and from a real nginx serving the tree: the lock bytes and
 * the store's content hashes equal the origin install's, and the origin registry
 * sees zero requests; the same from a plain static server from npm (serve-handler).
 * A tampered .crate is refused (exit 5), nothing placed;
 * re-running mirror keeps what is pinned and never rewrites a file with other bytes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import serveHandler from 'serve-handler';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { fixtureCrate } from '../helpers/crates.js';
import { copyTree, removeTree } from '../helpers/file-walk.js';
import { fixtureFiles, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { jsonOf, runCli, type TempHome } from '../helpers/home.js';
import { homePool } from '../helpers/home-pool.js';
import { describeNeeding } from '../helpers/needs.js';
import { NEEDS_NGINX, startNginx, type Nginx } from '../helpers/nginx.js';
import { writePackage } from '../helpers/packages.js';
import { BINNY_BINARY, publishBinny, serveBinnyBinary } from '../helpers/binny.js';
import { hostTarget } from '../../src/core/binary/provision-binary.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let reg: TestRegistry;
let source: TempHome;
let lockCopy: string;
let repo: TestRepo;
const homes = homePool();
const home = (): TempHome => homes.make();
const lockOf = (h: TempHome) => join(h.configDir, 'extensions', 'extensions.lock');
const store = (h: TempHome) => join(h.configDir, 'extensions');
const storeEntries = (h: TempHome) =>
  existsSync(store(h))
    ? readdirSync(store(h))
        .filter((e) => !e.startsWith('.'))
        .sort()
    : [];
const originEnv = (h: TempHome) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const mirrorEnv = (h: TempHome, index: string) => ({ ...h.env, YEP_EXT_INDEX: index, YEP_EXT_HTTP_RETRIES: '0' });

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0') });
  reg.publish({ name: HELLO, vers: '0.3.1', data: fixtureCrate(HELLO, '0.3.1') });
  source = home();
  const pathPkg = writePackage(join(source.root, 'pkgs', 'local'), { name: 'local' });
  repo = makeRepo(join(source.root, 'repos'), { files: fixtureFiles('gitext', '1.0.0') });
  repo.tag('v1.0.0');
  const r = await runCli(['install', 'hello@=0.3.0', `${repo.url}@v1.0.0`, pathPkg], { env: originEnv(source) });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  lockCopy = join(source.root, 'project.lock');
  expect((await runCli(['lock', 'export', lockCopy], { env: originEnv(source) })).code).toBe(0);
  builtMirror = join(home().root, 'mirror');
  await buildMirror(builtMirror);
  mirrorAsBuilt = join(home().root, 'mirror-as-built');
  copyTree(builtMirror, mirrorAsBuilt);
});
afterAll(async () => {
  await reg.close();
  homes.cleanup();
});

/**
 * The mirror `buildMirror` makes of lockCopy, made once and copied back to the path it was made
 * at (its config.json names that path) for each test that only needs one: a test that checks
 * what `mirror` itself writes runs it.
 */
let builtMirror: string;
let mirrorAsBuilt: string;
function freshMirror(): string {
  removeTree(builtMirror);
  copyTree(mirrorAsBuilt, builtMirror);
  return builtMirror;
}

async function buildMirror(dir: string, extra: string[] = []) {
  const r = await runCli(['mirror', dir, '--lockfile', lockCopy, '--json', ...extra], { env: originEnv(source) });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return jsonOf(r);
}

async function expectSameAsOrigin(fresh: TempHome): Promise<void> {
  expect(readFileSync(lockOf(fresh), 'utf8')).toBe(readFileSync(lockOf(source), 'utf8'));
  expect(storeEntries(fresh)).toEqual(storeEntries(source));
  for (const name of ['hello', 'gitext']) expect(await contentHash(join(store(fresh), name)), name).toBe(await contentHash(join(store(source), name)));
}

/** Run `fn` with the origin git repository moved away: any fetch from it would fail. */
async function withoutGitOrigin<T>(fn: () => Promise<T>): Promise<T> {
  renameSync(repo.bare, `${repo.bare}.away`);
  try {
    return await fn();
  } finally {
    renameSync(`${repo.bare}.away`, repo.bare);
  }
}
const gitMirrorOf = (dir: string) => `${pathToFileURL(join(dir, 'git')).href}/`;

describe('yep-ext mirror', () => {
  it('names each skipped entry once on stderr (not once as a note and again in the summary)', async () => {
    const r = await runCli(['mirror', join(home().root, 'mirror-human'), '--lockfile', lockCopy], { env: originEnv(source) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.includes('local: skipped ('))).toEqual([
      '- local: skipped (a path source is local by definition; install it from its directory)',
    ]);
    expect(r.stdout).toMatch(/^Mirror at /m);
  });

  it('writes the locked index line byte-for-byte, the verified .crate, config.json and mirror.json; skips path sources', async () => {
    const dir = join(home().root, 'mirror');
    const j = await buildMirror(dir);
    expect(j.crates.map((c: { crate: string; version: string; added: boolean }) => [c.crate, c.version, c.added])).toEqual([[HELLO, '0.3.0', true]]);
    // The git source: a bare repository holding the locked commit, at the documented path.
    const rev = repo.rev('v1.0.0^{commit}');
    expect(j.git.map((g: { name: string; url: string; commit: string; path: string }) => [g.name, g.url, g.commit, g.path])).toEqual([
      ['gitext', repo.url, rev, `git/file${repo.bare}`],
    ]);
    expect(existsSync(join(dir, `git/file${repo.bare}`, 'info', 'refs'))).toBe(true);
    expect(j.skipped.map((s: { name: string }) => s.name)).toEqual(['local']);
    const base = `${pathToFileURL(dir).href}/`;
    expect(JSON.parse(readFileSync(join(dir, 'index', 'config.json'), 'utf8'))).toEqual({ dl: `${base}crates/{crate}/{crate}-{version}.crate` });
    // Only the locked version's line, exactly as the origin served it.
    const originLines = (reg.indexFile(HELLO) ?? '').split('\n').filter(Boolean);
    expect(readFileSync(join(dir, 'index', 'yo', 'lo', HELLO), 'utf8')).toBe(`${originLines[0]}\n`);
    const crate = readFileSync(join(dir, 'crates', HELLO, `${HELLO}-0.3.0.crate`));
    expect(sha(crate)).toBe(JSON.parse(originLines[0]!).cksum);
    const manifest = JSON.parse(readFileSync(join(dir, 'mirror.json'), 'utf8'));
    expect(manifest.lock.path).toBe(lockCopy);
    for (const [rel, digest] of Object.entries(manifest.files)) expect(sha(readFileSync(join(dir, rel))), rel).toBe(digest);
    expect(Object.keys(manifest.files).sort()).toEqual([
      'crates/yolop-extension-hello/yolop-extension-hello-0.3.0.crate',
      'index/config.json',
      'index/yo/lo/yolop-extension-hello',
    ]);
    expect(manifest.git).toEqual([{ url: repo.url, commit: rev, path: `git/file${repo.bare}` }]);
    expect(readdirSync(dir).sort()).toEqual(['.yep-mirror', 'crates', 'git', 'index', 'mirror.json']);

    // Again: nothing new, nothing rewritten, no download.
    reg.requests.length = 0;
    const again = await buildMirror(dir);
    expect(again.crates[0].added).toBe(false);
    expect(again.git[0].added).toBe(false);
    expect(reg.requestsTo('/crates/')).toEqual([]);
  });

  it('a second run with --base-url moves a mirror to where it will be served: config.json names the new URL, the mirrored files stay as they are', async () => {
    const dir = freshMirror();
    const crate = join(dir, 'crates', HELLO, `${HELLO}-0.3.0.crate`);
    const bytes = readFileSync(crate);
    const j = await buildMirror(dir, ['--base-url', 'https://mirror.example/yolop/']);
    expect(j.crates[0].added).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'index', 'config.json'), 'utf8'))).toEqual({
      dl: 'https://mirror.example/yolop/crates/{crate}/{crate}-{version}.crate',
    });
    const manifest = JSON.parse(readFileSync(join(dir, 'mirror.json'), 'utf8'));
    expect(manifest.files['index/config.json']).toBe(sha(readFileSync(join(dir, 'index', 'config.json'))));
    expect(readFileSync(crate)).toEqual(bytes);
  });

  it('a mirrored file with other bytes is never rewritten: exit 5 naming it', async () => {
    const dir = freshMirror();
    const file = join(dir, 'crates', HELLO, `${HELLO}-0.3.0.crate`);
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1]! ^= 0xff;
    writeFileSync(file, bytes);
    const r = await runCli(['mirror', dir, '--lockfile', lockCopy, '--json'], { env: originEnv(source) });
    expect(r.code).toBe(5);
    expect(jsonOf(r).error.message).toMatch(/does not match the locked cksum/);
    expect(readFileSync(file)).toEqual(bytes);
  });
});

describe('install --frozen from a file:// mirror (no server at all)', () => {
  it('reproduces the origin install with zero origin requests', async () => {
    const dir = freshMirror();
    const fresh = home();
    reg.requests.length = 0;
    const r = await withoutGitOrigin(() =>
      runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], {
        env: { ...mirrorEnv(fresh, pathToFileURL(join(dir, 'index')).href), YEP_EXT_GIT_MIRROR: gitMirrorOf(dir) },
      }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(reg.requests).toEqual([]);
    await expectSameAsOrigin(fresh);
  });

  it('a tampered .crate in the mirror is refused (exit 5), nothing placed', async () => {
    const dir = freshMirror();
    const file = join(dir, 'crates', HELLO, `${HELLO}-0.3.0.crate`);
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1]! ^= 0xff;
    writeFileSync(file, bytes);
    const fresh = home();
    reg.requests.length = 0;
    const r = await runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], { env: mirrorEnv(fresh, pathToFileURL(join(dir, 'index')).href) });
    expect(r.code).toBe(5);
    expect(jsonOf(r).error.code).toBe('E_INTEGRITY');
    expect(storeEntries(fresh)).toEqual([]);
    expect(existsSync(lockOf(fresh))).toBe(false);
    expect(reg.requests).toEqual([]);
  });

  it('a plain install resolves from the mirror index too', async () => {
    const dir = freshMirror();
    const fresh = home();
    reg.requests.length = 0;
    const r = await runCli(['install', 'hello', '--json'], { env: mirrorEnv(fresh, pathToFileURL(join(dir, 'index')).href) });
    expect(r.code, r.stderr).toBe(0);
    // The mirror holds only the locked 0.3.0, although the origin has 0.3.1.
    expect(readFileSync(lockOf(fresh), 'utf8')).toContain('version = "0.3.0"');
    expect(reg.requests).toEqual([]);
  });

  it('a remote index may not send downloads to the local disk', async () => {
    const fresh = home();
    reg.setConfig({ dl: 'file:///etc/{crate}' });
    try {
      const r = await runCli(['install', 'hello@0.3.0', '--json'], { env: originEnv(fresh) });
      expect(r.code).toBe(6);
      expect(jsonOf(r).error.message).toMatch(/refusing a file:\/\/ URL/);
    } finally {
      reg.setConfig(JSON.stringify({ dl: `${reg.url}crates`, api: reg.url.replace(/\/$/, '') }));
    }
  });
});

describeNeeding(NEEDS_NGINX, 'install --frozen from a mirror served by nginx', () => {
  let nginx: Nginx;
  let dir: string;
  beforeAll(async () => {
    dir = join(home().root, 'mirror');
    // nginx serves whatever is at its root when asked: started first, it gives the URL the one mirror run names.
    nginx = await startNginx(dir);
    await buildMirror(dir, ['--base-url', nginx.url]);
  });
  afterAll(async () => {
    await nginx?.stop();
  });
  afterEach(() => reg.clearFaults());

  it('reproduces the origin install with zero origin requests; nginx served the .crate', async () => {
    const fresh = home();
    reg.requests.length = 0;
    const before = nginx.accessLog().length;
    const r = await withoutGitOrigin(() =>
      runCli(['install', '--frozen', '--lockfile', lockCopy, '--git-mirror', `${nginx.url}git/`, '--json'], { env: mirrorEnv(fresh, `${nginx.url}index/`) }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(reg.requests).toEqual([]);
    await expectSameAsOrigin(fresh);
    const served = nginx.accessLog().slice(before);
    expect(
      served
        .filter((l) => !l.path.startsWith('/git/'))
        .map((l) => `${l.status} ${l.path}`)
        .sort(),
    ).toEqual([`200 /crates/${HELLO}/${HELLO}-0.3.0.crate`, '200 /index/config.json']);
    // git fetched the locked commit by dumb HTTP from the mirror's bare repository.
    expect(served.some((l) => l.path === `/git/file${repo.bare}/info/refs` && l.status === 200)).toBe(true);
  });

  it('index files come back 304 from nginx on the second resolve (ETag), and the install still works', async () => {
    const fresh = home();
    const before = nginx.accessLog().length;
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['install', 'hello', '--yes', '--json'], { env: mirrorEnv(fresh, `${nginx.url}index/`) });
      expect(r.code, r.stderr).toBe(0);
    }
    const indexHits = nginx
      .accessLog()
      .slice(before)
      .filter((l) => l.path === `/index/yo/lo/${HELLO}`);
    expect(indexHits.map((l) => l.status)).toEqual([200, 304]);
  });
});

describe('install --frozen from a mirror served by a plain static file server from npm (serve-handler)', () => {
  let server: Server;
  let url: string;
  let dir: string;
  const served: string[] = [];
  beforeAll(async () => {
    dir = join(home().root, 'mirror');
    server = createServer((req, res) => {
      served.push(`${req.method} ${req.url}`);
      void serveHandler(req, res, { public: dir, etag: true, directoryListing: false });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await buildMirror(dir, ['--base-url', url]);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reproduces the origin install with zero origin requests (crates and git by dumb HTTP)', async () => {
    const fresh = home();
    reg.requests.length = 0;
    served.length = 0;
    const r = await withoutGitOrigin(() =>
      runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], { env: { ...mirrorEnv(fresh, `${url}index/`), YEP_EXT_GIT_MIRROR: `${url}git/` } }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(reg.requests).toEqual([]);
    await expectSameAsOrigin(fresh);
    expect(served).toContain(`GET /crates/${HELLO}/${HELLO}-0.3.0.crate`);
    expect(served.some((s) => s.startsWith(`GET /git/file${repo.bare}/info/refs`))).toBe(true);
  });
});

describe('a lock that pins a prebuilt server binary', () => {
  it('mirror says the binary is not in the mirror (JSON and stderr), and an install from the mirror does fetch it from the origin', async () => {
    publishBinny(reg);
    serveBinnyBinary(reg, BINNY_BINARY);
    const origin = home();
    expect((await runCli(['install', 'binny', '--yes'], { env: originEnv(origin) })).code).toBe(0);
    const lock = join(origin.root, 'binny.lock');
    expect((await runCli(['lock', 'export', lock], { env: originEnv(origin) })).code).toBe(0);
    const dir = join(home().root, 'mirror');
    const r = await runCli(['mirror', dir, '--lockfile', lock, '--json'], { env: originEnv(origin) });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).not_mirrored).toEqual([
      { name: 'binny', what: `prebuilt server binary for ${hostTarget()}`, reason: expect.stringContaining('release host') },
    ]);
    const human = await runCli(['mirror', dir, '--lockfile', lock], { env: originEnv(origin) });
    expect(human.code).toBe(0);
    expect(human.stderr).toContain(`! binny: its prebuilt server binary for ${hostTarget()} is not in the mirror`);
    // The note is true: the crate comes from the mirror, the binary from the origin's release host.
    const fresh = home();
    reg.requests.length = 0;
    const frozen = await runCli(['install', '--frozen', '--lockfile', lock], { env: mirrorEnv(fresh, pathToFileURL(join(dir, 'index')).href) });
    expect(frozen.code, frozen.stderr).toBe(0);
    expect(reg.requestsTo('/crates/')).toEqual([]);
    expect(reg.requestsTo('/bin/').length).toBeGreaterThan(0);
  });
});
