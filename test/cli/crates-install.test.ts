/**
 * End to end: the built CLI installs from the loopback registry in every spec
 * form, pins the lock, keeps the server executable, lists it; several at once
 * commit each success; hostile downloads leave the home untouched; search.
 * Needs `npm run build` first.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { buildCrate, FIXTURE_CRATES, fixtureCrate, packagedCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const FAST = {
  YEP_EXT_HTTP_TIMEOUT_MS: '5000',
  YEP_EXT_HTTP_DOWNLOAD_TIMEOUT_MS: '5000',
  YEP_EXT_HTTP_STALL_MS: '2000',
  YEP_EXT_HTTP_RETRIES: '2',
  YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10',
  YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '40',
};

let reg: TestRegistry;
let home: TempHome;

beforeAll(async () => {
  reg = await startRegistry();
  for (const v of ['0.1.0', '0.2.0', '0.3.0', '0.3.1']) {
    reg.publish({ name: HELLO, vers: v, data: fixtureCrate(HELLO, v), keywords: ['yolop-extension'], description: 'Says hello', downloads: 42 });
  }
  reg.publish({
    name: 'yolop-extension-cargo-made',
    vers: '0.2.0',
    data: packagedCrate(),
    keywords: ['yolop-extension'],
    description: 'Made by cargo',
    downloads: 7,
  });
  // One version published twice with other bytes: which is the published crate cannot be told.
  for (const note of ['first', 'second']) {
    reg.publish({
      name: 'yolop-extension-twice',
      vers: '1.0.0',
      data: fixtureCrate(HELLO, '1.0.0', { publishAs: 'yolop-extension-twice', files: { NOTE: note } }),
    });
  }
  reg.publish({ name: 'yolop-extension-corrupt', vers: '1.0.0', data: fixtureCrate(HELLO, '1.0.0'), cksum: 'e'.repeat(64) });
  reg.publish({
    name: 'yolop-extension-evil',
    vers: '1.0.0',
    data: buildCrate({
      name: 'yolop-extension-evil',
      version: '1.0.0',
      dir: join(FIXTURE_CRATES, HELLO),
      entries: [{ path: 'yolop-extension-evil-1.0.0/bin/escape', type: 'symlink', linkpath: '/etc/passwd' }],
    }),
  });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => {
  reg.clearFaults();
  reg.requests.length = 0;
  home.cleanup();
});

const env = (extra: Record<string, string> = {}) => ({ ...home.env, ...FAST, YEP_EXT_INDEX: reg.indexUrl, ...extra });
const store = () => join(home.configDir, 'extensions');
const lockFile = () => join(store(), 'extensions.lock');
const lock = () => (parse(readFileSync(lockFile(), 'utf8')) as { extensions: Array<Record<string, any>> }).extensions;

function snapshot(): Record<string, string | null> {
  const read = (p: string) => (existsSync(p) ? readFileSync(p, 'latin1') : null);
  return {
    lock: read(lockFile()),
    settings: read(join(home.configDir, 'settings.toml')),
    secrets: read(join(home.configDir, 'connections.toml')),
    // The store directory itself may appear (staging lives in it); its packages may not.
    store: existsSync(store())
      ? readdirSync(store())
          .filter((e) => !e.startsWith('.'))
          .sort()
          .join(',')
      : '',
    staging: existsSync(join(store(), '.yep-staging')) ? readdirSync(join(store(), '.yep-staging')).join(',') : '',
  };
}

/** Start the installed server and do the YEP handshake: proves it is there and executable. */
function handshake(cmd: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl !== -1) {
        child.stdin.end();
        resolve(JSON.parse(out.slice(0, nl)));
      }
    });
    child.on('error', reject);
    child.stdin.write(`${JSON.stringify({ id: 1, method: 'initialize', params: { protocol_version: '1.0' } })}\n`);
  });
}

