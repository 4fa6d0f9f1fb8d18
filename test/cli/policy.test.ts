/**
 * The administrator's policy file through the CLI: each rule refuses
 * (exit 13, E_POLICY, rule and item in --json, nothing placed) and admits; the
 * user's file cannot loosen the system one; a malformed file names file and line;
 * `policy check` evaluates the store, `enable` and `install --frozen` refuse;
 * `policy init --from-lock` admits exactly the lock. YEP_EXT_POLICY points at a
 * temp file (test/helpers/home.ts), never /etc.
 */
import { existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { makePackage } from '../helpers/ext-package.js';
import { GIT_TEST_ENV, fixtureFiles, makeRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { pubtimeAgo, startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const DAY = 86_400_000;
let reg: TestRegistry;
let home: TempHome;

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0'), extra: { pubtime: pubtimeAgo(10 * DAY) } });
  reg.publish({ name: HELLO, vers: '0.4.1', data: fixtureCrate(HELLO, '0.4.1'), extra: { pubtime: pubtimeAgo(3_600_000) } });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
  mkdirSync(home.configDir, { recursive: true });
});
afterEach(() => home.cleanup());

const env = (extra: Record<string, string> = {}) => ({ ...home.env, ...GIT_TEST_ENV, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', ...extra });
const systemPolicy = (doc: Record<string, unknown> | string) => writeFileSync(home.env.YEP_EXT_POLICY!, typeof doc === 'string' ? doc : stringify(doc));
const userPolicyFile = () => join(home.configDir, 'yep-ext-policy.toml');
const userPolicy = (doc: Record<string, unknown>) => writeFileSync(userPolicyFile(), stringify(doc));
const store = (name: string) => join(home.configDir, 'extensions', name);
const lockFile = () => join(home.configDir, 'extensions', 'extensions.lock');
const lockNames = () =>
  existsSync(lockFile()) ? ((parse(readFileSync(lockFile(), 'utf8')) as { extensions?: { name: string }[] }).extensions?.map((e) => e.name) ?? []) : [];
const pkg = (name: string, options: Parameters<typeof makePackage>[2] = {}) => makePackage(join(home.root, 'src'), name, options);

async function install(args: string[], extra: Record<string, string> = {}) {
  return runCli(['install', ...args, '--json'], { env: env(extra) });
}

/** The install was refused by `rule` naming `item`, and nothing of `name` was placed. */
function expectRefused(r: Awaited<ReturnType<typeof install>>, rule: string, item: string, name?: string) {
  expect(r.code, r.stdout + r.stderr).toBe(13);
  const err = jsonOf(r).error;
  expect(err.code).toBe('E_POLICY');
  expect(err.details.rule).toBe(rule);
  expect(err.details.item).toBe(item);
  if (name) {
    expect(existsSync(store(name))).toBe(false);
    expect(lockNames()).not.toContain(name);
  }
}

describe('repair is ruled too', () => {
  it('install --force of an installed crate the policy now refuses: exit 13, the store entry and the lock untouched', async () => {
    const first = await install(['hello@0.3.0']);
    expect(first.code, first.stderr).toBe(0);
    const lockBefore = readFileSync(lockFile(), 'utf8');
    const linkBefore = readlinkSync(store('hello'));
    systemPolicy({ names: { deny: ['hello'] } });
    expectRefused(await install(['--force', 'hello']), 'names.deny', 'hello');
    expect(readFileSync(lockFile(), 'utf8')).toBe(lockBefore);
    expect(readlinkSync(store('hello'))).toBe(linkBefore);
  });
});

describe('each rule refuses and admits', () => {
  it('sources.kinds', async () => {
    const dir = pkg('alpha');
    systemPolicy({ sources: { kinds: ['crate'] } });
    expectRefused(await install([dir]), 'sources.kinds', 'path', 'alpha');
    systemPolicy({ sources: { kinds: ['crate', 'path'] } });
    const ok = await install([dir]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockNames()).toEqual(['alpha']);
  });

  it('sources.index_urls', async () => {
    systemPolicy({ sources: { index_urls: ['https://index.crates.io/'] } });
    expectRefused(await install(['hello']), 'sources.index_urls', reg.indexUrl, 'hello');
    systemPolicy({ sources: { index_urls: [reg.indexUrl] } });
    const ok = await install(['hello']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockNames()).toEqual(['hello']);
  });

  it('sources.git_hosts', async () => {
    const repo = makeRepo(join(home.root, 'repos'), { files: fixtureFiles('gitext') });
    repo.commit();
    systemPolicy({ sources: { git_hosts: ['github.com'] } });
    expectRefused(await install([repo.url]), 'sources.git_hosts', 'file', 'gitext');
    systemPolicy({ sources: { git_hosts: ['github.com', 'file'] } });
    const ok = await install([repo.url]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockNames()).toEqual(['gitext']);
  });

  it('names.allow and names.deny', async () => {
    systemPolicy({ names: { allow: ['team-*'] } });
    expectRefused(await install([pkg('alpha')]), 'names.allow', 'alpha', 'alpha');
    expect((await install([pkg('team-one')])).code).toBe(0);
    systemPolicy({ names: { allow: ['team-*'], deny: ['*-beta'] } });
    expectRefused(await install([pkg('team-beta')]), 'names.deny', 'team-beta', 'team-beta');
    expect(lockNames()).toEqual(['team-one']);
  });

  it('cooldown.min_age: the older version is taken, and --allow-fresh cannot waive the policy', async () => {
    systemPolicy({ cooldown: { min_age: '3d' } });
    const r = await install(['hello']);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).installed[0].source.version).toBe('0.3.0');
    expect(jsonOf(r).installed[0].notes.join('\n')).toMatch(/0\.4\.1 is 1 h old; cooldown 3 d \(policy min_age/);
    const fresh = await install(['hello@0.4.1', '--allow-fresh', '--yes']);
    expect(fresh.code).toBe(13);
    expect(jsonOf(fresh).error.details).toMatchObject({ rule: 'min_age', item: `${HELLO}@0.4.1` });
    expect(readFileSync(lockFile(), 'utf8')).toContain('version = "0.3.0"');
    systemPolicy({ cooldown: { min_age: '30m' } });
    const later = await install(['hello@0.4.1', '--yes']);
    expect(later.code, later.stderr).toBe(0);
    expect(readFileSync(lockFile(), 'utf8')).toContain('version = "0.4.1"');
  });

  it('grant.hooks: none, scoped, any', async () => {
    const scoped = pkg('scoped', { yolop: { hooks: [{ event: 'pre_tool_use', tool_name_glob: 'bash*' }] } });
    const all = pkg('watcher', { yolop: { hooks: [{ event: 'pre_tool_use', tool_name_glob: '*' }] } });
    systemPolicy({ grant: { hooks: 'none' } });
    expectRefused(await install([scoped]), 'grant.hooks', 'pre_tool_use:bash*', 'scoped');
    systemPolicy({ grant: { hooks: 'scoped' } });
    expect((await install([scoped])).code).toBe(0);
    expectRefused(await install([all]), 'grant.hooks', 'pre_tool_use:*', 'watcher');
    systemPolicy({ grant: { hooks: 'any' } });
    expect((await install([all])).code).toBe(0);
    expect(lockNames().sort()).toEqual(['scoped', 'watcher']);
  });

  it.each([
    ['mcp_servers', { mcpServers: { gh: { command: 'gh-mcp' } } }, 'gh'],
    ['prompts', { prompt: true }, 'prompt'],
    ['dynamic_prompts', { dynamic_prompt: true }, 'dynamic prompt'],
    ['commands', { commands: [{ name: 'hello' }] }, 'hello'],
    ['secrets', { config_schema: { properties: { token: { type: 'string', secret: true } } } }, 'token'],
  ] as const)('grant.%s', async (facet, yolop, item) => {
    const dir = pkg('facet', { yolop: yolop as Record<string, unknown> });
    systemPolicy({ grant: { [facet]: false } });
    expectRefused(await install([dir]), `grant.${facet}`, item, 'facet');
    // A package without it is admitted under the same policy; with the switch on, this one too.
    expect((await install([pkg('plain')])).code).toBe(0);
    systemPolicy({ grant: { [facet]: true } });
    expect((await install([dir])).code).toBe(0);
    expect(lockNames().sort()).toEqual(['facet', 'plain']);
  });

  it('grant.server_outside_package', async () => {
    const outside = pkg('outside', { command: 'sh' });
    systemPolicy({ grant: { server_outside_package: false } });
    expectRefused(await install([outside]), 'grant.server_outside_package', 'sh', 'outside');
    expect((await install([pkg('inside')])).code).toBe(0);
    systemPolicy({ grant: { server_outside_package: true } });
    expect((await install([outside])).code).toBe(0);
  });

  it('grant.server_outside_package: a path install whose bin/<command> is a symlink leading out of the package runs that outside program: install, policy check and enable refuse it; verify names the link', async () => {
    const linked = pkg('linked');
    // A path install may hold symlinks (crates and git trees may not); the content hash skips them.
    rmSync(join(linked, 'bin', 'linked'));
    symlinkSync('/bin/sh', join(linked, 'bin', 'linked'));
    const real = realpathSync('/bin/sh');
    systemPolicy({ grant: { server_outside_package: false } });
    const refused = await install([linked]);
    expectRefused(refused, 'grant.server_outside_package', 'linked', 'linked');
    expect(jsonOf(refused).error.message).toContain(`bin/linked -> ${real}`);
    // Installed before the policy said so (or re-pointed since): policy check and enable rule what is on disk.
    systemPolicy({ grant: { server_outside_package: true } });
    expect((await install([linked])).code).toBe(0);
    const v = jsonOf(await runCli(['verify', '--json'], { env: env() }));
    expect(v.extensions[0].command).toEqual({
      ok: true,
      detail: `bin/linked is a symlink to ${real}, outside the package (not shipped in it, not covered by its content hash)`,
    });
    systemPolicy({ grant: { server_outside_package: false } });
    const check = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(check.code, check.stdout).toBe(13);
    expect(jsonOf(check).error.details.violations).toEqual([expect.objectContaining({ rule: 'grant.server_outside_package', item: 'linked' })]);
    const enable = await runCli(['enable', 'linked', '--json'], { env: env() });
    expect(enable.code).toBe(13);
    expect(existsSync(join(home.configDir, 'settings.toml')) ? readFileSync(join(home.configDir, 'settings.toml'), 'utf8') : '').not.toContain('ext:linked');
  });

  it('binaries.require_in_crate (on the lock record: policy check and enable)', async () => {
    expect((await install(['hello'])).code).toBe(0);
    // What a release-host-verified prebuilt leaves in the lock (docs/binaries.md).
    const lock = parse(readFileSync(lockFile(), 'utf8')) as { extensions: { source: Record<string, unknown> }[] };
    Object.assign(lock.extensions[0]!.source, {
      binary_sha256: 'a'.repeat(64),
      binary_file_sha256: 'a'.repeat(64),
      binary_source: 'prebuilt',
      binary_digest_source: 'release-host',
    });
    writeFileSync(lockFile(), stringify(lock));
    systemPolicy({ binaries: { require_in_crate: true } });
    const check = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(check.code).toBe(13);
    expect(jsonOf(check).error.details.violations).toEqual([expect.objectContaining({ rule: 'binaries.require_in_crate', item: 'release-host' })]);
    const en = await runCli(['enable', 'hello', '--json'], { env: env() });
    expect(en.code).toBe(13);
    expect(existsSync(join(home.configDir, 'settings.toml')) ? readFileSync(join(home.configDir, 'settings.toml'), 'utf8') : '').not.toMatch(
      /enabled\s*=\s*true/,
    );
    Object.assign(lock.extensions[0]!.source, { binary_digest_source: 'crate' });
    writeFileSync(lockFile(), stringify(lock));
    const ok = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(ok.code, ok.stdout).toBe(0);
    expect(jsonOf(ok)).toMatchObject({ checked: 1, violations: [] });
  });
});

describe('enable refused over an extension settings.toml already turns on', () => {
  it('the refusal says it stays enabled (the host keeps loading it) and names disable; settings.toml untouched; after disable, the plain refusal', async () => {
    expect((await install([pkg('alpha')])).code).toBe(0);
    const settings = join(home.configDir, 'settings.toml');
    const text = '# mine\n[[capabilities]]\nref = "ext:alpha"\n';
    writeFileSync(settings, text);
    systemPolicy({ sources: { kinds: ['crate'] } });
    const r = await runCli(['enable', 'alpha'], { env: env() });
    expect(r.code).toBe(13);
    expect(r.stderr).toContain('alpha stays enabled: settings.toml already turns it on, and yolop loads it.');
    expect(r.stderr).toContain('`yep-ext disable alpha` turns it off.');
    expect(readFileSync(settings, 'utf8')).toBe(text);
    const j = jsonOf(await runCli(['enable', 'alpha', '--json'], { env: env() }));
    expect(j.error).toMatchObject({ code: 'E_POLICY', details: { rule: 'sources.kinds', enabled: true } });
    // The host's reading of what was left: the last ext:alpha entry does not say enabled = false.
    expect((parse(readFileSync(settings, 'utf8')) as { capabilities: { ref: string; enabled?: boolean }[] }).capabilities.at(-1)).toEqual({ ref: 'ext:alpha' });

    expect((await runCli(['disable', 'alpha'], { env: env() })).code).toBe(0);
    const off = await runCli(['enable', 'alpha'], { env: env() });
    expect(off.code).toBe(13);
    expect(off.stderr).not.toContain('stays enabled');
  });
});

describe('a store package no lock entry pins (the host loads it all the same)', () => {
  it('policy check counts and rules it, enable refuses it; its source cannot meet a sources rule; nothing written', async () => {
    expect((await install([pkg('alpha')])).code).toBe(0);
    // Placed by hand: the host discovers <store>/stray/plugin.json, no lock entry pins it.
    makePackage(join(home.configDir, 'extensions'), 'stray', { args: ['--name', 'stray'] });
    expect(lockNames()).toEqual(['alpha']);
    const settings = join(home.configDir, 'settings.toml');

    systemPolicy({ names: { allow: ['alpha'] } });
    const check = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(check.code, check.stdout).toBe(13);
    expect(jsonOf(check).error.details).toMatchObject({ checked: 2, violations: [{ rule: 'names.allow', item: 'stray' }] });
    const enable = await runCli(['enable', 'stray', '--json'], { env: env() });
    expect(enable.code, enable.stdout).toBe(13);
    expect(jsonOf(enable).error.details).toMatchObject({ rule: 'names.allow', item: 'stray' });
    expect(existsSync(settings)).toBe(false);

    // No lock entry records its origin: a policy that restricts sources cannot admit it.
    systemPolicy({ sources: { kinds: ['path'] } });
    const kinds = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(kinds.code, kinds.stdout).toBe(13);
    expect(jsonOf(kinds).error.details.violations).toEqual([expect.objectContaining({ rule: 'sources.kinds', item: 'unlocked' })]);
    expect((await runCli(['enable', 'stray'], { env: env() })).code).toBe(13);
    expect(existsSync(settings)).toBe(false);

    // Rules it meets: admitted, and counted.
    systemPolicy({ names: { allow: ['alpha', 'stray'] } });
    const ok = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(ok.code, ok.stdout).toBe(0);
    expect(jsonOf(ok)).toMatchObject({ checked: 2, violations: [] });
    expect((await runCli(['enable', 'stray'], { env: env() })).code).toBe(0);
    expect(lockNames()).toEqual(['alpha']);
  });
});

describe('tighten-only merge', () => {
  it('the user file cannot loosen the system file', async () => {
    const dir = pkg('watcher', { yolop: { hooks: [{ event: 'pre_tool_use', tool_name_glob: '*' }] } });
    systemPolicy({ sources: { kinds: ['crate'] }, grant: { hooks: 'none' }, names: { deny: ['watcher'] } });
    userPolicy({ sources: { kinds: ['crate', 'path'] }, grant: { hooks: 'any' }, names: { allow: ['*'], deny: [] } });
    const r = await install([dir]);
    expectRefused(r, 'sources.kinds', 'path', 'watcher');
    // Drop the system's kind rule: the hook and deny rules still hold against the user's looser ones.
    systemPolicy({ grant: { hooks: 'none' }, names: { deny: ['watcher'] } });
    const r2 = await install([dir]);
    expect(r2.code).toBe(13);
    expect(
      jsonOf(r2)
        .error.details.violations.map((v: { rule: string }) => v.rule)
        .sort(),
    ).toEqual(['grant.hooks', 'names.deny']);
    expect(lockNames()).toEqual([]);
  });

  it('the user file can tighten', async () => {
    userPolicy({ names: { deny: ['alpha'] } });
    expectRefused(await install([pkg('alpha')]), 'names.deny', 'alpha', 'alpha');
  });

  it('a malformed file is an error naming the file and line, never ignored', async () => {
    systemPolicy('[sources]\nkinds = ["crate"]\n\n[grant]\nhooks = "sometimes"\n');
    const r = await install([pkg('alpha')]);
    expect(r.code).toBe(7);
    expect(jsonOf(r).error.message).toContain(`${home.env.YEP_EXT_POLICY} is malformed (line 5)`);
    writeFileSync(userPolicyFile(), '[names]\nallow = ["a"]\nunknown_rule = true\n');
    systemPolicy({});
    const u = await install([pkg('alpha')]);
    expect(u.code).toBe(7);
    expect(jsonOf(u).error.message).toContain(`${userPolicyFile()} is malformed (line 3)`);
    writeFileSync(userPolicyFile(), '[names\n');
    const t = await install([pkg('alpha')]);
    expect(jsonOf(t).error.message).toMatch(/is malformed \(line 1\): invalid TOML/);
    expect(lockNames()).toEqual([]);
  });
});

describe('policy init --from-lock', () => {
  it('admits exactly the locked set and refuses anything else', async () => {
    const a = pkg('alpha');
    expect((await install([a])).code).toBe(0);
    expect((await install(['hello@0.3.0'])).code).toBe(0);
    const init = await runCli(['policy', 'init', '--from-lock', '--json'], { env: env() });
    expect(init.code, init.stderr).toBe(0);
    expect(jsonOf(init)).toMatchObject({ path: userPolicyFile(), entries: 2 });
    const check = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(check.code, check.stdout).toBe(0);
    expect(jsonOf(check)).toMatchObject({ checked: 2, violations: [] });
    // Exactly the lock: a frozen install from it is admitted ...
    const exported = join(home.root, 'exported.lock');
    expect((await runCli(['lock', 'export', exported], { env: env() })).code).toBe(0);
    const frozen = await runCli(['install', '--frozen', '--lockfile', exported, '--json'], { env: env() });
    expect(frozen.code, frozen.stdout).toBe(0);
    // ... anything else is refused: another name, another version, changed content.
    expectRefused(await install([pkg('beta')]), 'names.allow', 'beta', 'beta');
    const newer = await install(['hello@0.4.1', '--yes']);
    expect(newer.code).toBe(13);
    expect(jsonOf(newer).error.details.rule).toBe('pins');
    expect(readFileSync(lockFile(), 'utf8')).toContain('version = "0.3.0"');
    writeFileSync(join(a, 'README.md'), 'changed\n');
    const up = await runCli(['update', 'alpha', '--json'], { env: env() });
    expect(up.code).toBe(13);
    expect(jsonOf(up).error.details.rule).toBe('pins');
    // The file policy init wrote is the user's own: the hint says to change it there, not to ask an administrator.
    expect(jsonOf(up).error.hint).toContain(`The policy in ${userPolicyFile()} does not admit it (docs/policy.md). That is your own policy file`);
    expect(jsonOf(up).error.hint).not.toContain('administrator');
    // The same rule in the system file is the administrator's.
    writeFileSync(home.env.YEP_EXT_POLICY!, readFileSync(userPolicyFile(), 'utf8'));
    const upSystem = await runCli(['update', 'alpha', '--json'], { env: env() });
    expect(upSystem.code).toBe(13);
    expect(jsonOf(upSystem).error.hint).toContain(`The policy in ${home.env.YEP_EXT_POLICY} does not admit it (docs/policy.md). Ask your administrator`);
    // A second init does not overwrite without --force.
    expect((await runCli(['policy', 'init', '--from-lock'], { env: env() })).code).toBe(7);
  });

  it('policy init with no flag is --from-lock, its only mode: the same file, byte for byte', async () => {
    expect((await install([pkg('alpha')])).code).toBe(0);
    const bare = await runCli(['policy', 'init', '--output', join(home.root, 'bare.toml')], { env: env() });
    expect(bare.code, bare.stderr).toBe(0);
    const flagged = await runCli(['policy', 'init', '--from-lock', '--output', join(home.root, 'flagged.toml')], { env: env() });
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(readFileSync(join(home.root, 'bare.toml'), 'utf8')).toBe(readFileSync(join(home.root, 'flagged.toml'), 'utf8'));
    expect(readFileSync(join(home.root, 'bare.toml'), 'utf8')).toMatch(/^\[pins\]$/m);
  });

  it('policy check grades pins on the bytes the host would load: an edited path install or a store tree changed by hand is a violation, not "admitted"', async () => {
    const a = pkg('alpha');
    expect((await install([a])).code).toBe(0);
    expect((await install(['hello@0.3.0'])).code).toBe(0);
    expect((await runCli(['policy', 'init', '--from-lock'], { env: env() })).code).toBe(0);
    expect((await runCli(['policy', 'check', '--json'], { env: env() })).code).toBe(0);
    const lockBefore = readFileSync(lockFile(), 'utf8');
    writeFileSync(join(a, 'README.md'), 'edited in place\n');
    writeFileSync(join(store('hello'), 'README.md'), 'changed by hand\n');
    const check = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(check.code, check.stdout).toBe(13);
    const violations = jsonOf(check).error.details.violations as { rule: string; item: string }[];
    expect(violations.map((v) => [v.rule, v.item.split('@')[0]]).sort()).toEqual([
      ['pins', 'alpha'],
      ['pins', 'hello'],
    ]);
    // Nothing was changed: the lock still records what was pinned.
    expect(readFileSync(lockFile(), 'utf8')).toBe(lockBefore);
    // enable grades the same bytes: refused, and settings.toml is not written.
    const en = await runCli(['enable', 'alpha', '--json'], { env: env() });
    expect(en.code, en.stdout).toBe(13);
    expect(jsonOf(en).error.details.rule).toBe('pins');
    expect(existsSync(join(home.configDir, 'settings.toml')) ? readFileSync(join(home.configDir, 'settings.toml'), 'utf8') : '').not.toContain('ext:alpha');
  });

  it('no lock at all (a home where nothing was installed, a mistyped --lockfile, a file that is not a lock): exit 3 or 7 and no policy written, never a deny-all policy reported as written', async () => {
    // The config dir exists (beforeEach) but the store has no lock.
    const none = await runCli(['policy', 'init', '--from-lock', '--json'], { env: env() });
    expect(none.code, none.stdout).toBe(3);
    expect(jsonOf(none).error.code).toBe('E_NOT_FOUND');
    expect(jsonOf(none).error.message).toContain(lockFile());
    expect(existsSync(userPolicyFile())).toBe(false);
    const typo = await runCli(['policy', 'init', '--from-lock', '--lockfile', join(home.root, 'nope.lock'), '--json'], { env: env() });
    expect(typo.code, typo.stdout).toBe(3);
    expect(existsSync(userPolicyFile())).toBe(false);
    const cargo = join(home.root, 'Cargo.toml');
    writeFileSync(cargo, '[package]\nname = "x"\nversion = "0.1.0"\n');
    const notLock = await runCli(['policy', 'init', '--from-lock', '--lockfile', cargo, '--json'], { env: env() });
    expect(notLock.code, notLock.stdout).toBe(7);
    expect(existsSync(userPolicyFile())).toBe(false);
    // A lock that exists and pins nothing (what removing the last extension leaves): written, with a warning.
    expect((await install([pkg('alpha')])).code).toBe(0);
    expect((await runCli(['remove', 'alpha'], { env: env() })).code).toBe(0);
    expect(existsSync(lockFile())).toBe(true);
    const empty = await runCli(['policy', 'init', '--from-lock'], { env: env() });
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stderr).toContain('pins no extensions');
    expect((parse(readFileSync(userPolicyFile(), 'utf8')) as { names: { allow: string[] } }).names.allow).toEqual([]);
  });

  it('a store moved by YOLOP_EXTENSIONS_DIR and no config dir yet: the default policy file is written (the config dir created), not E_STATE ENOENT', async () => {
    const storeDir = join(home.root, 'elsewhere-store');
    const configDir = join(home.root, 'fresh-config');
    const e = env({ YOLOP_EXTENSIONS_DIR: storeDir, YOLOP_CONFIG_DIR: configDir });
    expect((await runCli(['install', pkg('alpha'), '--json'], { env: e })).code).toBe(0);
    expect(existsSync(configDir)).toBe(false);
    const r = await runCli(['policy', 'init', '--from-lock', '--json'], { env: e });
    expect(r.code, r.stdout).toBe(0);
    const file = join(configDir, 'yep-ext-policy.toml');
    expect(jsonOf(r)).toMatchObject({ path: file, entries: 1 });
    expect((parse(readFileSync(file, 'utf8')) as { names: { allow: string[] } }).names.allow).toEqual(['alpha']);
  });

  it('install --frozen refuses a lockfile the policy does not admit, before fetching', async () => {
    expect((await install([pkg('alpha')])).code).toBe(0);
    const exported = join(home.root, 'exported.lock');
    expect((await runCli(['lock', 'export', exported], { env: env() })).code).toBe(0);
    systemPolicy({ sources: { kinds: ['crate'] } });
    const r = await runCli(['install', '--frozen', '--lockfile', exported, '--json'], { env: env() });
    expect(r.code).toBe(13);
    expect(jsonOf(r).error.details).toMatchObject({ rule: 'sources.kinds', item: 'path' });
  });
});
