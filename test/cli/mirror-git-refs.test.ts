/**
 * `--git-mirror` / YEP_EXT_GIT_MIRROR for non-exact git fetches
 * (docs/fleet.md "Git in the mirror"): the mirror names the ref each lock followed
 * (the default branch as HEAD, a tag or branch by its name), so `install <url>`
 * with no ref or a tag, and `update` of a git entry, resolve and fetch from the
 * mirror, from a file:// root and by dumb HTTP from a static server, with the
 * origin repository moved away (any request to it would fail). The lock keeps the
 * origin URL. An older lock mirrored later never moves a ref back.
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import serveHandler from 'serve-handler';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { fixtureFiles, git, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

let reg: TestRegistry;
let repo: TestRepo;
let c1: string;
let c2: string;
let old: TempHome; // installed the default branch at c1
let lockOld: string;
let lockNew: string;
let lockTag: string;
let mirror: string;
let server: Server;
let httpBase: string;
const served: string[] = [];
const homes: TempHome[] = [];
const home = (): TempHome => {
  const h = makeTempHome();
  homes.push(h);
  return h;
};
const env = (h: TempHome, gitMirror: string) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', YEP_EXT_GIT_MIRROR: gitMirror });
const originEnv = (h: TempHome) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
type LockEntry = { name: string; source: { url: string; rev: string; requested_ref?: string } };
const entryOf = (h: TempHome, name = 'gitmove'): LockEntry =>
  (parse(readFileSync(join(h.configDir, 'extensions', 'extensions.lock'), 'utf8')) as { extensions: LockEntry[] }).extensions.find((e) => e.name === name)!;
const fileMirror = () => `${pathToFileURL(join(mirror, 'git')).href}/`;

async function installAndExport(args: string[], lock: string): Promise<TempHome> {
  const h = home();
  const r = await runCli(['install', ...args], { env: originEnv(h) });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  expect((await runCli(['lock', 'export', lock], { env: originEnv(h) })).code).toBe(0);
  return h;
}
async function mirrorLock(lock: string, h: TempHome): Promise<void> {
  const r = await runCli(['mirror', mirror, '--lockfile', lock, '--json'], { env: originEnv(h) });
  expect(r.code, r.stderr + r.stdout).toBe(0);
}
/** Run `fn` with the origin repository moved away: any fetch or ls-remote from it fails. */
async function withoutOrigin<T>(fn: () => Promise<T>): Promise<T> {
  renameSync(repo.bare, `${repo.bare}.away`);
  try {
    return await fn();
  } finally {
    renameSync(`${repo.bare}.away`, repo.bare);
  }
}

beforeAll(async () => {
  reg = await startRegistry();
  const root = home();
  mirror = join(root.root, 'mirror');
  repo = makeRepo(join(root.root, 'repos'), { name: 'gitmove', files: fixtureFiles('gitmove', '1.0.0') });
  c1 = repo.rev('HEAD');
  repo.tag('v1.0.0');
  lockOld = join(root.root, 'old.lock');
  lockNew = join(root.root, 'new.lock');
  lockTag = join(root.root, 'tag.lock');
  old = await installAndExport([repo.url], lockOld);
  await installAndExport([`${repo.url}@v1.0.0`], lockTag);
  c2 = repo.commit(fixtureFiles('gitmove', '1.1.0'), 'v1.1.0');
  const fresh = await installAndExport([repo.url], lockNew);
  expect(entryOf(fresh).source.rev).toBe(c2);
  // The newer lock first, then the older one: HEAD must stay at c2.
  await mirrorLock(lockNew, fresh);
  await mirrorLock(lockTag, fresh);
  await mirrorLock(lockOld, fresh);
  server = createServer((req, res) => {
    served.push(`${req.method} ${req.url}`);
    void serveHandler(req, res, { public: mirror, etag: true, directoryListing: false });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  httpBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/git/`;
}, 180_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await reg.close();
  for (const h of homes) h.cleanup();
});

describe('--git-mirror for non-exact git fetches', () => {
  it('the mirror names the default branch (HEAD at the newest locked commit, never moved back) and the locked tag', () => {
    const bare = join(mirror, 'git', `file${repo.bare}`);
    expect(git(['rev-parse', 'HEAD'], bare).trim()).toBe(c2);
    expect(git(['rev-parse', 'refs/tags/v1.0.0^{commit}'], bare).trim()).toBe(c1);
    expect(existsSync(join(bare, 'info', 'refs'))).toBe(true);
  });

  it('install <url> (default branch) from a file:// mirror: zero origin access, the origin URL recorded', async () => {
    const h = home();
    const r = await withoutOrigin(() => runCli(['install', repo.url, '--json'], { env: env(h, fileMirror()) }));
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(h).source).toMatchObject({ url: repo.url, rev: c2 });
    expect(entryOf(h).source.requested_ref).toBeUndefined();
    expect(readFileSync(join(h.configDir, 'extensions', 'gitmove', 'plugin.json'), 'utf8')).toContain('1.1.0');
  });

  it('install <url>@<tag> by dumb HTTP from a static server (--git-mirror): the tag resolves on the mirror', async () => {
    const h = home();
    served.length = 0;
    const r = await withoutOrigin(() => runCli(['install', `${repo.url}@v1.0.0`, '--git-mirror', httpBase, '--json'], { env: originEnv(h) }));
    expect(r.code, r.stderr).toBe(0);
    expect(entryOf(h).source).toMatchObject({ url: repo.url, rev: c1, requested_ref: 'v1.0.0' });
    expect(served.some((s) => s.startsWith(`GET /git/file${repo.bare}/info/refs`))).toBe(true);
    expect(await contentHash(join(h.configDir, 'extensions', 'gitmove'))).toBe(await contentHash(join(old.configDir, 'extensions', 'gitmove')));
  });

  it('update --git-mirror of a git entry resolves and fetches from the mirror (dumb HTTP): moves to the mirrored commit, zero origin access', async () => {
    expect(entryOf(old).source.rev).toBe(c1);
    const r = await withoutOrigin(() => runCli(['update', 'gitmove', '--yes', '--git-mirror', httpBase, '--json'], { env: originEnv(old) }));
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(entryOf(old).source).toMatchObject({ url: repo.url, rev: c2 });
    expect(readFileSync(join(old.configDir, 'extensions', 'gitmove', 'plugin.json'), 'utf8')).toContain('1.1.0');
    expect(jsonOf(r)).toBeDefined();
  });
});
