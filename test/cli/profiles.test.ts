/**
 * `--profile NAME` on enable, disable, `enable --config`, list and info: yolop's
 * profiles (`<config>/profiles/<name>.toml`, host-compat §5 "Profiles", host 0.18),
 * whose `[[capabilities]]` entries the host applies after settings.toml's, or alone
 * under `capabilities_mode = "replace"`. Each test checks the files as the host reads
 * them (test/helpers/settings-model.ts, `hostRuns(base, name, profile)`), the base
 * file byte for byte, and that no key the user wrote is lost. Needs a build.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { hostRuns, subjectEntries } from '../helpers/settings-model.js';

const SCHEMA = { type: 'object', properties: { endpoint: { type: 'string' }, port: { type: 'integer' } } };
const BASE = '# base settings\n[[capabilities]]\nref = "ext:x"\nendpoint = "https://base.example"\n';

let home: TempHome;
const settingsFile = () => join(home.configDir, 'settings.toml');
const profileFile = (name = 'work') => join(home.configDir, 'profiles', `${name}.toml`);
const base = () => readFileSync(settingsFile(), 'utf8');
const profile = (name = 'work') => readFileSync(profileFile(name), 'utf8');
/** What `yolop --profile work` runs for x. */
const underProfile = () => hostRuns(base(), 'x', profile());

beforeEach(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', 'x'), { name: 'x', yolop: { config_schema: SCHEMA } });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
  mkdirSync(join(home.configDir, 'profiles'), { recursive: true });
  writeFileSync(settingsFile(), BASE);
});
afterEach(() => home.cleanup());

