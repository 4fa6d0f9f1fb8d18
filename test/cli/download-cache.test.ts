/**
 * The shared download cache: two homes, one cache -> the second install
 * downloads nothing and places the same bytes; a flipped byte in the cache is
 * detected on read, fetched again and never installed; `cache verify` finds a bad
 * entry, `cache clean` empties it; YEP_EXT_CACHE_DIR=off turns it off. Prebuilt
 * binaries go through the same cache: the second home makes no artifact download
 * (counted on the loopback release host), a corrupted entry is re-fetched.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hostTarget } from '../../src/core/binary/target.js';
import { contentHash } from '../../src/core/package/content-hash.js';
import { buildCrate, fixtureCrate } from '../helpers/crates.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { filesUnder } from '../helpers/file-walk.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { homePool } from '../helpers/home-pool.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let cacheRoot: TempHome;
let cacheDir: string;
const homes = homePool();
const home = (): TempHome => homes.make();
const env = (h: TempHome, extra: Record<string, string> = {}) => ({
  ...h.env,
  YEP_EXT_INDEX: reg.indexUrl,
  YEP_EXT_HTTP_RETRIES: '0',
  YEP_EXT_CACHE_DIR: cacheDir,
  ...extra,
});
const lockOf = (h: TempHome) => readFileSync(join(h.configDir, 'extensions', 'extensions.lock'), 'utf8');
const downloads = () => reg.requestsTo('/crates/').length;

/** The cache's content files (cacache's content-v2). */
const contentFiles = (dir: string): string[] => filesUnder(join(dir, 'content-v2'));

const TARGET = hostTarget();
const BINARY = '#!/bin/sh\nexec cat\n';
const PINNED = '#!/bin/sh\necho pinned\n';
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const artifactPath = (name: string) => `/bin/${name}-1.0.0-${TARGET}`;

