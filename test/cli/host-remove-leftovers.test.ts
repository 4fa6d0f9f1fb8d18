/**
 * yolop's own `remove` deletes `<store>/<name>` and its lock entry only (host-compat §4): the
 * version directory yep-ext keeps the package in (.yep-packages), its approved grant and its
 * stat signature stay. `list` and `verify` report them with their size (human and --json),
 * recovery does not sweep them away unannounced, and `yep-ext remove <name>` deletes them,
 * and nothing else (a user's file beside them stays).
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

let reg: TestRegistry;
let home: TempHome;
const store = (): string => join(home.configDir, 'extensions');
const env = (): Record<string, string> => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl });
const lockFile = (): string => join(store(), 'extensions.lock');

function crate(name: string, version: string): Buffer {
  const manifest = { name, version, yolop: { capabilityServer: { command: `${name}-server` }, tools: [{ name: 'one' }] } };
  return buildCrate({
    name: `yolop-extension-${name}`,
    version,
    files: {
      'Cargo.toml': `[package]\nname = "yolop-extension-${name}"\nversion = "${version}"\n`,
      'plugin.json': JSON.stringify(manifest),
      'README.md': 'x'.repeat(5000),
      [`bin/${name}-server`]: { content: Buffer.from(`#!/bin/sh\n# ${version}\n`), mode: 0o755 },
    },
  });
}

async function cli(args: string[]): Promise<RunResult> {
  return runCli(args, { env: env(), timeoutMs: 30_000 });
}

async function ok(args: string[]): Promise<RunResult> {
  const r = await cli(args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

/**
 * What yolop's `remove <name>` does (host-compat §4): delete `<store>/<name>` (a symlink is
 * removed as a link) and rewrite the lock from its four-field entry type without it.
 */
function hostRemove(name: string): void {
  unlinkSync(join(store(), name));
  const lock = parse(readFileSync(lockFile(), 'utf8')) as { extensions?: Array<Record<string, unknown>> };
  const kept = (lock.extensions ?? [])
    .filter((e) => e.name !== name)
    .map((e) => {
      const s = e.source as Record<string, unknown>;
      const source = Object.fromEntries(Object.entries(s).filter(([k]) => ['type', 'path', 'url', 'rev', 'crate_name', 'version'].includes(k)));
      return { name: e.name, source, content_hash: e.content_hash, ...(e.version !== undefined ? { version: e.version } : {}) };
    });
  writeFileSync(lockFile(), stringify({ extensions: kept }));
}

/** Bytes under `p`, links not followed (what du --apparent-size counts). */
function du(p: string): number {
  const st = lstatSync(p);
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((n, e) => n + du(join(p, e)), 0);
}

const versionsOf = (name: string): string[] => readdirSync(join(store(), '.yep-packages')).filter((e) => e.startsWith(`${name}.`));

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: 'yolop-extension-lay', vers: '1.0.0', data: crate('lay', '1.0.0') });
  reg.publish({ name: 'yolop-extension-other', vers: '1.0.0', data: crate('other', '1.0.0') });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

