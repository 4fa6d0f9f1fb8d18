/**
 * The policy file cannot be stepped around (docs/policy.md):
 * - every place bytes come from is ruled, not only the origin the lock records: a git
 *   install, update or `install --frozen` through a git mirror (`--git-mirror`,
 *   YEP_EXT_GIT_MIRROR) from a host `git_hosts` does not list is refused (exit 13,
 *   nothing placed), and so is a frozen install of a crates.io lock from another index;
 * - `server_outside_package = false` rules the server command as the host resolves it:
 *   an absolute command (`/bin/sh`) and a relative one that climbs out (`../../bin/sh`),
 *   for path and crate packages, at install, enable and policy check; and doctor does not
 *   start a server whose command runs a program from PATH (a marker it would write stays
 *   absent), early start included.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, stringify } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate, fixtureCrate, readTree } from '../helpers/crates.js';
import { makePackage } from '../helpers/ext-package.js';
import { GIT_TEST_ENV, fixtureFiles, git, makeRepo } from '../helpers/git-repo.js';
import { startGitHttpServer } from '../helpers/git-http-server.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { describeNeeding } from '../helpers/needs.js';
import { NEEDS_OPENSSL, makeTestCa } from '../helpers/tls-ca.js';

const GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const ORIGIN = 'https://github.com/acme/gitext';
let reg: TestRegistry;
let home: TempHome;
let shared: TempHome;
/** The mirror's git/ root (file://), holding github.com/acme/gitext.git. */
let gitMirror: string;

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: 'yolop-extension-hello', vers: '0.3.0', data: fixtureCrate('yolop-extension-hello', '0.3.0') });
  shared = makeTempHome();
  // A mirror laid out as `yep-ext mirror` writes it: the origin github.com is never reached.
  const repo = makeRepo(join(shared.root, 'repos'), { files: fixtureFiles('gitext') });
  const root = join(shared.root, 'mirror', 'git');
  mkdirSync(join(root, 'github.com', 'acme'), { recursive: true });
  git(['clone', '--bare', '--quiet', repo.bare, join(root, 'github.com', 'acme', 'gitext.git')], shared.root);
  gitMirror = `${pathToFileURL(root).href}/`;
});
afterAll(() => {
  reg.close();
  shared.cleanup();
});
beforeEach(() => {
  home = makeTempHome();
  mkdirSync(home.configDir, { recursive: true });
});
afterEach(() => home.cleanup());

