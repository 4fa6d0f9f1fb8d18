/**
 * update against the loopback registry: same grant -> silent,
 * a new hook -> refused without a TTY / --yes / --accept, a removed tool -> narrowing
 * applied, --dry-run writes nothing, a failing download keeps the old version working.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { grantFingerprint, grantOf } from '../../src/core/package/grants.js';
import { parseManifest } from '../../src/core/package/manifest-validate.js';
import { fixtureCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { copyHome, trustedTrees } from '../helpers/prepared-home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { killAt, staleLock } from '../helpers/faults.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;

function manifest(version: string, yolop: Record<string, unknown> = {}): string {
  return JSON.stringify({
    name: 'hello',
    version,
    yolop: { protocol_version: '1.0', capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }, { name: 'wave' }], ...yolop },
  });
}
const crateOf = (version: string, yolop: Record<string, unknown> = {}) => fixtureCrate(HELLO, version, { files: { 'plugin.json': manifest(version, yolop) } });
const publish = (version: string, yolop: Record<string, unknown> = {}) => reg.publish({ name: HELLO, vers: version, data: crateOf(version, yolop) });
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const lockText = () => readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8');
/** hello's lock entry, parsed as the host parses extensions.lock (TOML). */
const lockEntry = () => (parse(lockText()) as { extensions: Array<Record<string, any>> }).extensions.find((e) => e.name === 'hello');
/** The state an update to `version` claims: lock entry, link and the manifest the host reads all at `version`. */
async function expectAt(version: string): Promise<void> {
  const entry = lockEntry();
  const tree = join(home.configDir, 'extensions', 'hello');
  expect(entry).toMatchObject({ version, source: { type: 'crate', version } });
  expect(entry?.content_hash).toBe(await contentHash(tree));
  expect(JSON.parse(readFileSync(join(tree, 'plugin.json'), 'utf8'))).toMatchObject({ name: 'hello', version });
}
const storeState = () =>
  JSON.stringify({
    lock: lockText(),
    files: readdirSync(join(home.configDir, 'extensions', 'hello')).sort(),
    manifest: readFileSync(join(home.configDir, 'extensions', 'hello', 'plugin.json'), 'utf8'),
  });

let restoreRegistry: () => void;
let installed: TempHome;
// One registry and one install of hello@^1 (1.0.0) for the file: each test starts from a copy
// of the home that install left (prepared-home.ts copyHome), against the registry as it served
// 1.0.0 alone (what a test publishes or faults is gone for the next).
beforeAll(async () => {
  reg = await startRegistry();
  installed = home = makeTempHome();
  publish('1.0.0');
  restoreRegistry = reg.checkpoint();
  const r = await runCli(['install', 'hello@^1'], { env: env() });
  expect(r.code, r.stderr).toBe(0);
  expect(trustedTrees(installed).map((t) => t.name)).toEqual(['hello']);
});
afterAll(async () => {
  await reg.close();
  installed.cleanup();
});
beforeEach(() => {
  restoreRegistry();
  home = makeTempHome();
  copyHome(installed, home);
});
afterEach(() => home.cleanup());

