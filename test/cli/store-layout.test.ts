/**
 * The store layout and recovery's sweeps (docs/formats.md "The store",
 * docs/reliability.md): owned packages in immutable version directories behind a
 * relative symlink; crash leftovers (unreferenced versions, temp files of dead
 * writers) removed by the next lock-taking command and nothing else; `remove`
 * never takes the package away while settings.toml still enables it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { hostRuns, subjectEntries } from '../helpers/settings-model.js';

let reg: TestRegistry;
let home: TempHome;
const store = () => join(home.configDir, 'extensions');
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl });
const lockText = () => readFileSync(join(store(), 'extensions.lock'), 'utf8');
const settingsFile = () => join(home.configDir, 'settings.toml');
const settingsText = () => (existsSync(settingsFile()) ? readFileSync(settingsFile(), 'utf8') : '');
/** The names the lock pins, parsed as the host parses extensions.lock. */
const lockNames = () => ((parse(lockText()) as { extensions?: { name: string }[] }).extensions ?? []).map((e) => e.name);
const isThere = (p: string) => {
  try {
    lstatSync(p); // a dangling link counts: existsSync would follow it
    return true;
  } catch {
    return false;
  }
};
/** yep-ext's own per-name records beside the store entry (docs/formats.md). */
const grantRecord = (name: string) => join(store(), '.yep-grants', `${name}.json`);
const stateRecord = (name: string) => join(store(), '.yep-state', `${name}.json`);
const versionDirs = (name: string) =>
  isThere(join(store(), '.yep-packages')) ? readdirSync(join(store(), '.yep-packages')).filter((n) => n.startsWith(`${name}.`)) : [];

/** What a successful `remove <name>` claims, checked on disk: nothing of `name` is left that the host or yep-ext would read. */
function expectRemoved(name: string): void {
  expect(isThere(join(store(), name)), 'store entry').toBe(false);
  expect(versionDirs(name), 'version directories').toEqual([]);
  expect(isThere(grantRecord(name)), 'approved-grant record').toBe(false);
  expect(isThere(stateRecord(name)), 'stat-signature record').toBe(false);
  expect(lockNames(), 'lock entries').not.toContain(name);
  expect(hostRuns(settingsText(), name).enabled, 'the host would still load it').toBe(false);
}

function crate(name: string, version: string): Buffer {
  const manifest = { name, version, yolop: { capabilityServer: { command: `${name}-server` }, tools: [{ name: 'one' }] } };
  return buildCrate({
    name: `yolop-extension-${name}`,
    version,
    files: {
      'Cargo.toml': `[package]\nname = "yolop-extension-${name}"\nversion = "${version}"\n`,
      'plugin.json': JSON.stringify(manifest),
      [`bin/${name}-server`]: { content: Buffer.from(`#!/bin/sh\n# ${version}\n`), mode: 0o755 },
    },
  });
}

async function ok(args: string[]): Promise<void> {
  const r = await runCli(args, { env: env() });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** The pid of a process that has exited (so a temp file naming it belongs to a dead writer). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: 'yolop-extension-lay', vers: '1.0.0', data: crate('lay', '1.0.0') });
  reg.publish({ name: 'yolop-extension-lay', vers: '1.1.0', data: crate('lay', '1.1.0') });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

