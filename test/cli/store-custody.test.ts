/**
 * yep-ext deletes and writes only inside directories it made (src/core/fs/custody.ts):
 * when one of the store's own directories (.yep-packages, .yep-staging, .yep-grants,
 * .yep-state, .yep-cache) is a symlink to a directory of the user's (a dotfiles manager),
 * every command that would delete from it or write into it is refused with exit 7 and the
 * user's files there stay byte-identical: install, update, remove, the recovery after a
 * kill, and the sweeps. In a real directory of its own, a sweep deletes only the names
 * yep-ext gives its entries. The store root itself may be a symlink.
 */
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { killAt, staleLock } from '../helpers/faults.js';
import { jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const TIMEOUT_MS = 30_000;
let reg: TestRegistry;
let home: TempHome;
const store = (): string => join(home.configDir, 'extensions');
const env = (): Record<string, string> => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_SECRET_STORE: 'file' });

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

async function cli(args: string[], extra: Record<string, string> = {}): Promise<RunResult> {
  const r = await runCli(args, { env: { ...env(), ...extra }, timeoutMs: TIMEOUT_MS });
  expect(r.signal, `hung: ${args.join(' ')}`).toBeNull();
  return r;
}

async function ok(args: string[]): Promise<void> {
  const r = await cli(args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** Everything under `dir`, links not followed: relative path -> file digest, link text or "dir". */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r));
      if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(join(dir, r))}`;
      else if (st.isDirectory()) {
        out[r] = 'dir';
        walk(r);
      } else
        out[r] = `${st.mode & 0o777} ${createHash('sha256')
          .update(readFileSync(join(dir, r)))
          .digest('hex')}`;
    }
  };
  walk('');
  return out;
}

/** A directory of the user's: a thesis, a docs folder, and a file named like one of yep-ext's. */
function userDir(name: string, lookalike?: string): string {
  const dir = join(home.root, 'dotfiles', name);
  mkdirSync(join(dir, 'docs', 'chapters'), { recursive: true });
  writeFileSync(join(dir, 'thesis.tex'), '\\documentclass{article}\n% three years of work\n');
  writeFileSync(join(dir, 'docs', 'chapters', 'one.md'), '# One\n');
  writeFileSync(join(dir, 'docs', 'notes.txt'), 'do not lose\n');
  if (lookalike) writeFileSync(join(dir, lookalike), '{"mine": true}\n');
  return dir;
}

/** Replace `<store>/<area>` by a symlink to `target` (what a dotfiles manager does), moving what was there into it. */
function linkArea(area: string, target: string): void {
  const p = join(store(), area);
  try {
    for (const e of readdirSync(p)) renameSync(join(p, e), join(target, e));
    rmSync(p, { recursive: true });
  } catch {
    // not there yet
  }
  symlinkSync(target, p);
}

function expectRefused(r: RunResult, area: string, target: string): void {
  const shown = `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
  expect(r.code, shown).toBe(7);
  expect(r.stderr, shown).toContain(`${join(store(), area)} is a symbolic link (to ${target})`);
}

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: 'yolop-extension-lay', vers: '1.0.0', data: crate('lay', '1.0.0') });
  reg.publish({ name: 'yolop-extension-lay', vers: '1.1.0', data: crate('lay', '1.1.0') });
  reg.publish({ name: 'yolop-extension-other', vers: '1.0.0', data: crate('other', '1.0.0') });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

describe("a store directory linked to the user's directory: refused with exit 7, the user's files byte-identical", () => {
  it('.yep-packages: install, update, remove, verify-and-sweep: each refused, the target untouched, the lock unchanged', async () => {
    await ok(['install', 'lay@^1.0.0', '--yes']);
    await ok(['install', 'other']);
    // An unreferenced version of an installed name: what the sweep deletes in a real directory.
    const target = userDir('packages', 'lay.0123456789abcdef');
    linkArea('.yep-packages', target);
    mkdirSync(join(target, 'lay.fedcba9876543210'));
    writeFileSync(join(target, 'lay.fedcba9876543210', 'plugin.json'), '{"name": "my copy"}\n');
    const before = tree(target);
    const lock = readFileSync(join(store(), 'extensions.lock'));
    for (const args of [
      ['install', 'lay@=1.1.0', '--yes'],
      ['update', 'lay', '--yes'],
      ['remove', 'other'],
      ['disable', 'lay'],
      ['install', '--frozen'],
    ]) {
      const r = await cli(args);
      expectRefused(r, '.yep-packages', target);
      expect(tree(target), args.join(' ')).toEqual(before);
    }
    expect(readFileSync(join(store(), 'extensions.lock')).equals(lock)).toBe(true);
    expect(readlinkSync(join(store(), '.yep-packages'))).toBe(target);
    // --json says it the same way.
    const j = await cli(['remove', 'other', '--json']);
    expect(j.code).toBe(7);
    expect(jsonOf(j).error).toMatchObject({ code: 'E_STATE', details: { dir: join(store(), '.yep-packages'), target } });
  });

  it('.yep-staging: recovery after a kill does not empty the target; install and remove are refused', async () => {
    await ok(['install', 'lay@=1.0.0']);
    // A kill mid-install leaves a stage with its journal; then the directory becomes a link.
    await killAt('place:before-lock', ['install', 'other'], { ...env() }, join(home.root, 'paused'));
    staleLock(home);
    const target = userDir('staging', '4242-abc-0-update-lay');
    linkArea('.yep-staging', target);
    const before = tree(target);
    expect(
      readdirSync(target).some((e) => /^\d+-[0-9a-z]+-\d+-/.test(e) && e !== '4242-abc-0-update-lay'),
      'the killed stage moved with it',
    ).toBe(true);
    for (const args of [['disable', 'lay'], ['install', 'other'], ['remove', 'lay'], ['list']]) {
      const r = await cli(args);
      if (args[0] === 'list') {
        // No lock, no recovery: list reads and deletes nothing.
        expect(r.code, r.stderr).toBe(0);
      } else expectRefused(r, '.yep-staging', target);
      expect(tree(target), args.join(' ')).toEqual(before);
    }
  });

  for (const area of ['.yep-grants', '.yep-state'] as const) {
    it(`${area}: remove does not delete the user's <name>.json there, install does not overwrite it`, async () => {
      const pkg = writePackage(join(home.root, 'src', 'demo'), { name: 'demo' });
      await ok(['install', pkg]);
      await ok(['list']); // writes the stat signature
      const target = userDir(area.slice(5), 'demo.json');
      linkArea(area, target);
      writeFileSync(join(target, 'demo.json'), '{"my": "own file"}\n');
      const before = tree(target);
      for (const args of [
        ['remove', 'demo'],
        ['install', pkg, '--force', '--yes'],
        ['install', 'other'],
      ]) {
        const r = await cli(args);
        expectRefused(r, area, target);
        expect(tree(target), args.join(' ')).toEqual(before);
      }
      // list takes no lock: it reads, and its cache write is refused quietly (the file stays the user's).
      const l = await cli(['list', '--json']);
      expect(l.code, l.stderr).toBe(0);
      expect(tree(target)).toEqual(before);
      expect(lstatSync(join(store(), 'demo')).isSymbolicLink()).toBe(true);
    });
  }

  it('.yep-cache: a fetch that would write the index cache is refused; the target untouched', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const target = userDir('cache', 'agent-version.json');
    linkArea('.yep-cache', target);
    const before = tree(target);
    const r = await cli(['install', 'other']);
    expectRefused(r, '.yep-cache', target);
    expect(tree(target)).toEqual(before);
  });
});