/** A crate whose server is a prebuilt artifact on the registry's host: vouched for by a `.sha256` there, or by a digest in the crate. */
function publishBinary(name: string, body: string, how: { sha256File?: boolean; inCrate?: boolean }): void {
  const crate = `yolop-extension-${name}`;
  const capabilityServer = {
    command: `${name}-server`,
    binaries: `${reg.url}bin/{name}-{version}-{target}`,
    ...(how.inCrate ? { binary_sha256: { [TARGET as string]: sha(body) } } : {}),
  };
  const manifest = { name, version: '1.0.0', yolop: { capabilityServer, tools: [{ name: 't' }] } };
  reg.publish({
    name: crate,
    vers: '1.0.0',
    data: buildCrate({
      name: crate,
      version: '1.0.0',
      files: { 'plugin.json': JSON.stringify(manifest), 'Cargo.toml': `[package]\nname = "${crate}"\nversion = "1.0.0"\n` },
    }),
  });
  reg.serve(artifactPath(name), body);
  if (how.sha256File) reg.serve(`${artifactPath(name)}.sha256`, `${sha(body)}  ${name}-server\n`);
}

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0') });
  if (TARGET) {
    publishBinary('binny', BINARY, { sha256File: true });
    publishBinary('pinbin', PINNED, { inCrate: true });
    publishBinary('movebin', BINARY, { sha256File: true });
  }
  cacheRoot = makeTempHome('yep-cache-');
});
afterAll(async () => {
  await reg.close();
  cacheRoot.cleanup();
  homes.cleanup();
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

  it('a FIFO planted at a content path (the cache is shareable between users) is a miss: fetched again at once, never waited on', async () => {
    const [a, b] = [home(), home()];
    expect((await runCli(['install', 'hello@0.3.0'], { env: env(a) })).code).toBe(0);
    const [file] = contentFiles(cacheDir);
    rmSync(file!);
    execFileSync('mkfifo', [file!]);
    reg.requests.length = 0;
    const r = await runCli(['install', 'hello@0.3.0'], { env: env(b), timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(downloads()).toBe(1);
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
    // One problem, said once: the corrupted entry is not also counted as one whose content is missing.
    expect(jsonOf(v)).toMatchObject({ dir: cacheDir, bad: 1, missing: 0 });
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

  it('cache verify says every entry it dropped: one whose content file is gone is counted (missing), not left out of "N verified"', async () => {
    const a = home();
    reg.publish({ name: HELLO, vers: '0.3.1', data: fixtureCrate(HELLO, '0.3.1') });
    expect((await runCli(['install', 'hello@0.3.0'], { env: env(a) })).code).toBe(0);
    expect((await runCli(['install', 'hello@0.3.1', '--yes'], { env: env(a) })).code).toBe(0);
    const cacache = (await import('cacache')).default;
    expect(Object.keys(await cacache.ls(cacheDir))).toHaveLength(2);
    rmSync(contentFiles(cacheDir)[0]!);
    const v = await runCli(['cache', 'verify'], { env: env(a) });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/1 entry verified, 0 corrupted, 1 with its content missing \(dropped\)/);
    // What it said it dropped is gone from the index.
    expect(Object.keys(await cacache.ls(cacheDir))).toHaveLength(1);
  });

  it("foreign entries (a symlink, a Thumbs.db) in the cache's directories: cache verify reports them (JSON and stderr), exit 0; cache clean removes only its own entries, the foreign ones byte-identical", async () => {
    const a = home();
    expect((await runCli(['install', 'hello@0.3.0'], { env: env(a) })).code).toBe(0);
    const [file] = contentFiles(cacheDir);
    const shard = join(file!, '..');
    // The user's files, reached through a link in the cache, and strays a file manager left.
    const mine = join(a.root, 'thesis.tex');
    writeFileSync(mine, 'three years of work\n');
    symlinkSync(mine, join(shard, 'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'));
    symlinkSync(join(a.root), join(cacheDir, 'content-v2', 'sha512'));
    writeFileSync(join(cacheDir, 'content-v2', 'Thumbs.db'), 'thumbs');
    writeFileSync(join(cacheDir, 'index-v5', '.DS_Store'), 'ds');
    const foreign = [
      join(cacheDir, 'content-v2', 'Thumbs.db'),
      join(cacheDir, 'content-v2', 'sha512'),
      join(shard, 'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'),
      join(cacheDir, 'index-v5', '.DS_Store'),
    ];
    const snapshot = () => foreign.map((p) => (lstatSync(p).isSymbolicLink() ? `link ${readlinkSync(p)}` : readFileSync(p, 'utf8')));
    const before = snapshot();
    const rel = (p: string) => p.slice(cacheDir.length + 1);

    const v = await runCli(['cache', 'verify', '--json'], { env: env(a) });
    expect(v.code, v.stderr).toBe(0);
    expect(jsonOf(v)).toMatchObject({ verified: 1, bad: 0, missing: 0 });
    expect(
      jsonOf(v)
        .foreign.map((f: { path: string }) => f.path)
        .sort(),
    ).toEqual(foreign.map(rel).sort());
    expect(jsonOf(v).foreign.find((f: { path: string }) => f.path === rel(foreign[0]!)).is).toBe('a regular file');
    expect(jsonOf(v).foreign.find((f: { path: string }) => f.path === rel(foreign[1]!)).is).toBe('a symbolic link');
    const human = await runCli(['cache', 'verify'], { env: env(a) });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toContain('4 foreign entries in the cache');
    expect(human.stderr).toContain('content-v2/Thumbs.db (a regular file)');
    expect(snapshot()).toEqual(before);
    expect(readFileSync(mine, 'utf8')).toBe('three years of work\n');

    const c = await runCli(['cache', 'clean', '--json'], { env: env(a) });
    expect(c.code, c.stderr).toBe(0);
    expect(jsonOf(c).removed).toBe(1);
    expect(existsSync(file!)).toBe(false);
    expect(snapshot()).toEqual(before);
    expect(readFileSync(mine, 'utf8')).toBe('three years of work\n');
  });

  it("the cache's tmp, a FIFO, a socket and a stray directory among its entries: reported as foreign by verify and clean (exit 0), none followed or removed; the user's file named like a dead temp stays", async () => {
    const a = home();
    expect((await runCli(['install', 'hello@0.3.0'], { env: env(a) })).code).toBe(0);
    const [file] = contentFiles(cacheDir);
    const shard = join(file!, '..');
    // A dotfiles manager linked the cache's tmp to the user's directory, which holds a file named like a temp of a dead yep-ext.
    const mine = join(a.root, 'mine');
    mkdirSync(mine);
    const lookalike = join(mine, '.0123abcd.yep-999999-1.tmp');
    writeFileSync(lookalike, 'three years of work\n');
    rmSync(join(cacheDir, 'tmp'), { recursive: true, force: true });
    symlinkSync(mine, join(cacheDir, 'tmp'));
    execFileSync('mkfifo', [join(shard, 'f'.repeat(60))]);
    mkdirSync(join(shard, 'e'.repeat(60)));
    const server = createServer();
    await new Promise<void>((r) => server.listen(join(cacheDir, 'index-v5', 'sock'), r));
    const rel = [
      'tmp',
      `${shard.slice(cacheDir.length + 1)}/${'e'.repeat(60)}`,
      `${shard.slice(cacheDir.length + 1)}/${'f'.repeat(60)}`,
      'index-v5/sock',
    ].sort();
    try {
      for (const args of [
        ['cache', 'verify', '--json'],
        ['cache', 'clean', '--json'],
      ]) {
        const r = await runCli(args, { env: env(a), timeoutMs: 20_000 });
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
        expect(
          jsonOf(r)
            .foreign.map((f: { path: string }) => f.path)
            .sort(),
        ).toEqual(rel);
      }
      expect(readFileSync(lookalike, 'utf8')).toBe('three years of work\n');
      expect(lstatSync(join(cacheDir, 'tmp')).isSymbolicLink()).toBe(true);
      expect(lstatSync(join(shard, 'f'.repeat(60))).isFIFO()).toBe(true);
      expect(lstatSync(join(shard, 'e'.repeat(60))).isDirectory()).toBe(true);
      expect(existsSync(file!), 'its own entry was cleaned').toBe(false);
    } finally {
      server.close();
    }
  });

  it('YEP_EXT_CACHE_DIR=off: nothing cached, every home downloads', async () => {
    const [a, b] = [home(), home()];
    reg.requests.length = 0;
    for (const h of [a, b]) expect((await runCli(['install', 'hello@0.3.0'], { env: env(h, { YEP_EXT_CACHE_DIR: 'off' }) })).code).toBe(0);
    expect(downloads()).toBe(2);
    expect(existsSync(join(a.root, 'home', '.cache'))).toBe(false);
  });

  it('YEP_EXT_CACHE_DIR=off: cache verify and cache clean say there is no cache and touch nothing (not <cwd>/off)', async () => {
    const a = home();
    const cwd = join(a.root, 'work');
    mkdirSync(join(cwd, 'off', 'content-v2'), { recursive: true });
    writeFileSync(join(cwd, 'off', 'content-v2', 'mine.txt'), 'not a cache\n');
    const before = filesUnder(cwd);
    for (const sub of ['verify', 'clean']) {
      const r = await runCli(['cache', sub, '--json'], { env: env(a, { YEP_EXT_CACHE_DIR: 'off' }), cwd });
      expect(r.code, r.stdout).toBe(2);
      expect(jsonOf(r).error.message).toContain('off');
      expect(JSON.stringify(jsonOf(r))).not.toContain(join(cwd, 'off'));
    }
    expect(filesUnder(cwd)).toEqual(before);
    expect(readFileSync(join(cwd, 'off', 'content-v2', 'mine.txt'), 'utf8')).toBe('not a cache\n');
    // A cache that does not exist yet: verify reports it empty and does not create it.
    const fresh = join(a.root, 'no-cache-yet');
    const v = await runCli(['cache', 'verify', '--json'], { env: env(a, { YEP_EXT_CACHE_DIR: fresh }) });
    expect(v.code, v.stderr).toBe(0);
    expect(jsonOf(v)).toMatchObject({ dir: fresh, entries: 0, verified: 0 });
    expect(existsSync(fresh)).toBe(false);
    // A cache path that is a file: not "0 entries verified" (downloads could not use it either).
    // The state of the disk, not the command line, is wrong: E_STATE (exit 7) naming the path, as
    // for state files; a path under that file (ENOTDIR) the same, not an internal error (exit 70).
    const aFile = join(a.root, 'cache-is-a-file');
    writeFileSync(aFile, 'mine\n');
    for (const sub of ['verify', 'clean']) {
      const r = await runCli(['cache', sub, '--json'], { env: env(a, { YEP_EXT_CACHE_DIR: aFile }) });
      expect(r.code, r.stdout).toBe(7);
      expect(jsonOf(r).error).toMatchObject({ code: 'E_STATE' });
      expect(jsonOf(r).error.message).toContain(`${aFile} is not a directory`);
      const under = await runCli(['cache', sub, '--json'], { env: env(a, { YEP_EXT_CACHE_DIR: join(aFile, 'sub') }) });
      expect(under.code, under.stdout + under.stderr).toBe(7);
      expect(jsonOf(under).error).toMatchObject({ code: 'E_STATE' });
      expect(jsonOf(under).error.message).toContain(join(aFile, 'sub'));
      expect(jsonOf(under).error.hint).toMatch(/YEP_EXT_CACHE_DIR/);
    }
    expect(readFileSync(aFile, 'utf8')).toBe('mine\n');
  });

  it('default location: $HOME/.cache/yep-ext of the home running it', async () => {
    const a = home();
    const e = env(a);
    delete (e as Record<string, string>).YEP_EXT_CACHE_DIR;
    expect((await runCli(['install', 'hello@0.3.0'], { env: e })).code).toBe(0);
    expect(contentFiles(join(a.root, 'home', '.cache', 'yep-ext'))).toHaveLength(1);
  });
});

describeNeeding(
  need(TARGET !== undefined, `a platform with a prebuilt-binary target (this is ${process.platform}-${process.arch})`),
  'prebuilt binaries in the shared download cache',
  () => {
    const binOf = (h: TempHome, name: string) => join(h.configDir, 'extensions', name, 'bin', `${name}-server`);
    const artifactGets = (name: string) => reg.requestsTo(artifactPath(name)).filter((r) => !r.url.endsWith('.sha256')).length;

    it('two homes, one cache: the second install makes no artifact download (release-host .sha256 still checked)', async () => {
      const [a, b] = [home(), home()];
      reg.requests.length = 0;
      expect((await runCli(['install', 'binny'], { env: env(a) })).code).toBe(0);
      expect(artifactGets('binny')).toBe(1);
      const r = await runCli(['install', 'binny'], { env: env(b) });
      expect(r.code, r.stderr).toBe(0);
      expect(artifactGets('binny')).toBe(1);
      // The weaker form is verified again against the release host, on the cached bytes.
      expect(reg.requestsTo(`${artifactPath('binny')}.sha256`)).toHaveLength(2);
      expect(readFileSync(binOf(b, 'binny'), 'utf8')).toBe(BINARY);
      expect(statSync(binOf(b, 'binny')).mode & 0o777).toBe(0o755);
      expect(lockOf(b)).toBe(lockOf(a));
    });

    it('a digest in the crate: the second home makes no request to the release host at all', async () => {
      const [a, b] = [home(), home()];
      reg.requests.length = 0;
      expect((await runCli(['install', 'pinbin'], { env: env(a) })).code).toBe(0);
      expect(reg.requestsTo('/bin/')).toHaveLength(1);
      const r = await runCli(['install', 'pinbin'], { env: env(b) });
      expect(r.code, r.stderr).toBe(0);
      expect(reg.requestsTo('/bin/')).toHaveLength(1);
      expect(readFileSync(binOf(b, 'pinbin'), 'utf8')).toBe(PINNED);
      expect(lockOf(b)).toBe(lockOf(a));
    });

    it('a corrupted cached artifact is detected on read, downloaded again and never installed', async () => {
      const [a, b] = [home(), home()];
      expect((await runCli(['install', 'pinbin'], { env: env(a) })).code).toBe(0);
      const file = contentFiles(cacheDir).find((f) => readFileSync(f, 'utf8') === PINNED);
      expect(file).toBeDefined();
      const bytes = readFileSync(file!);
      bytes[bytes.length - 2]! ^= 0x01;
      writeFileSync(file!, bytes);

      reg.requests.length = 0;
      const r = await runCli(['install', 'pinbin'], { env: env(b) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/cache entry .* is corrupted; downloading it again/);
      expect(reg.requestsTo('/bin/')).toHaveLength(1);
      expect(readFileSync(binOf(b, 'pinbin'), 'utf8')).toBe(PINNED);
      expect(lockOf(b)).toBe(lockOf(a));
      // The fresh download replaced the bad entry.
      expect(jsonOf(await runCli(['cache', 'verify', '--json'], { env: env(a) }))).toMatchObject({ bad: 0 });
    });

    it('a cached artifact the release host no longer vouches for is not installed: the current one is downloaded', async () => {
      const [a, b] = [home(), home()];
      expect((await runCli(['install', 'movebin'], { env: env(a) })).code).toBe(0);
      // The release host republished the same URL with other bytes and a new .sha256.
      const moved = '#!/bin/sh\necho moved\n';
      reg.serve(artifactPath('movebin'), moved);
      reg.serve(`${artifactPath('movebin')}.sha256`, `${sha(moved)}  movebin-server\n`);
      reg.requests.length = 0;
      const r = await runCli(['install', 'movebin'], { env: env(b) });
      expect(r.code, r.stderr).toBe(0);
      expect(artifactGets('movebin')).toBe(1);
      expect(readFileSync(binOf(b, 'movebin'), 'utf8')).toBe(moved);
    });
  },
);