describe('owned packages live in immutable version directories', () => {
  it('install links <store>/<name> to .yep-packages/<name>.<hash16>; update swaps the link and deletes the old version', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const first = readlinkSync(join(store(), 'lay'));
    const hash1 = /content_hash = "sha256:([0-9a-f]{16})/.exec(lockText())?.[1];
    expect(first).toBe(`.yep-packages/lay.${hash1}`);
    expect(readdirSync(join(store(), '.yep-packages'))).toEqual([`lay.${hash1}`]);
    await ok(['install', 'lay@=1.1.0', '--yes']);
    const second = readlinkSync(join(store(), 'lay'));
    expect(second).not.toBe(first);
    expect(readdirSync(join(store(), '.yep-packages'))).toEqual([second.split('/')[1]]);
    expect(readFileSync(join(store(), 'lay', 'bin', 'lay-server'), 'utf8')).toContain('1.1.0');
    // Enabled, with another extension's entry beside it, so that remove has settings to edit.
    writeFileSync(settingsFile(), '# mine\n[[capabilities]]\nref = "ext:other"\n');
    await ok(['enable', 'lay']);
    expect(hostRuns(settingsText(), 'lay').enabled).toBe(true);
    expect(lockNames()).toEqual(['lay']);
    for (const f of [grantRecord('lay'), stateRecord('lay')]) expect(isThere(f), f).toBe(true);
    await ok(['remove', 'lay']);
    expect(existsSync(join(store(), 'lay'))).toBe(false);
    expect(readdirSync(join(store(), '.yep-packages'))).toEqual([]);
    expectRemoved('lay');
    expect(subjectEntries(settingsText(), 'lay')).toEqual([]);
    expect(settingsText()).toBe('# mine\n[[capabilities]]\nref = "ext:other"\n');
    expect(hostRuns(settingsText(), 'other').enabled).toBe(true);
  });

  it("a path install over an owned package deletes its version directory, never the user's directory", async () => {
    await ok(['install', 'lay@=1.0.0']);
    const first = readlinkSync(join(store(), 'lay'));
    // A copy of the installed tree as a directory: same content hash, another source.
    const dir = join(home.root, 'lay-copy');
    mkdirSync(join(dir, 'bin'), { recursive: true });
    for (const f of ['plugin.json', 'Cargo.toml', 'bin/lay-server']) writeFileSync(join(dir, f), readFileSync(join(store(), 'lay', f)));
    await ok(['install', dir, '--yes']);
    expect(readlinkSync(join(store(), 'lay'))).toBe(dir); // a path install links the user's directory
    await ok(['install', 'lay@=1.0.0', '--yes']);
    expect(readlinkSync(join(store(), 'lay'))).toBe(first); // the old version was deleted, so its name is free again
    expect(readdirSync(dir).sort()).toEqual(['Cargo.toml', 'bin', 'plugin.json']); // the user's directory is never deleted
  });

  it('an entry that is a real directory (an older yep-ext, the host) is read as installed and migrated on its next replacement', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const link = join(store(), 'lay');
    const version = join(store(), readlinkSync(link));
    rmSync(link);
    mkdirSync(link);
    for (const f of ['plugin.json', 'Cargo.toml']) writeFileSync(join(link, f), readFileSync(join(version, f)));
    mkdirSync(join(link, 'bin'));
    writeFileSync(join(link, 'bin', 'lay-server'), readFileSync(join(version, 'bin', 'lay-server')), { mode: 0o755 });
    rmSync(version, { recursive: true });
    const listed = jsonOf(await runCli(['list', '--json'], { env: env() }));
    expect(listed.extensions[0].problems).toEqual([]);
    await ok(['install', 'lay@=1.1.0', '--yes']);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(link, 'bin', 'lay-server'), 'utf8')).toContain('1.1.0');
    expect(readdirSync(join(store(), '.yep-staging'))).toEqual([]);
  });

  it('a missing version directory: list says the package is missing (not a linked directory), install --frozen fetches it again', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const target = join(store(), readlinkSync(join(store(), 'lay')));
    rmSync(target, { recursive: true });
    const listed = jsonOf(await runCli(['list', '--json'], { env: env() }));
    expect(listed.extensions[0].problems).toEqual(['missing: not in the store (reinstall it, or `yep-ext install --frozen`)']);
    const r = await runCli(['install', '--frozen'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(store(), 'lay')).isDirectory()).toBe(true);
    expect(readFileSync(join(store(), 'lay', 'plugin.json'), 'utf8')).toContain('"lay"');
  });
});