describe('update from crates.io', () => {
  it('a patch release with the same grant updates silently', async () => {
    publish('1.0.1');
    const r = await runCli(['update', 'hello', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const item = jsonOf(r).updates[0];
    expect(item).toMatchObject({ status: 'updated', consent_needed: false, to: { version: '1.0.1' } });
    expect(item.diff.changes).toEqual([]);
    expect(lockText()).toContain('version = "1.0.1"');
    await expectAt('1.0.1');
    expect(lockText()).toContain('requirement = "^1"');
  });

  it('a crate not named yolop-extension-<name>: the hint outside the requirement names that crate (update and outdated)', async () => {
    const custom = (version: string) =>
      reg.publish({
        name: 'custom-name',
        vers: version,
        data: fixtureCrate(HELLO, version, {
          publishAs: 'custom-name',
          files: { 'plugin.json': manifest(version).replace('"name":"hello"', '"name":"custom"') },
        }),
      });
    custom('1.0.0');
    expect((await runCli(['install', 'crates.io:custom-name@^1'], { env: env() })).code).toBe(0);
    custom('2.0.0');
    const r = await runCli(['update', 'custom'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    // Not `custom@2`: that is the crate yolop-extension-custom, another package.
    expect(r.stdout).toContain('custom is up to date. 2.0.0 exists outside ^1: `yep-ext install crates.io:custom-name@^2`');
    const json = await runCli(['update', 'custom', '--json'], { env: env() });
    expect(jsonOf(json).updates[0].newer_outside).toEqual({ version: '2.0.0', requirement: '^1', spec: 'crates.io:custom-name@^2' });
    const out = await runCli(['outdated', '--json'], { env: env() });
    expect(jsonOf(out).outdated.find((i: { name: string }) => i.name === 'custom')).toMatchObject({
      status: 'beyond',
      hint: 'yep-ext install crates.io:custom-name@^2',
    });
  });

  it('up to date within the requirement names the newer release outside it, from the same index request', async () => {
    publish('2.1.0');
    reg.requests.length = 0;
    const r = await runCli(['update', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('hello is up to date. 2.1.0 exists outside ^1: `yep-ext install hello@^2`');
    expect(reg.requestsTo('/crates/')).toEqual([]);
    expect(reg.requests.filter((q) => q.url.includes(HELLO))).toHaveLength(1);
    const json = await runCli(['update', 'hello', '--json'], { env: env() });
    expect(jsonOf(json).updates[0]).toMatchObject({ status: 'up-to-date', newer_outside: { version: '2.1.0', requirement: '^1', spec: 'hello@^2' } });
    expect(lockText()).toContain('version = "1.0.0"');
  });

  it('an update names both versions', async () => {
    publish('1.0.1');
    const old = lockEntry();
    expect(old).toMatchObject({ version: '1.0.0', content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const r = await runCli(['update', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Updated hello: 1.0.0 → 1.0.1.');
    // The message is a claim: the lock entry, the store link and the tree the host reads all moved to 1.0.1.
    const entry = lockEntry();
    const tree = join(home.configDir, 'extensions', 'hello');
    expect(entry).toMatchObject({
      version: '1.0.1',
      source: { type: 'crate', version: '1.0.1', cksum: createHash('sha256').update(crateOf('1.0.1')).digest('hex') },
    });
    expect(entry?.content_hash).not.toBe(old?.content_hash);
    expect(entry?.content_hash).toBe(await contentHash(tree));
    expect(readlinkSync(tree)).toBe(`.yep-packages/hello.${String(entry?.content_hash).slice('sha256:'.length, 'sha256:'.length + 16)}`);
    expect(JSON.parse(readFileSync(join(tree, 'plugin.json'), 'utf8'))).toMatchObject({ name: 'hello', version: '1.0.1' });
  });

  it('no newer release: up to date with one index request and no download', async () => {
    reg.requests.length = 0;
    const r = await runCli(['update', '--all'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('hello is up to date');
    expect(reg.requestsTo('/crates/')).toEqual([]);
  });

  it('an entry the host wrote (four fields, no grant) with no newer release: up to date, and the installed grant is recorded', async () => {
    const store = join(home.configDir, 'extensions');
    const e = lockEntry() as Record<string, any>;
    // The host's lock writer: name, content_hash, version and a three-key source, nothing else.
    const hostEntry = { name: 'hello', content_hash: e.content_hash, version: e.version, source: { type: 'crate', crate_name: HELLO, version: '1.0.0' } };
    writeFileSync(join(store, 'extensions.lock'), stringify({ extensions: [hostEntry] }));
    rmSync(join(store, '.yep-grants'), { recursive: true, force: true });
    const r = await runCli(['update', 'hello', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).updates[0]).toMatchObject({ status: 'up-to-date' });
    const manifestGrant = grantOf(parseManifest(readFileSync(join(store, 'hello', 'plugin.json'), 'utf8'), 'hello'));
    expect(lockEntry()).toMatchObject({ ...hostEntry, grant: grantFingerprint(manifestGrant) });
    expect(JSON.parse(readFileSync(join(store, '.yep-grants', 'hello.json'), 'utf8'))).toEqual(manifestGrant);
  });

  it('an update killed before the lock write: list says the update was interrupted (not drift), and recovery says it rolled back an update', async () => {
    publish('1.0.1');
    await killAt('place:before-lock', ['update', 'hello'], env(), join(home.root, 'paused'));
    staleLock(home);
    // The store already switched to 1.0.1, the lock still pins 1.0.0.
    expect(lockEntry()?.version).toBe('1.0.0');
    expect(JSON.parse(readFileSync(join(home.configDir, 'extensions', 'hello', 'plugin.json'), 'utf8')).version).toBe('1.0.1');
    const item = jsonOf(await runCli(['list', '--json'], { env: env() })).extensions.find((e: { name: string }) => e.name === 'hello');
    expect(item.problems).toEqual([expect.stringContaining('its update was interrupted')]);
    const r = await runCli(['enable', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Recovered: rolled back an interrupted update of hello');
    await expectAt('1.0.0');
    const after = jsonOf(await runCli(['list', '--json'], { env: env() })).extensions.find((e: { name: string }) => e.name === 'hello');
    expect(after.problems).toEqual([]);
  });

  it('no newer release over a drifted or missing tree: not "up to date" (exit 5, the damage named, nothing changed); after the repair, up to date', async () => {
    const tree = join(home.configDir, 'extensions', 'hello');
    const before = lockText();
    writeFileSync(join(tree, 'plugin.json'), manifest('1.0.0', { hooks: [{ event: 'pre_tool_use' }] }));
    const edited = readFileSync(join(tree, 'plugin.json'), 'utf8');
    for (const args of [
      ['update', 'hello'],
      ['update', '--all'],
      ['update', 'hello', '--dry-run'],
    ]) {
      const r = await runCli(args, { env: env() });
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(5);
      expect(r.stdout).not.toContain('up to date');
      expect(r.stderr).toContain('edited plugin.json');
      expect(r.stderr).toContain('yep-ext install --force hello');
      expect(lockText()).toBe(before);
      expect(readFileSync(join(tree, 'plugin.json'), 'utf8')).toBe(edited);
    }
    const json = await runCli(['update', '--all', '--json'], { env: env() });
    expect(json.code).toBe(5);
    expect(jsonOf(json).error).toMatchObject({ code: 'E_INTEGRITY' });

    // The store entry gone (the host loads nothing): the same.
    rmSync(tree);
    const gone = await runCli(['update', 'hello'], { env: env() });
    expect(gone.code).toBe(5);
    expect(gone.stderr).toContain('not in the store');
    expect(lockText()).toBe(before);

    expect((await runCli(['install', '--force', 'hello'], { env: env() })).code).toBe(0);
    const ok = await runCli(['update', 'hello'], { env: env() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('hello is up to date');
    await expectAt('1.0.0');
  });

  it('a release adding a hook: refused without a TTY (exit 8, store unchanged), wrong --accept refused, right --accept applied', async () => {
    publish('1.1.0', { hooks: [{ event: 'pre_tool_use', tool_name_glob: '*' }] });
    const before = storeState();
    const refused = await runCli(['update', 'hello'], { env: env() });
    expect(refused.code).toBe(8);
    expect(refused.stdout).toMatch(/\+ hook pre_tool_use on EVERY tool/);
    expect(storeState()).toBe(before);

    // A dry run stages outside the store: not even .yep-staging is touched (its mtime would change).
    const staging = join(home.configDir, 'extensions', '.yep-staging');
    const stagingTime = statSync(staging).mtimeMs;
    const plan = jsonOf(await runCli(['update', 'hello', '--dry-run', '--json'], { env: env() }));
    expect(plan.updates[0]).toMatchObject({ status: 'would-update', consent_needed: true });
    expect(storeState()).toBe(before);
    expect(statSync(staging).mtimeMs).toBe(stagingTime);

    const wrong = await runCli(['update', 'hello', '--accept', `sha256:${'1'.repeat(64)}`], { env: env() });
    expect(wrong.code).toBe(8);
    expect(wrong.stderr).toContain(`the fingerprint you passed (sha256:111111111111…) is not the new grant's`);
    expect(wrong.stderr).toContain(`--accept ${plan.updates[0].to.grant}`);
    expect(storeState()).toBe(before);

    const right = await runCli(['update', 'hello', '--accept', plan.updates[0].to.grant], { env: env() });
    expect(right.code, right.stderr).toBe(0);
    expect(lockText()).toContain('version = "1.1.0"');
    expect(lockText()).toContain(`grant = "${plan.updates[0].to.grant}"`);
    await expectAt('1.1.0');
  });

  it('a release adding a hook is accepted with --yes', async () => {
    publish('1.1.0', { hooks: [{ event: 'post_tool_use' }] });
    const r = await runCli(['update', 'hello', '--yes'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(lockText()).toContain('version = "1.1.0"');
    await expectAt('1.1.0');
  });

  it('a release removing a tool updates and shows the narrowing', async () => {
    publish('1.2.0', { tools: [{ name: 'greet' }] });
    const r = await runCli(['update', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/- tool wave/);
    expect(lockText()).toContain('version = "1.2.0"');
    await expectAt('1.2.0');
  });

  it.each([
    ['a failing download', { kind: 'status', status: 500 } as const],
    ['a checksum mismatch', { kind: 'corrupt' } as const],
  ])('%s leaves the old version installed and working', async (_label, fault) => {
    publish('1.0.1');
    reg.fault(/\/crates\/.*1\.0\.1/, fault);
    const before = storeState();
    const r = await runCli(['update', 'hello'], { env: env() });
    expect(r.code).not.toBe(0);
    expect(storeState()).toBe(before);
    const list = jsonOf(await runCli(['list', '--json'], { env: env() }));
    expect(list.extensions[0]).toMatchObject({ name: 'hello', version: '1.0.0', problems: [] });
  });
});