async function ok(args: string[]): Promise<any> {
  const r = await runCli([...args, '--json'], { env: home.env });
  expect(r.code, `${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(0);
  return jsonOf(r);
}
const listed = async (...extra: string[]) => (await ok(['list', ...extra])).extensions.find((e: { name: string }) => e.name === 'x');
const field = (item: any, key: string) => item.config.find((f: { key: string }) => f.key === key);

describe('a profile that does not exist', () => {
  it('is exit 3 (E_NOT_FOUND) naming the profiles there are, for every command; nothing is written', async () => {
    writeFileSync(profileFile('work'), 'model = "big"\n');
    writeFileSync(profileFile('home'), '');
    for (const args of [['enable', 'x'], ['enable', 'x', '--config', 'port=1'], ['disable', 'x'], ['list'], ['info', 'x']]) {
      const r = await runCli([...args, '--profile', 'nope', '--json'], { env: home.env });
      expect(r.code, args.join(' ')).toBe(3);
      const error = jsonOf(r).error;
      expect(error.code).toBe('E_NOT_FOUND');
      expect(error.message).toContain(profileFile('nope'));
      expect(error.details.profiles).toEqual(['home', 'work']);
      expect(error.hint).toContain('home, work');
    }
    expect(existsSync(profileFile('nope'))).toBe(false);
    expect(base()).toBe(BASE);
    expect(readdirSync(join(home.configDir, 'profiles')).sort()).toEqual(['home.toml', 'work.toml']);
  });

  it('a name that is no file name is exit 2, nothing read outside the profiles directory', async () => {
    const r = await runCli(['enable', 'x', '--profile', '../settings', '--json'], { env: home.env });
    expect(r.code).toBe(2);
    expect(base()).toBe(BASE);
    // The hint names the directory the user should look in, not a placeholder.
    expect(jsonOf(r).error.hint).toContain(join(home.configDir, 'profiles', '<name>.toml'));
  });
});

describe('a profile that is there but unusable', () => {
  it.each([
    ['not valid TOML', () => writeFileSync(profileFile(), 'capabilities = [\n'), /^The profile file (\S+) is unreadable: not valid TOML at line 2/],
    ['a directory', () => mkdirSync(profileFile()), /^The profile file (\S+) is a directory, not a regular file/],
  ])('%s: exit 7 naming the profile file (the path the user should open), nothing written', async (_what, make, message) => {
    make();
    for (const args of [
      ['enable', 'x'],
      ['disable', 'x'],
      ['enable', 'x', '--config', 'port=1'],
    ]) {
      const r = await runCli([...args, '--profile', 'work', '--json'], { env: home.env });
      expect(r.code, args.join(' ')).toBe(7);
      const error = jsonOf(r).error;
      expect(error.message).toMatch(message);
      expect(error.message.match(message)?.[1]).toBe(profileFile());
      expect(error.details.file).toBe(profileFile());
    }
    expect(base()).toBe(BASE);
  });
});

describe('a profile layered over settings.toml (the default mode)', () => {
  it('disable writes the profile only; yolop --profile stops running x while plain yolop still runs it', async () => {
    writeFileSync(profileFile(), '# my work profile\nmodel = "big"\n');
    await ok(['disable', 'x', '--profile', 'work']);
    expect(base()).toBe(BASE);
    expect(profile()).toBe('# my work profile\nmodel = "big"\n\n[[capabilities]]\nref = "ext:x"\nenabled = false\n');
    expect(underProfile().enabled).toBe(false);
    expect(hostRuns(base(), 'x').enabled).toBe(true);
    expect((await listed('--profile', 'work')).enabled).toBe(false);
    expect((await listed()).enabled).toBe(true);
    expect((await ok(['info', 'x', '--profile', 'work'])).enabled).toBe(false);
    expect((await ok(['info', 'x'])).enabled).toBe(true);
  });

  it('enable --config writes into the profile; the host merges the base config with it; nothing the user wrote is lost', async () => {
    writeFileSync(profileFile(), '[[capabilities]]\nref = "ext:x"\nenabled = false\nport = 1 # kept while disabled\n');
    expect(underProfile()).toEqual({ enabled: false, config: {} });
    const e = await ok(['enable', 'x', '--profile', 'work', '--config', 'port=7']);
    expect(e).toMatchObject({ enabled: true, was_enabled: false, changed: true });
    expect(base()).toBe(BASE);
    expect(profile()).toBe('[[capabilities]]\nref = "ext:x"\nport = 7 # kept while disabled\n');
    expect(underProfile()).toEqual({ enabled: true, config: { endpoint: 'https://base.example', port: 7 } });
    const item = await listed('--profile', 'work');
    expect(field(item, 'endpoint')).toMatchObject({ set: true, source: 'settings' });
    expect(field(item, 'port')).toMatchObject({ set: true, source: 'settings' });
    // Disabling again keeps the key; enabling brings the same file back.
    const enabled = profile();
    await ok(['disable', 'x', '--profile', 'work']);
    expect(subjectEntries(profile(), 'x')).toEqual([{ ref: 'ext:x', enabled: false, port: 7 }]);
    await ok(['enable', 'x', '--profile', 'work']);
    expect(profile()).toBe(enabled);
  });

  it('enable over a base file that disables x adds a bare entry to the profile, and leaves the base alone', async () => {
    const disabledBase = `${BASE}\n[[capabilities]]\nref = "ext:x"\nenabled = false\n`;
    writeFileSync(settingsFile(), disabledBase);
    writeFileSync(profileFile(), 'model = "big"\n');
    await ok(['enable', 'x', '--profile', 'work']);
    expect(base()).toBe(disabledBase);
    expect(profile()).toBe('model = "big"\n\n[[capabilities]]\nref = "ext:x"\n');
    expect(underProfile()).toEqual({ enabled: true, config: {} });
    expect(hostRuns(base(), 'x').enabled).toBe(false);
  });
});

describe('what enable and disable say they wrote', () => {
  it('name the profile they wrote, in --json and in words, never settings.toml', async () => {
    writeFileSync(profileFile(), 'model = "big"\n');
    const e = await runCli(['enable', 'x', '--profile', 'work', '--config', 'port=7'], { env: home.env });
    expect(e.code, e.stderr).toBe(0);
    expect(profile()).toContain('port = 7');
    expect(base()).toBe(BASE);
    expect(e.stdout).toContain('Saved port in profile work.');
    expect(e.stdout).not.toContain('settings.toml.');
    await ok(['disable', 'x', '--profile', 'work']).then((d) => expect(d.profile).toBe('work'));
    expect((await ok(['enable', 'x', '--profile', 'work'])).profile).toBe('work');
    expect((await ok(['enable', 'x'])).profile).toBeNull();
  });
});

describe('capabilities_mode = "replace": the base file is not read', () => {
  it('list and info report the profile alone; enable --config writes the profile', async () => {
    writeFileSync(profileFile(), 'capabilities_mode = "replace"\n\n[[capabilities]]\nref = "ext:x"\nport = 3\n');
    expect(underProfile()).toEqual({ enabled: true, config: { port: 3 } });
    const item = await listed('--profile', 'work');
    expect(item.enabled).toBe(true);
    expect(field(item, 'endpoint')).toMatchObject({ set: false, source: 'unset' });
    expect(field(item, 'port')).toMatchObject({ set: true });
    await ok(['enable', 'x', '--profile', 'work', '--config', 'endpoint=https://work.example']);
    expect(base()).toBe(BASE);
    expect(underProfile()).toEqual({ enabled: true, config: { port: 3, endpoint: 'https://work.example' } });
    // Disable under the profile: the profile's entry says so; the base file still enables x for plain yolop.
    await ok(['disable', 'x', '--profile', 'work']);
    expect(underProfile().enabled).toBe(false);
    expect(subjectEntries(profile(), 'x')).toEqual([{ ref: 'ext:x', enabled: false, port: 3, endpoint: 'https://work.example' }]);
    expect(hostRuns(base(), 'x').enabled).toBe(true);
  });
});
