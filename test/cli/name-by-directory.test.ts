/**
 * Every command that names an installed extension takes a directory too: `.` inside a
 * path install's directory, its absolute path, or `name/` as tab completion types it
 * (src/core/store/installed-name.ts resolveInstalled). State is read as the host reads it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { LOGFIRE_SCHEMA } from '../helpers/extension-fixture.js';
import { writePackage } from '../helpers/packages.js';
import { agentView } from '../helpers/agent-view.js';

let home: TempHome;
let pkg: string;
let lockFile: string;

beforeEach(async () => {
  home = makeTempHome();
  lockFile = join(home.configDir, 'extensions', 'extensions.lock');
  pkg = writePackage(join(home.root, 'src', 'demo'), { name: 'demo', yolop: { config_schema: LOGFIRE_SCHEMA } });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
});
afterEach(() => home.cleanup());

const lockNames = (): string[] =>
  existsSync(lockFile) ? ((parse(readFileSync(lockFile, 'utf8')) as { extensions?: { name: string }[] }).extensions ?? []).map((e) => e.name) : [];

/** The forms a user types for the package directory, each with the directory it is typed in. */
const FORMS: { what: string; form: () => { target: string; cwd: string } }[] = [
  { what: '`.` inside it', form: () => ({ target: '.', cwd: pkg }) },
  { what: 'its absolute path', form: () => ({ target: pkg, cwd: home.root }) },
  { what: '`demo/` from its parent (as tab completion types it)', form: () => ({ target: 'demo/', cwd: join(home.root, 'src') }) },
];

describe('a path install named by its directory', () => {
  for (const { what, form } of FORMS) {
    it(`set-secret, enable, config show, verify, outdated, update, disable, remove by ${what}`, async () => {
      const { target, cwd } = form();
      const run = (args: string[], input?: string) => runCli(args, { env: home.env, cwd, ...(input !== undefined ? { input } : {}) });

      const secret = await run(['set-secret', target, 'token', '--stdin'], 'tok-1234');
      expect(secret.code, secret.stderr).toBe(0);
      const enable = await run(['enable', target, '--config', 'endpoint=https://e.example', '--config', 'mode=fast']);
      expect(enable.code, enable.stderr).toBe(0);
      expect(agentView(home.configDir).demo).toMatchObject({ config: { endpoint: 'https://e.example', mode: 'fast' }, secrets: { token: 'tok-1234' } });

      const show = await run(['config', 'show', target, '--json']);
      expect(show.code, show.stderr).toBe(0);
      expect(jsonOf(show).name).toBe('demo');

      const lockBefore = readFileSync(lockFile, 'utf8');
      for (const cmd of ['verify', 'outdated', 'update']) {
        const r = await run([cmd, target, '--json']);
        expect(r.code, `${cmd}: ${r.stderr}`).toBe(0);
        expect(r.stdout, cmd).toContain('"demo"');
      }
      expect(readFileSync(lockFile, 'utf8')).toBe(lockBefore);

      const disable = await run(['disable', target]);
      expect(disable.code, disable.stderr).toBe(0);
      expect(agentView(home.configDir).demo).toBeUndefined();

      const remove = await run(['remove', target]);
      expect(remove.code, remove.stderr).toBe(0);
      expect(lockNames()).not.toContain('demo');
      expect(existsSync(join(home.configDir, 'extensions', 'demo'))).toBe(false);
      // Removed by the name the directory resolved to: its settings table, secrets and grant went too.
      const secrets = join(home.configDir, 'connections.toml');
      expect(existsSync(secrets) ? (parse(readFileSync(secrets, 'utf8')) as Record<string, unknown>)['ext:demo'] : undefined).toBeUndefined();
      expect(readFileSync(join(home.configDir, 'settings.toml'), 'utf8')).not.toContain('ext:demo');
      expect(existsSync(join(home.configDir, 'extensions', '.yep-grants', 'demo.json'))).toBe(false);
      // The user's directory is untouched: only the link in the store went.
      expect(lstatSync(join(pkg, 'plugin.json')).isFile()).toBe(true);
    });
  }

  it('a package directory nothing is installed from: exit 3 saying to install it, nothing written', async () => {
    const other = writePackage(join(home.root, 'src', 'other'), { name: 'other' });
    const settingsFile = join(home.configDir, 'settings.toml');
    const lockBefore = readFileSync(lockFile, 'utf8');
    for (const args of [
      ['enable', '.'],
      ['disable', '.'],
      ['remove', '.'],
      ['verify', '.'],
      ['update', '.'],
      ['outdated', '.'],
      ['config', 'show', '.'],
      ['set-secret', '.', 'token', '--stdin'],
    ]) {
      const r = await runCli([...args, '--json'], { env: home.env, cwd: other, input: 'tok-1234' });
      expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(3);
      expect(jsonOf(r).error.code).toBe('E_NOT_INSTALLED');
      expect(jsonOf(r).error.hint).toContain('`yep-ext install .`');
    }
    expect(readFileSync(lockFile, 'utf8')).toBe(lockBefore);
    expect(existsSync(settingsFile)).toBe(false);
    expect(existsSync(join(home.configDir, 'connections.toml'))).toBe(false);
  });

  it('the package directory in the store names that extension', async () => {
    const r = await runCli(['enable', '.', '--config', 'endpoint=https://e.example', '--config', 'mode=fast'], {
      env: home.env,
      cwd: join(home.configDir, 'extensions', 'demo'),
    });
    // Setup incomplete (the secret is unset) but enabled: the host loads it.
    expect(r.code, r.stderr).toBe(10);
    expect(Object.keys(agentView(home.configDir))).toEqual(['demo']);
  });
});