describe('install from the registry', () => {
  it('installs a bare name (latest stable), pins it, keeps the server executable, and list shows it', async () => {
    const r = await runCli(['install', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    // Where it came from is the index it was installed from (as `list` names it), never crates.io for another index.
    const origin = new URL(reg.indexUrl).host;
    expect(r.stdout).toContain(`hello 0.3.1 from ${origin}:${HELLO}@0.3.1`);
    expect(r.stdout).toContain(`Installed hello 0.3.1 (${origin}:${HELLO}@0.3.1)`);
    expect(r.stdout).not.toContain('crates.io');
    const entries = lock();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      name: 'hello',
      version: '0.3.1',
      source: { type: 'crate', crate_name: HELLO, version: '0.3.1', cksum: expect.stringMatching(/^[0-9a-f]{64}$/), index: reg.indexUrl },
    });
    expect(entries[0]!.source).not.toHaveProperty('requirement');
    expect(entries[0]!.content_hash).toBe(await contentHash(join(store(), 'hello')));
    const server = join(store(), 'hello', 'bin', 'hello-server');
    expect(statSync(server).mode & 0o777).toBe(0o755);
    expect((await handshake(server)).result.name).toBe('hello');
    expect(readdirSync(join(store(), '.yep-staging'))).toEqual([]);

    const list = jsonOf(await runCli(['list', '--json'], { env: env() }));
    expect(list.extensions).toMatchObject([{ name: 'hello', version: '0.3.1', problems: [] }]);
  });

  it.each([
    ['hello@0.2.0', '0.2.0', '0.2.0'],
    ['hello@^0.3', '0.3.1', '^0.3'],
    ['crates.io:yolop-extension-hello@~0.3.0', '0.3.1', '~0.3.0'],
    ['crates.io:yolop-extension-hello@>=0.1, <0.2', '0.1.0', '>=0.1, <0.2'],
  ])('installs %s as %s and records the requirement', async (specText, version, requirement) => {
    const r = await runCli(['install', specText], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(lock()[0]).toMatchObject({ name: 'hello', version, source: { crate_name: HELLO, version, requirement } });
  });

  it('takes the registry from --index (sparse+ prefix accepted) as well as YEP_EXT_INDEX', async () => {
    const r = await runCli(['install', '--index', `sparse+${reg.indexUrl}`, 'hello@0.1.0'], { env: { ...home.env, ...FAST } });
    expect(r.code, r.stderr).toBe(0);
    expect(lock()[0]!.source).toMatchObject({ version: '0.1.0', index: reg.indexUrl });
  });

  it('installs the real cargo-made crate, whose manifest lives in Cargo.toml', async () => {
    const r = await runCli(['install', 'cargo-made', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    // Where the command is, in the package's terms: never the staging directory it was inspected in (gone by now).
    expect(jsonOf(r).installed[0]).toMatchObject({
      name: 'cargo-made',
      version: '0.2.0',
      command: { found: true, detail: 'bin/cargo-made-server (executable)' },
    });
    expect(JSON.parse(readFileSync(join(store(), 'cargo-made', 'plugin.json'), 'utf8')).name).toBe('cargo-made');
    expect(statSync(join(store(), 'cargo-made', 'bin', 'cargo-made-server')).mode & 0o777).toBe(0o755);
    expect(lock()[0]!.source).toMatchObject({
      crate_name: 'yolop-extension-cargo-made',
      cksum: 'a644b6ec3c7ab40a633c023992070f240253921e111e49bd16025f6fc972bf36',
    });
  });

  it('installs several at once, commits each success, and exits non-zero when one fails', async () => {
    const r = await runCli(['install', 'hello', 'cargo-made@0.2.0', 'nosuch', '--json'], { env: env() });
    expect(r.code).toBe(11);
    const out = jsonOf(r);
    expect(out.error.code).toBe('E_PARTIAL');
    expect(out.error.details.installed.map((i: { name: string }) => i.name).sort()).toEqual(['cargo-made', 'hello']);
    expect(out.error.details.failed).toMatchObject([{ spec: 'nosuch', error: { code: 'E_NOT_FOUND' } }]);
    expect(lock().map((e) => e.name)).toEqual(['cargo-made', 'hello']);
  });

  it('says "no such crate" with exit 3 and leaves the home untouched', async () => {
    const before = snapshot();
    const r = await runCli(['install', 'nosuch'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/No crate named yolop-extension-nosuch/);
    expect(r.stderr).toMatch(/yep-ext search nosuch/);
    expect(snapshot()).toEqual(before);
  });

  it('refuses a leading v in the version (exit 2)', async () => {
    const r = await runCli(['install', 'hello@v0.3.1'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/leading "v" is not allowed/);
  });
});

describe('hostile registry: rejected, home unchanged', () => {
  beforeEach(async () => {
    // An existing install, so "unchanged" covers a real lock and store.
    const r = await runCli(['install', 'hello@0.1.0'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
  });

  // hello@0.3.0 replaces the installed 0.1.0: --yes, or the replacement is refused before any download.
  const cases: [string, string[], number, RegExp, (() => void)?][] = [
    ['a checksum mismatch (B10)', ['install', 'corrupt'], 5, /does not match the registry checksum/],
    [
      'a corrupted download (B10)',
      ['install', 'hello@0.3.0', '--yes'],
      5,
      /does not match the registry checksum/,
      () => reg.fault('/crates/', { kind: 'corrupt' }),
    ],
    ['an HTML page with status 200 (B12)', ['install', 'hello@0.3.0', '--yes'], 6, /HTML page/, () => reg.fault('/index/yo/', { kind: 'html' })],
    [
      'a redirect to another host (B16)',
      ['install', 'hello@0.3.0', '--yes'],
      6,
      /another host/,
      () => reg.fault('/crates/', { kind: 'redirect', location: reg.url.replace('127.0.0.1', 'localhost') }),
    ],
    ['a server that keeps failing (B17)', ['install', 'hello@0.3.0', '--yes'], 6, /answered 503/, () => reg.fault('/crates/', { kind: 'status', status: 503 })],
    ['a symlink in the archive (A2)', ['install', 'evil'], 4, /symlink|SymbolicLink|not allowed/i],
    ['one version listed twice with two checksums', ['install', 'twice'], 5, /twice 1\.0\.0 more than once, with different checksums/],
  ];
  it.each(cases)('%s', async (_label, args, code, message, setup) => {
    const before = snapshot();
    setup?.();
    const r = await runCli(args, { env: env() });
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(snapshot()).toEqual(before);
    // The existing install is still in place: its entry links to its version directory.
    expect(readlinkSync(join(store(), 'hello'))).toMatch(/^\.yep-packages\/hello\.[0-9a-f]{16}$/);
    expect(statSync(join(store(), 'hello')).isDirectory()).toBe(true);
  });
});

describe('search', () => {
  it('shows a table, marks installed extensions, and prints JSON with --json', async () => {
    expect((await runCli(['install', 'hello'], { env: env() })).code).toBe(0);
    const r = await runCli(['search'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/name\s+│?\s*version/);
    expect(r.stdout).toMatch(/hello\s.*0\.3\.1.*168.*Says hello.*yes \(0\.3\.1\)/);
    expect(r.stdout).toMatch(/cargo-made\s.*0\.2\.0.*7.*Made by cargo/);
    const j = jsonOf(await runCli(['search', 'hello', '--json', '--limit', '5'], { env: env() }));
    expect(j.hits).toEqual([
      { crate: HELLO, install: 'hello', version: '0.3.1', downloads: 168, description: 'Says hello', installed: { name: 'hello', version: '0.3.1' } },
    ]);
  });

  it('--limit says when it cut the list (on stderr: the table stays rows only), and not when it did not', async () => {
    const cut = await runCli(['search', '--limit', '1'], { env: env() });
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.stderr).toContain('Showing the first 1 match; there are more: `yep-ext search --limit 5` shows more.');
    expect(cut.stdout).not.toMatch(/Showing/);
    expect(jsonOf(await runCli(['search', '--limit', '1', '--json'], { env: env() }))).toMatchObject({ truncated: true });
    const all = await runCli(['search', '--json'], { env: env() });
    expect(jsonOf(all)).toMatchObject({ truncated: false });
    expect(all.stderr).not.toMatch(/Showing/);
  });

  it('says so when nothing matches', async () => {
    const r = await runCli(['search', 'zzz-nothing'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/No extensions match "zzz-nothing"/);
  });

  it('fails clearly when the API answers an error with status 200, or is unreachable', async () => {
    reg.fault('/api/v1/crates', { kind: 'body', body: JSON.stringify({ errors: [{ detail: 'invalid query' }] }) });
    const r = await runCli(['search', 'x'], { env: env() });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/answered with an error: invalid query/);
    const r2 = await runCli(['search', 'x', '--json'], { env: { ...env(), YEP_EXT_INDEX: 'http://127.0.0.1:9/' } });
    expect(r2.code).toBe(6);
    expect(jsonOf(r2).error.message).toMatch(/connection was refused/);
  });
});

describe('update and --frozen for crates', () => {
  it('moves to the highest version matching the recorded requirement, keeping it', async () => {
    const UPD = 'yolop-extension-upd';
    reg.publish({ name: UPD, vers: '0.1.0', data: fixtureCrate(HELLO, '0.1.0', { publishAs: UPD }) });
    expect((await runCli(['install', `crates.io:${UPD}@^0.1`], { env: env() })).code).toBe(0);
    const up0 = await runCli(['update', 'hello', '--json'], { env: env() });
    expect(up0.code, up0.stderr).toBe(0);
    expect(JSON.stringify(jsonOf(up0))).toMatch(/up-to-date/);

    reg.publish({ name: UPD, vers: '0.1.1', data: fixtureCrate(HELLO, '0.1.1', { publishAs: UPD }) });
    reg.publish({ name: UPD, vers: '0.2.0', data: fixtureCrate(HELLO, '0.2.0', { publishAs: UPD }) });
    const up = await runCli(['update', 'hello', '--yes'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    expect(lock()[0]).toMatchObject({ name: 'hello', version: '0.1.1', source: { crate_name: UPD, version: '0.1.1', requirement: '^0.1' } });
    expect(lock()[0]!.content_hash).toBe(await contentHash(join(store(), 'hello')));
  });

  it('the installed version asked for through a requirement is a re-pin that records it; the same request again is unchanged', async () => {
    expect((await runCli(['install', 'hello'], { env: env() })).code).toBe(0);
    const first = lock()[0]!;
    expect(first.source).not.toHaveProperty('requirement');
    const r = await runCli(['install', `crates.io:${HELLO}@^0.3`, '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const out = jsonOf(r).installed[0];
    expect(out).toMatchObject({ status: 'repinned', version: '0.3.1' });
    expect(out.notes).toEqual(['`yep-ext update` now follows `^0.3` (it followed the newest).']);
    expect(lock()[0]).toMatchObject({ version: '0.3.1', content_hash: first.content_hash, source: { version: '0.3.1', requirement: '^0.3' } });
    expect(jsonOf(await runCli(['install', `crates.io:${HELLO}@^0.3`, '--json'], { env: env() })).installed[0].status).toBe('unchanged');
    expect(lock()[0]!.source.requirement).toBe('^0.3');
  });

  it('reproduces a crate install from a lockfile without reading the index, and refuses tampered bytes', async () => {
    expect((await runCli(['install', 'hello@0.2.0'], { env: env() })).code).toBe(0);
    const pinned = readFileSync(lockFile(), 'utf8');
    const projectLock = join(home.root, 'project.lock');
    writeFileSync(projectLock, pinned);
    const fresh = makeTempHome();
    try {
      reg.requests.length = 0;
      const freshEnv = { ...fresh.env, ...FAST, YEP_EXT_INDEX: reg.indexUrl };
      const r = await runCli(['install', '--frozen', '--lockfile', projectLock], { env: freshEnv });
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(join(fresh.configDir, 'extensions', 'extensions.lock'), 'utf8')).toBe(pinned);
      expect(reg.requestsTo('/index/yo/')).toHaveLength(0);
      expect(reg.requestsTo('/crates/')).toHaveLength(1);

      const tampered = makeTempHome();
      try {
        reg.fault('/crates/', { kind: 'corrupt' });
        const t = await runCli(['install', '--frozen', '--lockfile', projectLock], { env: { ...tampered.env, ...FAST, YEP_EXT_INDEX: reg.indexUrl } });
        expect(t.code).toBe(5);
        expect(t.stderr).toMatch(/hello: .*does not match the registry checksum/);
        expect(existsSync(join(tampered.configDir, 'extensions', 'extensions.lock'))).toBe(false);
      } finally {
        tampered.cleanup();
      }
    } finally {
      fresh.cleanup();
    }
  });
});
