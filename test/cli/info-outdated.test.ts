/**
 * `info` and `outdated` end to end, through the built CLI against the
 * loopback registry and a real git repository whose branch moved: the JSON shape
 * (every key present), the exit codes (0; 14 only with --exit-code; a failed
 * lookup's code), the wanted/latest logic within and outside the recorded
 * requirement, secrets only as set/unset, and that neither command writes
 * anything (the lock and the store are byte-identical afterwards).
 */
import { existsSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { fakeAgent, pathWithoutAgent } from '../helpers/fake-agent.js';
import { keepHome, type KeptHome } from '../helpers/prepared-home.js';
import { fixtureFiles, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { homeState } from '../helpers/home-state.js';
import { treeBytes } from '../helpers/file-walk.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const SECRET = 'sk-info-test-7d1f0c2e9b';
let reg: TestRegistry;
let home: TempHome;
let repo: TestRepo;

function manifest(version: string): string {
  return JSON.stringify({
    name: 'hello',
    version,
    description: 'says hello',
    engines: { yolop: '>=0.10' },
    yolop: {
      capabilityServer: { command: 'hello-server' },
      tools: [{ name: 'greet' }],
      config_schema: {
        type: 'object',
        required: ['token'],
        properties: { token: { type: 'string', secret: true, env: 'HELLO_TOKEN' }, mode: { type: 'string', default: 'fast' } },
      },
    },
  });
}
const publish = (version: string) =>
  reg.publish({ name: HELLO, vers: version, data: fixtureCrate(HELLO, version, { files: { 'plugin.json': manifest(version) } }) });

const store = () => join(home.configDir, 'extensions');
const lockText = () => readFileSync(join(store(), 'extensions.lock'), 'utf8');
const env = (): Record<string, string> => {
  const agent = fakeAgent(join(home.root, 'agent'), '0.12.1');
  return { ...home.env, PATH: `${agent.dir}:${pathWithoutAgent()}`, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' };
};

const ITEM_KEYS = [
  'current',
  'engines',
  'error',
  'hint',
  'kind',
  'latest',
  'name',
  'newer_engines',
  'newer_outside',
  'requirement',
  'source',
  'status',
  'tag',
  'wanted',
];
const INFO_KEYS = [
  'approved_grant',
  'config',
  'content_hash',
  'description',
  'dir',
  'enabled',
  'engines',
  'grant',
  'installed',
  'name',
  'pin',
  'registry',
  'source',
  'source_text',
  'upstream',
  'upstream_error',
  'verify',
  'version',
];

/** The whole store (names and bytes): neither command may change it. */
function storeSnapshot(): string {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.name === '.yep-cache') continue; // the agent-version cache
      if (e.isDirectory()) walk(p);
      else out.push(`${p}\n${e.isSymbolicLink() ? 'link' : readFileSync(p).toString('base64')}`);
    }
  };
  walk(store());
  return out.join('\n');
}

let oldRev: string;
let pkgDir: string;
let repos: TempHome;
/** The home as the installs left it, put back at home.root before each test (prepared-home.ts keepHome). */
let installed: KeptHome;
let restoreRegistry: () => void;

// One git origin, one registry and one installed home for the file: every test gets the home
// the install of hello@^0.1, gitext@main (at oldRev) and ./local-ext left, at the same path
// (the lock and the store name it), against a registry serving 0.1.0 and 0.4.0 only; a test
// that moves main (a commit) has it put back, and what a test published or broke on the
// registry is undone, before the next one.
beforeAll(async () => {
  repos = makeTempHome('yep-info-repos-');
  repo = makeRepo(repos.root, { files: fixtureFiles('gitext', '1.0.0') });
  oldRev = repo.rev('main');
  reg = await startRegistry();
  publish('0.1.0');
  publish('0.4.0');
  restoreRegistry = reg.checkpoint();
  home = makeTempHome('yep-info-');
  pkgDir = writePackage(join(home.root, 'local-ext'), { name: 'localext' });
  const r = await runCli(['install', 'hello@^0.1', `${repo.url}@main`, pkgDir, '--yes'], { env: env() });
  expect(r.code, r.stderr).toBe(0);
  installed = keepHome(home);
  expect([...installed.signed].sort()).toEqual(['gitext', 'hello']);
});
afterAll(async () => {
  await reg.close();
  home.cleanup();
  installed.cleanup();
  repos.cleanup();
});