describe('in directories of its own, a sweep deletes only what yep-ext names', () => {
  it('.yep-packages: an unreferenced version of an installed name goes; the user files beside it stay', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const pk = join(store(), '.yep-packages');
    const inUse = readdirSync(pk);
    mkdirSync(join(pk, 'lay.0123456789abcdef'));
    writeFileSync(join(pk, 'notes.txt'), 'mine\n');
    mkdirSync(join(pk, 'photos'));
    writeFileSync(join(pk, 'photos', 'a.jpg'), 'jpg');
    symlinkSync(userDir('elsewhere'), join(pk, 'lay.1111111111111111.link'));
    const elsewhere = tree(join(home.root, 'dotfiles', 'elsewhere'));
    await ok(['disable', 'lay']);
    expect(readdirSync(pk).sort()).toEqual([...inUse, 'lay.1111111111111111.link', 'notes.txt', 'photos'].sort());
    expect(readFileSync(join(pk, 'photos', 'a.jpg'), 'utf8')).toBe('jpg');
    expect(tree(join(home.root, 'dotfiles', 'elsewhere'))).toEqual(elsewhere);
  });

  it('.yep-staging: a stranger entry is neither recovered nor deleted; a dead stage is', async () => {
    await ok(['install', 'lay@=1.0.0']);
    const st = join(store(), '.yep-staging');
    mkdirSync(join(st, 'my-stuff'), { recursive: true });
    writeFileSync(join(st, 'my-stuff', 'keep.txt'), 'keep\n');
    writeFileSync(join(st, 'readme.txt'), 'keep\n');
    mkdirSync(join(st, '999999999-abc-0-install-x'));
    await ok(['disable', 'lay']);
    expect(readdirSync(st).sort()).toEqual(['my-stuff', 'readme.txt']);
    expect(readFileSync(join(st, 'my-stuff', 'keep.txt'), 'utf8')).toBe('keep\n');
  });

  it(".yep-staging: a dead stage that is a link to the user's directory is never read through: its journal moves nothing; the link goes", async () => {
    await ok(['install', 'lay@=1.0.0']);
    // The user's directory looks like a stage of a killed install of `ghost`, with a set-aside tree: a recovery
    // that read the journal through the link would move `old` into the store as <store>/ghost.
    const target = userDir('stage-like');
    writeFileSync(join(target, 'journal.json'), JSON.stringify({ op: 'place', name: 'ghost', link: 'x', previous: { aside: true }, pid: 999999999 }));
    mkdirSync(join(target, 'old'));
    writeFileSync(join(target, 'old', 'plugin.json'), '{"name": "ghost"}\n');
    const stage = join(store(), '.yep-staging', '999999999-abc-0-install-ghost');
    symlinkSync(target, stage);
    const before = tree(target);
    const listed = await cli(['list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    await ok(['disable', 'lay']);
    expect(tree(target)).toEqual(before);
    expect(lstatSync(join(store(), 'ghost'), { throwIfNoEntry: false }), 'nothing moved into the store').toBeUndefined();
    expect(lstatSync(stage, { throwIfNoEntry: false }), 'the link itself is removed').toBeUndefined();
  });

  it('the store root may be a symlink (a config directory on another disk): install, update and remove work through it', async () => {
    const real = join(home.root, 'disk2', 'extensions');
    mkdirSync(real, { recursive: true });
    mkdirSync(home.configDir, { recursive: true });
    symlinkSync(real, store());
    await ok(['install', 'lay@^1.0.0']);
    await ok(['update', 'lay', '--yes']);
    await ok(['remove', 'lay']);
    expect(readdirSync(join(real, '.yep-packages'))).toEqual([]);
    expect(lstatSync(store()).isSymbolicLink()).toBe(true);
  });
});