describe('recovery sweeps crash leftovers, and only those', () => {
  it('unreferenced version directories go; referenced ones and user files stay', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const inUse = readlinkSync(join(store(), 'lay')).split('/')[1] as string;
    mkdirSync(join(store(), '.yep-packages', 'lay.0123456789abcdef', 'bin'), { recursive: true });
    writeFileSync(join(store(), '.yep-packages', 'lay.0123456789abcdef', 'plugin.json'), '{}');
    const r = await runCli(['disable', 'lay'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(store(), '.yep-packages'))).toEqual([inUse]);
  });

  it('temp files of dead writers are removed from the store and the config directory; live writers, user files and other names stay', async () => {
    const pkg = writePackage(join(home.root, 'src', 'alpha'), { name: 'alpha' });
    await ok(['install', pkg]);
    const dead = deadPid();
    const live = process.pid;
    const cfg = home.configDir;
    const files: Record<string, boolean> = {
      // path -> should survive
      [join(cfg, `.connections.toml.yep-${dead}-0.tmp`)]: false, // may hold a secret
      [join(cfg, `.settings.toml.yep-${dead}-3.tmp`)]: false,
      [join(cfg, `.settings.toml.yep-${live}-0.tmp`)]: true, // its writer is alive
      [join(cfg, 'settings.toml.12345')]: true, // a user's backup: no pid, not a name yep-ext writes
      [join(cfg, 'connections.toml.987')]: true,
      [join(cfg, 'notes.txt.123')]: true, // not ours
      [join(cfg, 'settings.toml.bak')]: true,
      [join(store(), `.extensions.lock.yep-${dead}-1.tmp`)]: false,
      [join(store(), 'extensions.lock.4242')]: true,
      [join(store(), `..yep-keychain.json.yep-${dead}-2.tmp`)]: false,
      [join(store(), '.yep-grants', `.alpha.json.yep-${dead}-0.tmp`)]: false,
      [join(store(), '.yep-grants', 'alpha.json.777')]: true,
      [join(store(), '.yep-cache', 'index', 'ab', `.abcd.json.yep-${dead}-0.tmp`)]: false,
      [join(store(), '.yep-cache', 'index', 'ab', `.abcd.json.yep-${live}-0.tmp`)]: true,
    };
    for (const f of Object.keys(files)) {
      mkdirSync(join(f, '..'), { recursive: true });
      writeFileSync(f, 'token = "s3cret"\n');
    }
    // Any command that takes the installer lock recovers (this one then fails: nothing to remove).
    const r = await runCli(['remove', 'not-installed'], { env: env() });
    expect(r.code, r.stderr).toBe(3);
    for (const [f, survives] of Object.entries(files)) expect(existsSync(f), f).toBe(survives);
  });

  it("a user's numbered backups beside the state files (and beside a symlinked settings target) survive recovery byte-identical", async () => {
    const pkg = writePackage(join(home.root, 'src', 'alpha'), { name: 'alpha' });
    await ok(['install', pkg]);
    // settings.toml is a dotfiles-manager symlink: its target's directory holds the user's own copies too.
    const dots = join(home.root, 'dotfiles');
    mkdirSync(dots, { recursive: true });
    writeFileSync(join(dots, 'settings.toml'), '# mine\n');
    rmSync(settingsFile(), { force: true });
    symlinkSync(join(dots, 'settings.toml'), settingsFile());
    const backups = [
      join(home.configDir, 'settings.toml.1'),
      join(home.configDir, 'connections.toml.1'),
      join(store(), 'extensions.lock.2'),
      join(store(), '.yep-keychain.json.3'),
      join(store(), '.yep-grants', 'alpha.json.1'),
      join(dots, 'settings.toml.1'),
      join(dots, 'settings.toml.20261207'),
    ];
    const bytes = (f: string) => `[[capabilities]]\nref = "ext:keep" # ${f}\n`;
    for (const f of backups) writeFileSync(f, bytes(f));
    const r = await runCli(['remove', 'not-installed'], { env: env() });
    expect(r.code, r.stderr).toBe(3);
    for (const f of backups) expect(isThere(f) ? readFileSync(f, 'utf8') : 'gone', f).toBe(bytes(f));
    // Settings edits (enable, disable) sweep beside the file they write: the backups stay there too.
    expect((await runCli(['enable', 'alpha'], { env: env() })).code).toBe(0);
    expect((await runCli(['disable', 'alpha'], { env: env() })).code).toBe(0);
    for (const f of backups) expect(isThere(f) ? readFileSync(f, 'utf8') : 'gone', f).toBe(bytes(f));
  });

  it('list does not sweep (it takes no lock)', async () => {
    const f = join(home.configDir, `.settings.toml.yep-${deadPid()}-0.tmp`);
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(f, 'x');
    await runCli(['list', '--json'], { env: env() });
    expect(existsSync(f)).toBe(true);
  });
});

describe('remove never takes the package away while settings.toml still enables it', () => {
  it('an inline capabilities array that enables it: refused (exit 7) before anything changes', async () => {
    const pkg = writePackage(join(home.root, 'src', 'alpha'), { name: 'alpha' });
    await ok(['install', pkg]);
    const settings = 'capabilities = [{ ref = "ext:alpha" }]\n';
    writeFileSync(join(home.configDir, 'settings.toml'), settings);
    const lock = lockText();
    const r = await runCli(['remove', 'alpha'], { env: env() });
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).toMatch(/cannot edit.*nothing was removed/s);
    expect(lockText()).toBe(lock);
    expect(readlinkSync(join(store(), 'alpha'))).toBe(pkg);
    expect(readFileSync(join(home.configDir, 'settings.toml'), 'utf8')).toBe(settings);
    expect(readdirSync(join(store(), '.yep-staging'))).toEqual([]);
    // "Nothing was removed": the host still loads it, and yep-ext still has its entry and approved grant.
    expect(hostRuns(settingsText(), 'alpha').enabled).toBe(true);
    expect(lockNames()).toEqual(['alpha']);
    expect(isThere(grantRecord('alpha'))).toBe(true);
  });

  it('the same array that does not enable it: removed with a warning, as before', async () => {
    const pkg = writePackage(join(home.root, 'src', 'alpha'), { name: 'alpha' });
    await ok(['install', pkg]);
    const settings = 'capabilities = [{ ref = "ext:alpha", enabled = false }]\n';
    writeFileSync(join(home.configDir, 'settings.toml'), settings);
    // A path install is not signed when placed (recordPlacedState); a frozen re-hash signs it, so remove has one to delete.
    await ok(['install', '--frozen']);
    for (const f of [grantRecord('alpha'), stateRecord('alpha')]) expect(isThere(f), f).toBe(true);
    const r = await runCli(['remove', 'alpha'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Left settings.toml unchanged/);
    expect(existsSync(join(store(), 'alpha'))).toBe(false);
    expectRemoved('alpha');
    // "Left unchanged" is a claim too: the same bytes, and the entry the host reads still disables it.
    expect(settingsText()).toBe(settings);
    expect(subjectEntries(settingsText(), 'alpha')).toEqual([{ ref: 'ext:alpha', enabled: false }]);
    expect(readdirSync(pkg).sort()).toEqual(['bin', 'plugin.json']); // the user's directory stays
  });
});