beforeEach(() => {
  if (repo.rev('main') !== oldRev) {
    repo.forcePush('main', oldRev);
    repo.git(['reset', '--quiet', '--hard', oldRev]);
  }
  installed.restore();
});
afterEach(() => restoreRegistry());

describe('outdated', () => {
  it('current, wanted, latest for crate and git entries; path = local; exit 0, or 14 with --exit-code; nothing written', async () => {
    publish('0.1.1'); // inside ^0.1
    const newRev = repo.commit({ 'README.md': 'moved\n' }); // the branch moved
    const lock = lockText();
    const snapshot = storeSnapshot();
    const downloads = reg.requestsTo('/crates/').length;

    const r = await runCli(['outdated', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const doc = jsonOf(r);
    expect(Object.keys(doc).sort()).toEqual(['outdated', 'outdated_count', 'unlocked']);
    expect(doc.unlocked).toEqual([]);
    expect(doc.outdated_count).toBe(2);
    for (const item of doc.outdated) expect(Object.keys(item).sort(), item.name).toEqual(ITEM_KEYS);
    const [gitext, hello, localext] = doc.outdated;
    expect(hello).toMatchObject({
      name: 'hello',
      kind: 'crate',
      current: '0.1.0',
      wanted: '0.1.1',
      latest: '0.4.0',
      requirement: '^0.1',
      status: 'update',
      hint: 'yep-ext update hello',
      error: null,
    });
    expect(hello.engines).toMatchObject({ status: 'admits', requires: '>=0.10', agent: '0.12.1' });
    expect(gitext).toMatchObject({
      name: 'gitext',
      kind: 'git',
      current: oldRev,
      wanted: newRev,
      latest: newRev,
      requirement: 'main',
      status: 'update',
      hint: 'yep-ext update gitext',
      error: null,
    });
    expect(localext).toMatchObject({ name: 'localext', kind: 'path', wanted: null, latest: null, requirement: null, status: 'local', hint: null, error: null });

    const coded = await runCli(['outdated', '--json', '--exit-code'], { env: env() });
    expect(coded.code, coded.stderr).toBe(14);
    expect(jsonOf(coded)).toEqual(doc);

    const human = await runCli(['outdated', '--exit-code'], { env: env() });
    expect(human.code).toBe(14);
    // Piped: a tab-separated table with a header, no box characters.
    expect(human.stdout.split('\n')[0]).toBe('name\tcurrent\twanted\tlatest\tstatus');
    // Both commands that move hello: update within ^0.1, the install of the newer line outside it.
    expect(human.stdout).toContain('hello\t0.1.0\t0.1.1\t0.4.0\tupdate: `yep-ext update hello`, 0.4.0 exists outside ^0.1: `yep-ext install hello@^0.4`');
    expect(human.stdout).toContain(`gitext\t${oldRev.slice(0, 7)}\t${newRev.slice(0, 7)}\t${newRev.slice(0, 7)}\tupdate: \`yep-ext update gitext\``);
    expect(human.stdout).not.toMatch(/[│┌─]/);

    expect(lockText()).toBe(lock);
    expect(storeSnapshot()).toBe(snapshot);
    // Downloads only for the newer versions' engines.yolop: 0.1.1, the newest the
    // requirement selects (what update tries first), then 0.4.0, the newest outside it, each
    // once: the later runs used the download cache.
    expect(
      reg
        .requestsTo('/crates/')
        .slice(downloads)
        .map((q) => /\/crates\/[^/]+\/([^/]+)\/download/.exec(q.url)?.[1]),
    ).toEqual(['0.1.1', '0.4.0']);
    expect(hello.newer_engines).toMatchObject({
      status: 'checked',
      agent: '0.12.1',
      runnable: '0.4.0',
      runnable_in_requirement: '0.1.1',
      needs_newer_agent: [],
      tried: 2,
      candidates: 2,
    });
    expect(gitext.newer_engines).toBeNull();
    expect(localext.newer_engines).toBeNull();
  });

  it('after update: only a version outside the requirement is newer (status beyond, the install that reaches it); git up to date', async () => {
    publish('0.1.1');
    const up = await runCli(['update', '--all', '--yes'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    const r = await runCli(['outdated', '--json', '--exit-code'], { env: env() });
    expect(r.code, r.stderr).toBe(14);
    const items = jsonOf(r).outdated;
    expect(items[1]).toMatchObject({
      name: 'hello',
      current: '0.1.1',
      wanted: '0.1.1',
      latest: '0.4.0',
      status: 'beyond',
      hint: 'yep-ext install hello@^0.4',
      newer_outside: { version: '0.4.0', requirement: '^0.1', spec: 'hello@^0.4' },
    });
    expect(items[0]).toMatchObject({ name: 'gitext', status: 'up-to-date', current: oldRev, wanted: oldRev, hint: null });
    const human = await runCli(['outdated'], { env: env() });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('0.4.0 exists outside ^0.1: `yep-ext install hello@^0.4`');
    expect(human.stdout).not.toContain('can be updated');

    // Everything current: --exit-code exits 0.
    const all = await runCli(['install', 'hello@^0.4', '--yes'], { env: env() });
    expect(all.code, all.stderr).toBe(0);
    const none = await runCli(['outdated', '--json', '--exit-code'], { env: env() });
    expect(none.code, none.stderr).toBe(0);
    expect(jsonOf(none).outdated_count).toBe(0);
  });

  it('a tree that is not what the lock pins is damaged, not "up to date": store entry gone, a file edited; exit 5 with --exit-code; nothing written', async () => {
    // hello: its package directory is gone (the host loads nothing); gitext: a file edited in the store.
    rmSync(realpathSync(join(store(), 'hello')), { recursive: true });
    writeFileSync(join(store(), 'gitext', 'README.md'), 'edited\n');
    const lock = lockText();
    const snapshot = storeSnapshot();
    const downloads = reg.requestsTo('/crates/').length;

    const r = await runCli(['outdated', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const [gitext, hello, localext] = jsonOf(r).outdated;
    expect(hello).toMatchObject({
      name: 'hello',
      current: '0.1.0',
      status: 'damaged',
      hint: 'yep-ext install --force hello',
      error: { code: 'E_INTEGRITY', details: { problems: [expect.objectContaining({ kind: 'missing' })] } },
    });
    expect(gitext).toMatchObject({
      name: 'gitext',
      wanted: oldRev,
      status: 'damaged',
      hint: 'yep-ext install --force gitext',
      error: { code: 'E_INTEGRITY', details: { problems: [expect.objectContaining({ kind: 'content' })] } },
    });
    expect(localext.status).toBe('local');
    expect(r.stderr).toMatch(/hello: what is installed does not match its lock entry/);
    // Nothing downloaded for a damaged row's newer versions: its answer is the repair.
    expect(reg.requestsTo('/crates/')).toHaveLength(downloads);

    const coded = await runCli(['outdated', '--exit-code'], { env: env() });
    expect(coded.code).toBe(5);
    expect(coded.stdout).toContain('hello\t0.1.0\t0.1.0\t0.4.0\tdamaged:');
    expect(coded.stdout).not.toContain('up to date');

    // With its origin gone too, the damage known before any request is still the row's answer
    // (not a plain "failed" lookup), and the failed lookup is a warning.
    renameSync(repo.bare, `${repo.bare}.moved`);
    try {
      const away = await runCli(['outdated', '--json'], { env: env() });
      expect(away.code, away.stderr).toBe(0);
      expect(jsonOf(away).outdated[0]).toMatchObject({
        name: 'gitext',
        status: 'damaged',
        hint: 'yep-ext install --force gitext',
        error: { code: 'E_INTEGRITY' },
      });
      expect(away.stderr).toMatch(/gitext: its origin could not be asked/);
    } finally {
      renameSync(`${repo.bare}.moved`, repo.bare);
    }

    const info = await runCli(['info', 'gitext', '--json'], { env: env() });
    expect(info.code, info.stderr).toBe(0);
    expect(jsonOf(info).upstream).toMatchObject({ status: 'damaged', hint: 'yep-ext install --force gitext' });
    expect((await runCli(['info', 'hello'], { env: env() })).stdout).not.toContain('up to date');

    expect(lockText()).toBe(lock);
    expect(storeSnapshot()).toBe(snapshot);
    // The hint repairs it: the same rows are then answered from the origin.
    for (const name of ['hello', 'gitext']) expect((await runCli(['install', '--force', name, '--yes'], { env: env() })).code).toBe(0);
    const fixed = jsonOf(await runCli(['outdated', '--json'], { env: env() })).outdated;
    expect(fixed.map((i: { status: string }) => i.status)).toEqual(['up-to-date', 'beyond', 'local']);

    // A path install is edited in place (local either way), but one whose store link is gone
    // leaves yolop nothing to load: damaged too, and install --force puts it back.
    rmSync(join(store(), 'localext'));
    const gone = await runCli(['outdated', '--json', '--exit-code'], { env: env() });
    expect(gone.code, gone.stderr).toBe(5);
    expect(jsonOf(gone).outdated[2]).toMatchObject({
      name: 'localext',
      status: 'damaged',
      hint: 'yep-ext install --force localext',
      error: { code: 'E_INTEGRITY', details: { problems: [expect.objectContaining({ kind: 'missing' })] } },
    });
    expect((await runCli(['install', '--force', 'localext', '--yes'], { env: env() })).code).toBe(0);
    expect(existsSync(join(store(), 'localext', 'plugin.json'))).toBe(true);
    expect(jsonOf(await runCli(['outdated', '--json'], { env: env() })).outdated[2].status).toBe('local');
  });

  it('a store package no lock entry pins is named (yolop loads it), never "No extensions installed"', async () => {
    // Alone in a store: the lock pins nothing, the host loads the package.
    const fresh = makeTempHome('yep-info-unlocked-');
    try {
      writePackage(join(fresh.configDir, 'extensions', 'stray'), { name: 'stray' });
      const only = await runCli(['outdated', '--json'], { env: { ...env(), ...fresh.env } });
      expect(only.code, only.stderr).toBe(0);
      expect(jsonOf(only)).toEqual({ outdated: [], outdated_count: 0, unlocked: ['stray'] });
      expect(only.stderr).toContain('no lock entry pins (stray)');
      const human = await runCli(['outdated'], { env: { ...env(), ...fresh.env } });
      expect(human.stdout).not.toContain('No extensions installed');
      expect(human.stdout).toContain('stray');
    } finally {
      fresh.cleanup();
    }
    // Beside locked ones: the rows, and the name.
    writePackage(join(store(), 'stray'), { name: 'stray' });
    const r = await runCli(['outdated', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).unlocked).toEqual(['stray']);
    expect(jsonOf(r).outdated.map((i: { name: string }) => i.name)).toEqual(['gitext', 'hello', 'localext']);
  });

  it('a failed lookup is reported on its row; the others are answered; exit 11 (partial)', async () => {
    reg.fault(/yolop-extension-hello/, { kind: 'status', status: 500 });
    const r = await runCli(['outdated', '--json'], { env: env() });
    expect(r.code).toBe(11);
    const items = jsonOf(r).outdated;
    expect(items[1]).toMatchObject({ name: 'hello', status: 'failed', wanted: null, latest: null, error: { code: 'E_NETWORK' } });
    expect(items[0]).toMatchObject({ name: 'gitext', status: 'up-to-date', error: null });
    const human = await runCli(['outdated'], { env: env() });
    expect(human.code).toBe(11);
    expect(human.stdout).toContain('hello\t0.1.0\t-\t-\tfailed:');
    expect(human.stderr).toMatch(/error: Could not check hello/);
  });
});

describe('info', () => {
  it('an installed crate: pin, hash, grant, config (a secret only as set/unset), checks, engines, newer versions in and outside the requirement', async () => {
    publish('0.1.1');
    const lock = lockText();
    const r = await runCli(['info', 'hello', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const info = jsonOf(r);
    expect(Object.keys(info).sort()).toEqual(INFO_KEYS);
    const block = lock.split('[[extensions]]').find((b) => b.includes('name = "hello"'))!;
    const hash = /content_hash = "([^"]+)"/.exec(block)![1];
    const grant = /grant = "([^"]+)"/.exec(block)![1];
    expect(info).toMatchObject({
      name: 'hello',
      installed: true,
      version: '0.1.0',
      description: 'says hello',
      source: { type: 'crate', crate_name: HELLO, version: '0.1.0', requirement: '^0.1' },
      // The loopback index is not crates.io: the source names its host.
      source_text: `${new URL(reg.indexUrl).host}:${HELLO}@0.1.0`,
      pin: '0.1.0',
      content_hash: hash,
      approved_grant: grant,
      grant: { fingerprint: grant, grant: { name: 'hello', tools: [expect.objectContaining({ name: 'greet' })] } },
      verify: { ok: true, problems: [], checked_by: 'list' },
      engines: { status: 'admits', requires: '>=0.10', agent: '0.12.1' },
      upstream: {
        wanted: '0.1.1',
        latest: '0.4.0',
        status: 'update',
        newest_in_requirement: '0.1.1',
        newest_outside_requirement: '0.4.0',
        hint: 'yep-ext update hello',
        newer_outside: { version: '0.4.0', requirement: '^0.1', spec: 'hello@^0.4' },
        tag: null,
      },
      upstream_error: null,
      registry: null,
    });
    expect(info.upstream.versions.map((v: { version: string }) => v.version)).toEqual(['0.4.0', '0.1.1', '0.1.0']);
    expect(info.config).toEqual([
      { key: 'token', secret: true, required: true, set: false, source: 'unset', env: 'HELLO_TOKEN', default: null },
      { key: 'mode', secret: false, required: false, set: false, source: 'default', env: null, default: 'fast' },
    ]);

    // The secret set: shown as set, its value nowhere in the output.
    const s = await runCli(['set-secret', 'hello', 'token', '--stdin'], { env: env(), input: SECRET });
    expect(s.code, s.stderr).toBe(0);
    const after = await runCli(['info', 'hello', '--json'], { env: env() });
    expect(jsonOf(after).config[0]).toMatchObject({ key: 'token', set: true, source: 'secrets' });
    const human = await runCli(['info', 'hello'], { env: env() });
    expect(human.code, human.stderr).toBe(0);
    for (const out of [after.stdout, after.stderr, human.stdout, human.stderr]) expect(out).not.toContain(SECRET);
    // Where a set field is set, named by its file as enable names it (not "set (secrets)").
    expect(human.stdout).toContain('token (secret) (required): set (connections.toml) -> $HELLO_TOKEN');
    expect(human.stdout).toContain('mode: unset (default "fast")');
    expect(human.stdout).toContain(`content hash: ${hash}`);
    expect(human.stdout).toContain('hello contributes:'); // the install summary renderer
    expect(human.stdout).toContain('upstream:     wanted 0.1.1, latest 0.4.0: update available: `yep-ext update hello`');
    // A continuation line is indented to the value column, with no label and no lone ":".
    expect(human.stdout).toMatch(/^ {14}0\.4\.0 exists outside \^0\.1: `yep-ext install hello@\^0\.4`$/m);
    expect(human.stdout).not.toMatch(/^:/m);
    const enabled = await runCli(['enable', 'hello', '--config', 'mode=slow'], { env: env() });
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stdout).toMatch(/^ {2}token +secret +required +set \(connections\.toml\)$/m);
    expect(enabled.stdout).toMatch(/^ {2}mode +config +optional +set \(settings\.toml\)$/m);
    const again = await runCli(['info', 'hello'], { env: env() });
    expect(again.stdout).toContain('mode: set (settings.toml)\n');
  });

  it('files changed in the store: the checks report the drift (verify.ok false)', async () => {
    writeFileSync(join(store(), 'hello', 'plugin.json'), manifest('0.1.0').replace('says hello', 'says hi'));
    const r = await runCli(['info', 'hello', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).verify).toMatchObject({ ok: false, problems: [expect.stringMatching(/^hash drift/)] });
  });

  it("a git install whose branch moved: pin = the installed commit, upstream = the ref's new commit", async () => {
    const newRev = repo.commit({ 'README.md': 'moved\n' });
    const r = await runCli(['info', 'gitext', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r)).toMatchObject({
      pin: oldRev,
      source: { type: 'git', rev: oldRev, requested_ref: 'main' },
      upstream: { wanted: newRev, latest: newRev, status: 'update', versions: [] },
    });
  });

  it('a path install: upstream null (local), everything else present', async () => {
    const r = await runCli(['info', 'localext', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const info = jsonOf(r);
    expect(Object.keys(info).sort()).toEqual(INFO_KEYS);
    expect(info).toMatchObject({ installed: true, source: { type: 'path' }, upstream: null, upstream_error: null, registry: null });
    expect((await runCli(['info', 'localext'], { env: env() })).stdout).toContain('local (a path install: edited in place)');
  });

  it('an installed crate named by its crate spec (crates.io:yolop-extension-hello): that installed extension, not "(not installed)"', async () => {
    const byName = jsonOf(await runCli(['info', 'hello', '--json'], { env: env() }));
    const r = await runCli(['info', `crates.io:${HELLO}`, '--json'], { env: env() });
    expect(r.code, r.stdout).toBe(0);
    expect(jsonOf(r)).toEqual(byName);
    expect(byName).toMatchObject({ name: 'hello', installed: true });
    expect((await runCli(['info', `crates.io:${HELLO}`], { env: env() })).stdout).not.toContain('(not installed)');
  });

  it('the directory of a path install, as a path (`info .` inside it, or its path): that installed extension, not "not installed"', async () => {
    const byName = jsonOf(await runCli(['info', 'localext', '--json'], { env: env() }));
    for (const [target, cwd] of [
      ['.', pkgDir],
      [pkgDir, home.root],
      ['./local-ext', home.root],
    ] as const) {
      const r = await runCli(['info', target, '--json'], { env: env(), cwd });
      expect(r.code, `${target}: ${r.stdout}`).toBe(0);
      expect(jsonOf(r)).toEqual(byName);
    }
  });

  it('a crate that is not installed: what the registry lists, and nothing is installed or downloaded', async () => {
    reg.publish({ name: 'yolop-extension-other', vers: '1.0.0', data: fixtureCrate(HELLO, '1.0.0', { publishAs: 'yolop-extension-other' }) });
    reg.publish({ name: 'yolop-extension-other', vers: '1.2.0', data: fixtureCrate(HELLO, '1.2.0', { publishAs: 'yolop-extension-other' }), yanked: true });
    const lock = lockText();
    const downloads = reg.requestsTo('/crates/').length;
    const r = await runCli(['info', 'crates.io:yolop-extension-other', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const info = jsonOf(r);
    expect(Object.keys(info).sort()).toEqual(INFO_KEYS);
    expect(info).toMatchObject({
      installed: false,
      version: null,
      source: null,
      grant: null,
      verify: null,
      upstream: null,
      config: [],
      registry: {
        crate: 'yolop-extension-other',
        latest: '1.0.0',
        versions: [
          { version: '1.2.0', yanked: true },
          { version: '1.0.0', yanked: false },
        ],
      },
    });
    expect(lockText()).toBe(lock);
    expect(readdirSync(store())).not.toContain('other');
    expect(reg.requestsTo('/crates/')).toHaveLength(downloads);
    const human = await runCli(['info', 'other'], { env: env() });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('Install it with `yep-ext install other`');
  });

  it('info and search only read: in a home where nothing was ever installed they leave no config dir or store behind (their index cache included)', async () => {
    const fresh = makeTempHome('yep-info-fresh-');
    try {
      const e = { ...env(), ...fresh.env };
      for (const args of [
        ['info', 'crates.io:yolop-extension-hello', '--json'],
        ['info', 'hello'],
        ['search', 'hello'],
      ]) {
        const r = await runCli(args, { env: e });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        expect(existsSync(fresh.configDir), `${args.join(' ')} created ${fresh.configDir}`).toBe(false);
      }
    } finally {
      fresh.cleanup();
    }
    // Where the store exists, the index cache is kept (the next run revalidates instead of downloading).
    const cached = await runCli(['info', 'crates.io:yolop-extension-hello'], { env: env() });
    expect(cached.code, cached.stderr).toBe(0);
    expect(existsSync(join(store(), '.yep-cache', 'index'))).toBe(true);
  });

  it('a name settings.toml enables but nothing installs: info says yolop cannot load it, as list and verify do (in the registry or not)', async () => {
    const settings = join(home.configDir, 'settings.toml');
    writeFileSync(settings, `${existsSync(settings) ? readFileSync(settings, 'utf8') : ''}\n[[capabilities]]\nref = "ext:ghost"\n`);
    // Not in the registry: the miss says what settings.toml asks of yolop, and how to settle it.
    const miss = await runCli(['info', 'ghost', '--json'], { env: env() });
    expect(miss.code).toBe(3);
    expect(jsonOf(miss).error).toMatchObject({
      code: 'E_NOT_FOUND',
      message: expect.stringMatching(/^The extension "ghost" is not installed, and settings.toml enables it: yolop cannot load it\. No crate named/),
    });
    expect(jsonOf(miss).error.hint).toContain('`yep-ext remove ghost` removes its settings');
    // In the registry: what it lists, and the failing check.
    reg.publish({ name: 'yolop-extension-ghost', vers: '1.0.0', data: fixtureCrate(HELLO, '1.0.0', { publishAs: 'yolop-extension-ghost' }) });
    const listed = await runCli(['info', 'ghost', '--json'], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    expect(jsonOf(listed)).toMatchObject({
      installed: false,
      enabled: true,
      verify: { ok: false, problems: [expect.stringMatching(/^enabled in settings.toml but not installed: yolop cannot load it/)] },
      registry: { crate: 'yolop-extension-ghost' },
    });
    const human = await runCli(['info', 'ghost'], { env: env() });
    expect(human.stdout).toMatch(/checks: +enabled in settings.toml but not installed/);
    expect(human.stdout).toContain('Install it with `yep-ext install ghost`');
  });

  it('not installed and not in the registry: exit 3; a directory that is not installed: exit 3 as on every command, pointing at install --dry-run', async () => {
    const missing = await runCli(['info', 'nosuch', '--json'], { env: env() });
    expect(missing.code).toBe(3);
    expect(jsonOf(missing).error.code).toBe('E_NOT_FOUND');
    const dir = writePackage(join(home.root, 'other-dir'), { name: 'otherdir' });
    const before = { home: homeState(home.configDir), dir: treeBytes(dir) };
    const path = await runCli(['info', dir, '--json'], { env: env() });
    expect(path.code).toBe(3);
    expect(jsonOf(path).error.code).toBe('E_NOT_INSTALLED');
    expect(jsonOf(path).error.hint).toContain(`yep-ext install ${dir} --dry-run`);
    // The same answer as the commands that act on an installed extension give for that directory.
    const remove = await runCli(['remove', dir, '--json'], { env: env() });
    expect([remove.code, jsonOf(remove).error.code, jsonOf(remove).error.message]).toEqual([3, 'E_NOT_INSTALLED', jsonOf(path).error.message]);
    // A directory that is not there: the same exit, and a hint to check the path, not to dry-run it; nothing made.
    const gone = join(home.root, 'no-such-dir');
    const missing2 = await runCli(['info', gone, '--json'], { env: env() });
    expect([missing2.code, jsonOf(missing2).error.code]).toEqual([3, 'E_NOT_INSTALLED']);
    expect(jsonOf(missing2).error.hint).toContain(`There is no directory at ${gone}`);
    expect(jsonOf(missing2).error.hint).not.toContain('--dry-run');
    expect(existsSync(gone)).toBe(false);
    // Neither info nor remove changed the home (store, lock, settings, secrets) or the directory.
    expect({ home: homeState(home.configDir), dir: treeBytes(dir) }).toEqual(before);
  });
});
