/**
 * install --frozen: a lock with crate, git and path entries restores
 * into an empty home byte-identically; every kind of divergence fails the whole
 * run naming the culprit and leaves the home unchanged; a second run is offline.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { fixtureFiles, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { agentView } from '../helpers/agent-view.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let source: TempHome; // where the lock was made
let fresh: TempHome; // an empty machine
let repo: TestRepo;
let pathPkg: string;
let lockCopy: string;

const env = (h: TempHome) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const lockOf = (h: TempHome) => join(h.configDir, 'extensions', 'extensions.lock');
function homeState(h: TempHome): string {
  const store = join(h.configDir, 'extensions');
  const entries = existsSync(store)
    ? readdirSync(store)
        .filter((e) => !e.startsWith('.'))
        .sort()
    : [];
  return JSON.stringify({ entries, lock: existsSync(lockOf(h)) ? readFileSync(lockOf(h), 'utf8') : null });
}

let repos: TempHome;
/** Set by a test that rewrites the origin's history: the next test gets a new one. */
let repoRewritten = true;
/**
 * The source home as the install and `lock export` left it, copied back to the same path
 * before each test (every path the store and the lock hold stays as it was written); made
 * again with the origin.
 */
let sourceSnapshot: string;

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0') });
  repos = makeTempHome('yep-frozen-repos-');
  source = makeTempHome();
  sourceSnapshot = join(repos.root, 'source-snapshot');
});
afterAll(async () => {
  await reg.close();
  repos.cleanup();
  source.cleanup();
});

const copyTree = (from: string, to: string) => cpSync(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });

beforeEach(async () => {
  fresh = makeTempHome();
  pathPkg = join(source.root, 'pkgs', 'local');
  lockCopy = join(source.root, 'project.lock');
  rmSync(source.root, { recursive: true, force: true });
  // One git origin for the file (no test but the rewrite changes it), made again after a rewrite.
  if (repoRewritten) {
    rmSync(join(repos.root, 'repos'), { recursive: true, force: true });
    repo = makeRepo(join(repos.root, 'repos'), { files: fixtureFiles('gitext', '1.0.0') });
    repo.tag('v1.0.0');
    repoRewritten = false;
    mkdirSync(source.root);
    writePackage(pathPkg, { name: 'local' });
    const r = await runCli(['install', 'hello@0.3.0', `${repo.url}@v1.0.0`, pathPkg], { env: env(source) });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect((await runCli(['lock', 'export', lockCopy], { env: env(source) })).code).toBe(0);
    rmSync(sourceSnapshot, { recursive: true, force: true });
    copyTree(source.root, sourceSnapshot);
  } else {
    copyTree(sourceSnapshot, source.root);
  }
});
afterEach(() => {
  reg.clearFaults();
  fresh.cleanup();
});