const env = (extra: Record<string, string> = {}) => ({ ...home.env, ...GIT_TEST_ENV, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', ...extra });
const systemPolicy = (doc: Record<string, unknown>) => writeFileSync(home.env.YEP_EXT_POLICY!, stringify(doc));
const store = (name: string) => join(home.configDir, 'extensions', name);
const lockFile = () => join(home.configDir, 'extensions', 'extensions.lock');
type Entry = { name: string; source: Record<string, unknown> };
const lockEntries = (): Entry[] => (existsSync(lockFile()) ? ((parse(readFileSync(lockFile(), 'utf8')) as { extensions?: Entry[] }).extensions ?? []) : []);
const settingsText = () => (existsSync(join(home.configDir, 'settings.toml')) ? readFileSync(join(home.configDir, 'settings.toml'), 'utf8') : '');

/** Refused by `rule` naming `item`, exit 13, and nothing of `name` placed. */
function expectRefused(r: Awaited<ReturnType<typeof runCli>>, rule: string, item: string, name: string) {
  expect(r.code, r.stdout + r.stderr).toBe(13);
  const err = jsonOf(r).error;
  expect(err.code).toBe('E_POLICY');
  expect(err.details.rule).toBe(rule);
  expect(err.details.item).toBe(item);
  expect(existsSync(store(name))).toBe(false);
  expect(lockEntries().map((e) => e.name)).not.toContain(name);
}

describe('sources.git_hosts rules the git mirror as well as the origin', () => {
  it('install through --git-mirror or YEP_EXT_GIT_MIRROR from a host the policy does not list: refused, nothing placed; listed: installed, the origin recorded', async () => {
    systemPolicy({ sources: { git_hosts: ['github.com'] } });
    expectRefused(await runCli(['install', ORIGIN, '--git-mirror', gitMirror, '--json'], { env: env() }), 'sources.git_hosts', 'file', 'gitext');
    expectRefused(await runCli(['install', ORIGIN, '--json'], { env: env({ YEP_EXT_GIT_MIRROR: gitMirror }) }), 'sources.git_hosts', 'file', 'gitext');
    expectRefused(await runCli(['install', ORIGIN, '--dry-run', '--git-mirror', gitMirror, '--json'], { env: env() }), 'sources.git_hosts', 'file', 'gitext');
    // The origin is ruled too, before anything is fetched from the mirror.
    systemPolicy({ sources: { git_hosts: ['file'] } });
    expectRefused(await runCli(['install', ORIGIN, '--git-mirror', gitMirror, '--json'], { env: env() }), 'sources.git_hosts', 'github.com', 'gitext');
    systemPolicy({ sources: { git_hosts: ['github.com', 'file'] } });
    const ok = await runCli(['install', ORIGIN, '--git-mirror', gitMirror, '--json'], { env: env() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockEntries()).toEqual([expect.objectContaining({ name: 'gitext', source: expect.objectContaining({ type: 'git', url: ORIGIN }) })]);
  });

  it('install --frozen and update through the mirror are ruled the same way; the store and lock stay as they were', async () => {
    expect((await runCli(['install', ORIGIN, '--git-mirror', gitMirror], { env: env() })).code).toBe(0);
    const project = join(home.root, 'project.lock');
    copyFileSync(lockFile(), project);
    const lockBefore = readFileSync(lockFile(), 'utf8');
    systemPolicy({ sources: { git_hosts: ['github.com'] } });
    const update = await runCli(['update', 'gitext', '--yes', '--git-mirror', gitMirror, '--json'], { env: env() });
    expect(update.code, update.stdout + update.stderr).toBe(13);
    expect(readFileSync(lockFile(), 'utf8')).toBe(lockBefore);
    const ci = makeTempHome();
    try {
      writeFileSync(ci.env.YEP_EXT_POLICY!, stringify({ sources: { git_hosts: ['github.com'] } }));
      const frozen = await runCli(['install', '--frozen', '--lockfile', project, '--json'], {
        env: { ...ci.env, ...GIT_TEST_ENV, YEP_EXT_GIT_MIRROR: gitMirror },
      });
      expect(frozen.code, frozen.stdout + frozen.stderr).toBe(13);
      expect(jsonOf(frozen).error.details).toMatchObject({ rule: 'sources.git_hosts', item: 'file' });
      expect(existsSync(join(ci.configDir, 'extensions', 'gitext'))).toBe(false);
    } finally {
      ci.cleanup();
    }
  });
});

describe("sources.git_hosts rules where the user's git config sends git (url.<base>.insteadOf)", () => {
  it("an insteadOf in ~/.gitconfig redirecting an admitted host to another: refused, nothing installed; without a policy the rewrite is the user's to make", async () => {
    // Two repositories on one loopback server: the one asked for, and the one the rewrite leads to.
    const root = join(home.root, 'served');
    makeRepo(root, { name: 'gitext', files: fixtureFiles('gitext') });
    makeRepo(join(root, 'other'), { name: 'gitext', files: { ...fixtureFiles('gitext'), 'MARKER-other-host': 'x' } });
    const server = await startGitHttpServer({ root });
    try {
      const asked = server.url('gitext.git');
      const port = new URL(server.base).port;
      mkdirSync(home.env.HOME!, { recursive: true });
      writeFileSync(join(home.env.HOME!, '.gitconfig'), `[url "http://localhost:${port}/other/"]\n\tinsteadOf = http://127.0.0.1:${port}/\n`);
      const gitEnv = env({ HOME: home.env.HOME! });
      systemPolicy({ sources: { git_hosts: ['127.0.0.1'] } });
      expectRefused(await runCli(['install', asked, '--json'], { env: gitEnv }), 'sources.git_hosts', 'localhost', 'gitext');
      expect(existsSync(lockFile())).toBe(false);
      expect(settingsText()).toBe('');
      // With no rule on git hosts the user's rewrite applies (a CI token, a company mirror).
      systemPolicy({ sources: { kinds: ['git'] } });
      const r = await runCli(['install', asked, '--json'], { env: gitEnv });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(store('gitext'), 'MARKER-other-host'))).toBe(true);
      expect(lockEntries()[0]?.source.url).toBe(asked);
    } finally {
      await server.close();
    }
  });
});

describeNeeding(NEEDS_OPENSSL, 'sources.git_hosts rules where an HTTP redirect would send git', () => {
  it('an admitted https host that redirects to a host the policy does not list: refused (exit 13), nothing fetched from there, nothing installed; without a rule on git hosts git follows it', async () => {
    // The repository is served (TLS) only on `localhost`; `127.0.0.1` answers every request with a 301 there.
    const root = join(home.root, 'served');
    makeRepo(root, { name: 'gitext', files: { ...fixtureFiles('gitext'), 'MARKER-redirected-host': 'x' } });
    const server = await startGitHttpServer({ root });
    const ca = makeTestCa(['localhost']);
    const upstream = new URL(server.base);
    const reached: string[] = [];
    const target = createHttpsServer({ key: ca.key, cert: ca.cert }, (req, res) => {
      reached.push(req.url ?? '');
      const up = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const targetPort = (target.address() as AddressInfo).port;
    const redirector = createHttpsServer({ key: ca.key, cert: ca.cert }, (req, res) => {
      res.writeHead(301, { location: `https://localhost:${targetPort}${req.url}` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const asked = `https://127.0.0.1:${(redirector.address() as AddressInfo).port}/gitext.git`;
      const gitEnv = env({ GIT_SSL_CAINFO: ca.caFile });
      systemPolicy({ sources: { git_hosts: ['127.0.0.1'] } });
      expectRefused(await runCli(['install', asked, '--json'], { env: gitEnv }), 'sources.git_hosts', 'redirect', 'gitext');
      expectRefused(await runCli(['install', asked, '--dry-run', '--json'], { env: gitEnv }), 'sources.git_hosts', 'redirect', 'gitext');
      expect(reached, 'git never reached the host the redirect named').toEqual([]);
      expect(existsSync(lockFile())).toBe(false);
      // A URL-specific setting in the user's git config outranks a generic one whatever its source: it must not reopen the redirect.
      mkdirSync(home.env.HOME!, { recursive: true });
      writeFileSync(join(home.env.HOME!, '.gitconfig'), `[http "${asked}"]\n\tfollowRedirects = true\n[http "https://127.0.0.1"]\n\tfollowRedirects = true\n`);
      expectRefused(await runCli(['install', asked, '--json'], { env: { ...gitEnv, HOME: home.env.HOME! } }), 'sources.git_hosts', 'redirect', 'gitext');
      expect(reached, 'git never reached the host the redirect named').toEqual([]);
      expect(existsSync(lockFile())).toBe(false);
      // A rewrite that adds a token (as CI does) keeps the host: the refusal keyed to that URL never puts the token on git's command line.
      const token = `tok-${Date.now()}secret`;
      const shim = join(home.root, 'shim');
      mkdirSync(shim, { recursive: true });
      const argvLog = join(home.root, 'git-argv.log');
      writeFileSync(join(shim, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${GIT}' "$@"\n`);
      chmodSync(join(shim, 'git'), 0o755);
      const origin = new URL(asked).origin;
      writeFileSync(join(home.env.HOME!, '.gitconfig'), `[url "${origin.replace('://', `://${token}@`)}/"]\n\tinsteadOf = ${origin}/\n`);
      const shimmed = { ...gitEnv, HOME: home.env.HOME!, PATH: `${shim}:${home.env.PATH ?? process.env.PATH}` };
      expectRefused(await runCli(['install', asked, '--json'], { env: shimmed }), 'sources.git_hosts', 'redirect', 'gitext');
      expect(readFileSync(argvLog, 'utf8')).toContain('followRedirects=false');
      expect(readFileSync(argvLog, 'utf8')).not.toContain(token);
      rmSync(join(home.env.HOME!, '.gitconfig'));
      // With no rule on git hosts, git follows the redirect as it does for the user.
      systemPolicy({ sources: { kinds: ['git'] } });
      const r = await runCli(['install', asked, '--json'], { env: gitEnv });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(store('gitext'), 'MARKER-redirected-host'))).toBe(true);
    } finally {
      redirector.close();
      target.close();
      await server.close();
      ca.cleanup();
    }
  });
});

describe('sources.index_urls rules the index a run fetches from', () => {
  it('install --frozen of a lock that records crates.io, from another index (--index / YEP_EXT_INDEX): refused when the policy admits only crates.io', async () => {
    expect((await runCli(['install', 'hello@0.3.0'], { env: env() })).code).toBe(0);
    // As a lock written against crates.io reads (no `index` key), fetched now from the test index.
    const lock = readFileSync(lockFile(), 'utf8').replace(/^index = .*\n/m, '');
    const project = join(home.root, 'project.lock');
    writeFileSync(project, lock);
    expect(lock).not.toContain(reg.indexUrl);
    const ci = makeTempHome();
    try {
      writeFileSync(ci.env.YEP_EXT_POLICY!, stringify({ sources: { index_urls: ['https://index.crates.io/'] } }));
      const r = await runCli(['install', '--frozen', '--lockfile', project, '--json'], {
        env: { ...ci.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' },
      });
      expect(r.code, r.stdout + r.stderr).toBe(13);
      expect(jsonOf(r).error.details).toMatchObject({ rule: 'sources.index_urls', item: reg.indexUrl });
      expect(existsSync(join(ci.configDir, 'extensions', 'hello'))).toBe(false);
    } finally {
      ci.cleanup();
    }
  });
});

/** A crate whose plugin.json names `command`. */
function publishCommand(crate: string, name: string, command: string): void {
  const tree = readTree(join(import.meta.dirname, '../fixtures/crates/yolop-extension-built'));
  const text = (rel: string) => Buffer.from(tree[rel]!.content).toString('utf8').replaceAll('yolop-extension-built', crate);
  const plugin = JSON.parse(text('plugin.json'));
  plugin.name = name;
  plugin.yolop.capabilityServer.command = command;
  const files = { ...tree, 'Cargo.toml': text('Cargo.toml'), 'Cargo.lock': text('Cargo.lock'), 'plugin.json': JSON.stringify(plugin) };
  reg.publish({ name: crate, vers: '0.1.0', data: buildCrate({ name: crate, version: '0.1.0', files }) });
}

// Climbs out of any package, however deep (`..` at the root stays there).
const CLIMB = `${'../'.repeat(40)}bin/sh`;

describe('grant.server_outside_package rules the command as the host resolves it', () => {
  it.each([
    ['an absolute command', '/bin/sh'],
    ['a relative command that climbs out', CLIMB],
  ])(
    '%s: path and crate installs refused (exit 13, nothing placed); installed before the policy, enable and policy check refuse it',
    async (_what, command) => {
      const crate = `yolop-extension-out${command.length}`;
      const crateName = `out${command.length}`;
      publishCommand(crate, crateName, command);
      const dir = makePackage(join(home.root, 'src'), 'outside', { command });
      systemPolicy({ grant: { server_outside_package: false } });
      expectRefused(await runCli(['install', dir, '--json'], { env: env() }), 'grant.server_outside_package', command, 'outside');
      expectRefused(await runCli(['install', crateName, '--no-build', '--json'], { env: env() }), 'grant.server_outside_package', command, crateName);
      // Installed while the policy allowed it: what is on disk is ruled at enable and policy check.
      systemPolicy({ grant: { server_outside_package: true } });
      const ok = await runCli(['install', dir, '--json'], { env: env() });
      expect(ok.code, ok.stderr).toBe(0);
      systemPolicy({ grant: { server_outside_package: false } });
      const enable = await runCli(['enable', 'outside', '--json'], { env: env() });
      expect(enable.code, enable.stdout + enable.stderr).toBe(13);
      expect(jsonOf(enable).error.details).toMatchObject({ rule: 'grant.server_outside_package', item: command });
      expect(settingsText()).not.toContain('ext:outside');
      const check = await runCli(['policy', 'check', '--json'], { env: env() });
      expect(check.code).toBe(13);
      expect(jsonOf(check).error.details.violations).toEqual([expect.objectContaining({ rule: 'grant.server_outside_package', item: command })]);
    },
  );

  it('doctor does not start a server whose command runs a program from PATH when the policy forbids it (the program leaves no marker); it does when allowed', async () => {
    // A program on PATH that leaves a marker when it runs, then serves as the good fixture does.
    const pathDir = join(home.root, 'on-path');
    mkdirSync(pathDir, { recursive: true });
    const marker = join(home.root, 'server-ran');
    const good = join(import.meta.dirname, '../fixtures/servers/good.sh');
    writeFileSync(join(pathDir, 'probe-srv'), `#!/bin/sh\necho ran > '${marker}'\nexec /bin/sh '${good}' "$@"\n`);
    chmodSync(join(pathDir, 'probe-srv'), 0o755);
    const dir = makePackage(join(home.root, 'src'), 'probe', { command: 'probe-srv' });
    const withPath = env({ PATH: `${pathDir}:${process.env.PATH}` });
    systemPolicy({ grant: { server_outside_package: false } });
    // `doctor <dir>` (the early start in bin/run.js included) and doctor of the installed name.
    const refused = await runCli(['doctor', dir, '--json'], { env: withPath });
    expect(refused.code, refused.stdout + refused.stderr).not.toBe(0);
    expect(existsSync(marker), 'the server ran').toBe(false);
    const checks = jsonOf(refused).checks ?? jsonOf(refused).error?.details?.checks;
    expect(checks.find((c: { name: string }) => c.name === 'command')).toMatchObject({ status: 'fail' });
    expect(checks.find((c: { name: string }) => c.name === 'command').detail).toContain('grant.server_outside_package');
    systemPolicy({ grant: { server_outside_package: true } });
    const ran = await runCli(['doctor', dir, '--json'], { env: withPath });
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});
