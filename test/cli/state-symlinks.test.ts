/**
 * State files are never written through a symlink, except
 * settings.toml, whose write-through is documented for dotfile setups. When the
 * lock, an approved grant or the keychain index is a link (to a file outside the
 * store, or to one inside it), every writer refuses with exit 7 naming the link and
 * its target, before anything changes: the target keeps its bytes, the link stays
 * a link, and the store is as it was.
 */
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

const TIMEOUT_MS = 20_000;
const SCHEMA = { type: 'object', properties: { token: { type: 'string', secret: true, env: 'DEMO_TOKEN' } } };

let home: TempHome;
let env: Record<string, string>;
const store = (): string => join(home.configDir, 'extensions');
const lockFile = (): string => join(store(), 'extensions.lock');
const src = (name: string): string => join(home.root, 'src', name);

async function cli(args: string[], input = ''): Promise<RunResult> {
  const r = await runCli(args, { env, input, timeoutMs: TIMEOUT_MS });
  expect(r.signal, `hung: ${args.join(' ')}`).toBeNull();
  return r;
}

function addTool(name: string): void {
  const file = join(src(name), 'plugin.json');
  const m = JSON.parse(readFileSync(file, 'utf8'));
  m.yolop.tools.push({ name: 'added_tool' });
  writeFileSync(file, JSON.stringify(m, null, 2));
}

/** Move `file` to `target` and leave a symlink to it in its place. Returns the target's bytes. */
function linkAway(file: string, target: string): Buffer {
  renameSync(file, target);
  symlinkSync(target, file);
  return readFileSync(target);
}

function storeEntries(): string {
  return readdirSync(store())
    .filter((e) => !e.startsWith('.'))
    .sort()
    .join(',');
}

function expectRefusedLink(r: RunResult, link: string, target: string): void {
  const shown = `exit ${r.code}\n${r.stderr}`;
  expect(r.code, shown).toBe(7);
  expect(r.stderr, shown).toContain(`${link} is a symbolic link (to ${target}); yep-ext will not write through it`);
}

beforeEach(async () => {
  home = makeTempHome();
  env = { ...home.env, YEP_EXT_SECRET_STORE: 'file' };
  writePackage(src('demo'), { name: 'demo', yolop: { config_schema: SCHEMA } });
  writePackage(src('other'), { name: 'other' });
  const r = await cli(['install', src('demo')]);
  expect(r.code, r.stderr).toBe(0);
});
afterEach(() => home.cleanup());

describe('extensions.lock as a symlink', () => {
  for (const where of ['outside the store', 'inside the store'] as const) {
    const targetOf = (): string => (where === 'outside the store' ? join(home.root, 'elsewhere.lock') : join(store(), 'real.lock'));

    it(`install refuses to write a lock linked ${where}; nothing changes`, async () => {
      const target = targetOf();
      const bytes = linkAway(lockFile(), target);
      const r = await cli(['install', src('other')]);
      expectRefusedLink(r, lockFile(), target);
      expect(readFileSync(target).equals(bytes), 'the link target keeps its bytes').toBe(true);
      expect(lstatSync(lockFile()).isSymbolicLink()).toBe(true);
      expect(readlinkSync(lockFile())).toBe(target);
      expect(existsSync(join(store(), 'other')), 'nothing was placed').toBe(false);
      expect(storeEntries()).toBe(['demo', 'extensions.lock', ...(where === 'inside the store' ? ['real.lock'] : [])].sort().join(','));
    });
  }

  it('remove and update refuse too, before the package is touched', async () => {
    const target = join(home.root, 'elsewhere.lock');
    const bytes = linkAway(lockFile(), target);

    const rm = await cli(['remove', 'demo']);
    expectRefusedLink(rm, lockFile(), target);
    expect(readlinkSync(join(store(), 'demo'))).toBe(src('demo'));

    addTool('demo');
    const up = await cli(['update', 'demo', '--yes']);
    expect(up.code, up.stderr).toBe(7);
    expect(up.stderr).toContain(`${lockFile()} is a symbolic link (to ${target})`);
    expect(readFileSync(target).equals(bytes)).toBe(true);
    expect(lstatSync(lockFile()).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(store(), 'demo'))).toBe(src('demo'));
  });

  it('reading through it still works (list), as the host reads it', async () => {
    linkAway(lockFile(), join(home.root, 'elsewhere.lock'));
    const r = await cli(['list', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).extensions.map((e: { name: string }) => e.name)).toEqual(['demo']);
  });
});

describe('other state files we write', () => {
  it('an approved grant linked elsewhere: a reinstall that would save a new grant is refused before anything moves', async () => {
    const grant = join(store(), '.yep-grants', 'demo.json');
    const target = join(home.root, 'elsewhere-grant.json');
    const bytes = linkAway(grant, target);
    const lockBefore = readFileSync(lockFile());
    addTool('demo');
    const r = await cli(['install', src('demo'), '--yes']);
    expectRefusedLink(r, grant, target);
    expect(readFileSync(target).equals(bytes)).toBe(true);
    expect(lstatSync(grant).isSymbolicLink()).toBe(true);
    expect(readFileSync(lockFile()).equals(lockBefore), 'the lock was not committed').toBe(true);
  });

  it('a keychain index linked elsewhere: set-secret refuses before connections.toml changes', async () => {
    const index = join(store(), '.yep-keychain.json');
    const target = join(home.root, 'elsewhere-keychain.json');
    writeFileSync(target, `${JSON.stringify({ version: 1, entries: { demo: ['token'] } }, null, 2)}\n`);
    symlinkSync(target, index);
    const bytes = readFileSync(target);
    const r = await cli(['set-secret', 'demo', 'token', '--stdin'], 'tok-789');
    expectRefusedLink(r, index, target);
    expect(readFileSync(target).equals(bytes)).toBe(true);
    expect(existsSync(join(home.configDir, 'connections.toml')), 'no secret was written').toBe(false);
  });

  it('settings.toml keeps its documented write-through: the target is edited, the link stays', async () => {
    const settings = join(home.configDir, 'settings.toml');
    const target = join(home.root, 'dotfiles-settings.toml');
    writeFileSync(target, '# my dotfiles\ntheme = "dark"\n');
    symlinkSync(target, settings);
    const r = await cli(['enable', 'demo']);
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(settings).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('# my dotfiles\ntheme = "dark"\n\n[[capabilities]]\nref = "ext:demo"\n');
  });
});