describe("after yolop's remove, yep-ext's files of the package", () => {
  it('are reported with their size by list and verify (human and --json), kept by recovery, and deleted by `yep-ext remove <name>` alone', async () => {
    await ok(['install', 'lay']);
    await ok(['install', 'other']);
    const [version] = versionsOf('lay');
    expect(version).toBeDefined();
    const versionDir = join(store(), '.yep-packages', version!);
    const grant = join(store(), '.yep-grants', 'lay.json');
    expect(existsSync(grant)).toBe(true);
    // A user's files beside yep-ext's: never counted, never deleted.
    writeFileSync(join(store(), '.yep-packages', 'notes.txt'), 'mine\n');
    writeFileSync(join(store(), '.yep-grants', 'lay.txt'), 'mine too\n');

    hostRemove('lay');
    const custody = join(store(), '.yep-grants', 'lay.lock.json');
    const state = join(store(), '.yep-state', 'lay.json');
    const expectedBytes = du(versionDir) + du(grant) + du(custody) + (existsSync(state) ? du(state) : 0);

    const list = jsonOf(await ok(['list', '--json']));
    const row = list.extensions.find((e: { name: string }) => e.name === 'lay');
    expect(row, JSON.stringify(list)).toBeDefined();
    expect(row.leftovers.bytes).toBe(expectedBytes);
    expect(row.leftovers.paths).toContain(versionDir);
    expect(row.leftovers.paths).toContain(grant);
    expect(row.leftovers.paths.some((p: string) => p.endsWith('notes.txt') || p.endsWith('lay.txt'))).toBe(false);
    expect(row.problems.join(' ')).toContain('`yep-ext remove lay`');
    expect(list.extensions.find((e: { name: string }) => e.name === 'other').leftovers).toBeNull();
    const human = await ok(['list']);
    expect(human.stdout).toMatch(/lay[\s\S]*not installed, but yep-ext's files of it remain \(\d+(\.\d)? kB/);

    const v = await ok(['verify', '--json']);
    expect(jsonOf(v).leftovers).toEqual([{ name: 'lay', paths: row.leftovers.paths, bytes: expectedBytes }]);
    const vh = await ok(['verify']);
    expect(vh.stdout).toMatch(/warning: lay: not installed, but yep-ext's files of it remain/);

    // A command that takes the installer lock (and recovers) does not sweep them away unannounced.
    await ok(['disable', 'other']);
    expect(existsSync(versionDir)).toBe(true);

    const r = await ok(['remove', 'lay', '--json']);
    expect(jsonOf(r)).toMatchObject({ name: 'lay', removed: { store: false, lock: false, files: true }, leftovers: { bytes: expectedBytes } });
    expect(existsSync(versionDir)).toBe(false);
    expect(existsSync(grant)).toBe(false);
    expect(readFileSync(join(store(), '.yep-packages', 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(store(), '.yep-grants', 'lay.txt'), 'utf8')).toBe('mine too\n');
    expect(lstatSync(join(store(), 'other')).isSymbolicLink()).toBe(true);
    expect(versionsOf('other')).toHaveLength(1);
    expect(jsonOf(await ok(['list', '--json'])).extensions.map((e: { name: string }) => e.name)).toEqual(['other']);
    expect(jsonOf(await ok(['verify', '--json'])).leftovers).toEqual([]);
    expect((await cli(['remove', 'lay'])).code).toBe(3);
  });

  it("a path install the host removed: its approved grant is reported and removed; the directory is the user's and stays", async () => {
    const pkg = writePackage(join(home.root, 'src', 'demo'), { name: 'demo' });
    await ok(['install', pkg]);
    await ok(['list']);
    const pkgBefore = readFileSync(join(pkg, 'plugin.json'));
    hostRemove('demo');
    const row = jsonOf(await ok(['list', '--json'])).extensions.find((e: { name: string }) => e.name === 'demo');
    expect(row.leftovers.paths).toEqual([join(store(), '.yep-grants', 'demo.json'), join(store(), '.yep-grants', 'demo.lock.json')]);
    const r = await ok(['remove', 'demo']);
    expect(r.stdout).toMatch(/Removed the files \(\d+ bytes\) demo left behind \(it was not installed\)/);
    expect(existsSync(join(store(), '.yep-grants', 'demo.json'))).toBe(false);
    expect(existsSync(join(store(), '.yep-grants', 'demo.lock.json'))).toBe(false);
    expect(readFileSync(join(pkg, 'plugin.json')).equals(pkgBefore)).toBe(true);
  });

  it('an interrupted install is not called a leftover (recovery rolls it back)', async () => {
    await ok(['install', 'lay']);
    // A version directory whose name has a killed transaction's journal is the next command's to finish.
    const stage = join(store(), '.yep-staging', '999999999-abc-0-other');
    mkdirSync(stage, { recursive: true });
    writeFileSync(join(stage, 'journal.json'), JSON.stringify({ op: 'place', name: 'other', pid: 999999999 }));
    mkdirSync(join(store(), '.yep-packages', 'other.0123456789abcdef'));
    const list = jsonOf(await ok(['list', '--json']));
    expect(list.extensions.map((e: { name: string }) => e.name)).toEqual(['lay']);
    rmSync(stage, { recursive: true });
  });
});