describe('install --frozen', () => {
  it('restores crate, git and path entries byte-identically, then a second run makes no request', async () => {
    reg.requests.length = 0;
    const r = await runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], { env: env(fresh) });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).frozen.map((i: { name: string; status: string }) => [i.name, i.status])).toEqual([
      ['gitext', 'installed'],
      ['hello', 'installed'],
      ['local', 'installed'],
    ]);
    expect(readFileSync(lockOf(fresh), 'utf8')).toBe(readFileSync(lockOf(source), 'utf8'));
    // No version resolution: the locked cksum is used, the crate's index file is never read.
    expect(reg.requests.filter((q) => q.url.includes('/index/') && !q.url.endsWith('/config.json'))).toEqual([]);

    reg.requests.length = 0;
    const again = await runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], { env: env(fresh) });
    expect(again.code, again.stderr).toBe(0);
    expect(jsonOf(again).frozen.every((i: { status: string }) => i.status === 'skipped')).toBe(true);
    expect(reg.requests).toEqual([]);
  });

  it('--frozen with sources is a usage error', async () => {
    const r = await runCli(['install', '--frozen', 'hello'], { env: env(fresh) });
    expect(r.code).toBe(2);
  });

  const tamper: Array<[string, string, () => void]> = [
    ['a tampered .crate', 'hello', () => reg.fault(/\/crates\//, { kind: 'corrupt' })],
    [
      'a force-moved git tag (history rewritten, the locked commit gone)',
      'gitext',
      () => {
        repoRewritten = true;
        repo.git(['commit', '--quiet', '--amend', '-m', 'rewritten']);
        const moved = repo.git(['rev-parse', 'HEAD']);
        repo.git(['tag', '-f', '-a', '-m', 'moved', 'v1.0.0', moved]);
        repo.git(['push', '--quiet', '--force', 'origin', 'refs/tags/v1.0.0']);
        repo.forcePush('main', moved);
        repo.prune();
      },
    ],
    ['a locally modified path source', 'local', () => writeFileSync(join(pathPkg, 'extra.txt'), 'changed\n')],
  ];
  it.each(tamper)('%s fails the whole run, names the culprit, leaves the home unchanged', async (_label, culprit, breakIt) => {
    breakIt();
    const before = homeState(fresh);
    const r = await runCli(['install', '--frozen', '--lockfile', lockCopy], { env: env(fresh) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`- ${culprit}:`);
    expect(homeState(fresh)).toBe(before);
  });

  it.each([
    ['with the cksum in the lock', false],
    ['without one (the index is consulted, its value must match the locked content hash)', true],
  ])('a registry that republished different bytes under a new cksum fails the run %s', async (_label, dropCksum) => {
    const other = await startRegistry();
    try {
      other.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0', { files: { NOTICE: 'republished\n' } }) });
      if (dropCksum) writeFileSync(lockCopy, readFileSync(lockCopy, 'utf8').replace(/^cksum = ".*"\n/m, ''));
      const before = homeState(fresh);
      const r = await runCli(['install', '--frozen', '--lockfile', lockCopy], { env: { ...env(fresh), YEP_EXT_INDEX: other.indexUrl } });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('- hello:');
      expect(homeState(fresh)).toBe(before);
    } finally {
      await other.close();
    }
  });

  it('--lockfile that no longer pins an installed extension: says the store still holds it (left installed and enabled), instead of only "as locked"', async () => {
    // The project's lock drops `local`; the cached store (this home) still has it, enabled.
    const lock = parse(readFileSync(lockCopy, 'utf8')) as { extensions: { name: string }[] };
    const dropped = join(source.root, 'dropped.lock');
    writeFileSync(dropped, stringify({ ...lock, extensions: lock.extensions.filter((e) => e.name !== 'local') }));
    expect((await runCli(['enable', 'local'], { env: env(source) })).code).toBe(0);
    const r = await runCli(['install', '--frozen', '--lockfile', dropped], { env: env(source) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`The store also holds local, which ${dropped} does not pin: left installed`);
    // What the warning describes is the state: the package, its lock entry and its settings entry are still there.
    expect(existsSync(join(source.configDir, 'extensions', 'local', 'plugin.json'))).toBe(true);
    expect((parse(readFileSync(lockOf(source), 'utf8')) as { extensions: { name: string }[] }).extensions.map((e) => e.name)).toContain('local');
    expect(readFileSync(join(source.configDir, 'settings.toml'), 'utf8')).toContain('ext:local');
    // The same lock as the store's: nothing to say.
    const same = await runCli(['install', '--frozen', '--lockfile', lockCopy], { env: env(source) });
    expect(same.code).toBe(0);
    expect(same.stderr).not.toContain('also holds');
  });

  it('settings.toml enables an extension the lock does not pin and nothing installs: the install succeeds (the lock is reproduced) and says yolop cannot load it, on the warm path too; the same file with it disabled: nothing said', async () => {
    mkdirSync(fresh.configDir, { recursive: true });
    const settings = join(fresh.configDir, 'settings.toml');
    writeFileSync(settings, '[[capabilities]]\nref = "ext:teamtool"\n');
    for (const run of ['cold', 'warm']) {
      const r = await runCli(['install', '--frozen', '--lockfile', lockCopy], { env: env(fresh) });
      expect(r.code, `${run}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toContain(`${settings} enables teamtool, which nothing installs: yolop cannot load it.`);
      expect(r.stderr).toContain('yep-ext remove teamtool');
    }
    // What the warning describes is the state: the lock's packages are in, teamtool is not.
    expect(existsSync(join(fresh.configDir, 'extensions', 'teamtool'))).toBe(false);
    expect(existsSync(join(fresh.configDir, 'extensions', 'hello', 'plugin.json'))).toBe(true);
    writeFileSync(settings, '[[capabilities]]\nref = "ext:teamtool"\nenabled = false\n');
    const quiet = await runCli(['install', '--frozen', '--lockfile', lockCopy], { env: env(fresh) });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('teamtool');
  });

  it('a store package no lock entry pins (placed by hand), enabled: "as locked" is said with a warning naming it, cold and warm, and it is indeed what yolop loads beyond the lock; removed, nothing said', async () => {
    expect((await runCli(['install', '--frozen', '--lockfile', lockCopy], { env: env(fresh) })).code).toBe(0);
    const hand = writePackage(join(fresh.configDir, 'extensions', 'handmade'), { name: 'handmade' });
    writeFileSync(join(fresh.configDir, 'settings.toml'), '[[capabilities]]\nref = "ext:handmade"\n');
    const pinned = (parse(readFileSync(lockOf(fresh), 'utf8')) as { extensions: { name: string }[] }).extensions.map((e) => e.name);
    for (const args of [
      ['install', '--frozen'],
      ['install', '--frozen', '--lockfile', lockCopy],
    ]) {
      const r = await runCli(args, { env: env(fresh) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('0 installed, 3 already as locked.');
      expect(r.stderr).toContain('The store also holds handmade, which no lock entry pins');
      expect(r.stderr).toContain('settings.toml enables handmade, so yolop runs it');
      expect(r.stderr).toContain('yep-ext remove handmade');
    }
    // What the warning describes is the state: yolop loads handmade, which the lock does not pin.
    expect(Object.keys(agentView(fresh.configDir))).toEqual(['handmade']);
    expect(pinned).not.toContain('handmade');
    expect(existsSync(join(hand, 'plugin.json'))).toBe(true);
    expect((await runCli(['remove', 'handmade'], { env: env(fresh) })).code).toBe(0);
    const quiet = await runCli(['install', '--frozen'], { env: env(fresh) });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('also holds');
  });

  it('restores the store from its own lock after the packages were wiped', async () => {
    cpSync(lockOf(source), join(fresh.root, 'keep.lock'));
    const store = join(source.configDir, 'extensions');
    for (const e of readdirSync(store)) if (e !== 'extensions.lock') rmSync(join(store, e), { recursive: true, force: true });
    const r = await runCli(['install', '--frozen'], { env: env(source) });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(lockOf(source), 'utf8')).toBe(readFileSync(join(fresh.root, 'keep.lock'), 'utf8'));
    expect(jsonOf(await runCli(['list', '--json'], { env: env(source) })).extensions.map((e: { problems: string[] }) => e.problems)).toEqual([[], [], []]);
  });
});
