/**
 * settings.toml through the CLI on a real temp home, checked as the host reads it
 * (host-compat §5; the in-order reading is test/helpers/settings-model.ts, itself
 * checked against the host's own code): entries in file order, plain entries merged
 * into the first instance, `enabled = false` removing every instance, `append = true`
 * adding one; and no enable, disable or --config ever drops a key the user wrote.
 * Needs a build (npm run build).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { hostInstances, hostRuns, subjectEntries } from '../helpers/settings-model.js';
import { doctorConfigLoader } from '../../src/core/doctor/doctor-config.js';
import { loadInstalledManifest } from '../../src/core/store/installed-manifest.js';

const SCHEMA = { type: 'object', properties: { endpoint: { type: 'string' }, port: { type: 'integer' } } };

let home: TempHome;
let settingsFile: string;
beforeEach(async () => {
  home = makeTempHome();
  settingsFile = join(home.configDir, 'settings.toml');
  const pkg = writePackage(join(home.root, 'src', 'x'), { name: 'x', yolop: { config_schema: SCHEMA } });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
});
afterEach(() => home.cleanup());

async function ok(args: string[]): Promise<any> {
  const r = await runCli([...args, '--json'], { env: home.env });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return jsonOf(r);
}
const listed = async () => (await ok(['list'])).extensions.find((e: { name: string }) => e.name === 'x');
const host = () => hostRuns(readFileSync(settingsFile, 'utf8'), 'x');
/** The values `yep-ext doctor x` would give the server. */
const doctorValues = async () => {
  const ctx = home.ctx();
  return doctorConfigLoader(ctx)('x', await loadInstalledManifest(ctx.paths, 'x'));
};
const field = (item: any, key: string) => item.config.find((f: { key: string }) => f.key === key);

describe('enable after a later `enabled = false` entry', () => {
  it('disable then enable leaves the host loading the extension, with its config', async () => {
    mkdirSync(home.configDir, { recursive: true });
    // What the host's own enable and disable leave: the first entry with config, a later one disabling it.
    writeFileSync(
      settingsFile,
      '# mine\n[[capabilities]]\nref = "ext:x"\nendpoint = "https://e.example"\n\n[[capabilities]]\nref = "ext:x"\nenabled = false\n',
    );
    expect(host()).toEqual({ enabled: false, config: {} });
    expect((await ok(['disable', 'x'])).enabled).toBe(false);
    expect(host().enabled).toBe(false);
    const e = await ok(['enable', 'x']);
    expect(e).toMatchObject({ name: 'x', enabled: true, was_enabled: false });
    // The claim, checked as the host reads the file.
    expect(host()).toEqual({ enabled: true, config: { endpoint: 'https://e.example' } });
    // No entry deleted: enable took the `enabled = false` line away, nothing else.
    expect(readFileSync(settingsFile, 'utf8')).toBe(
      '# mine\n[[capabilities]]\nref = "ext:x"\nendpoint = "https://e.example"\n\n[[capabilities]]\nref = "ext:x"\n',
    );
    expect(subjectEntries(readFileSync(settingsFile, 'utf8'), 'x')).toHaveLength(2);
    const item = await listed();
    expect(item.enabled).toBe(true);
    expect(field(item, 'endpoint')).toMatchObject({ set: true, source: 'settings' });
  });
});

describe('config on a disabled entry after the host appends a bare one', () => {
  it('list --json reports the config as kept, not set; enable brings it back', async () => {
    await ok(['enable', 'x', '--config', 'endpoint=https://e.example', '--config', 'port=8080']);
    await ok(['disable', 'x']);
    // The host's enable appends `{ ref }` after the disabled entry and leaves that one in place.
    appendFileSync(settingsFile, '\n[[capabilities]]\nref = "ext:x"\n');
    expect(host()).toEqual({ enabled: true, config: {} });

    const item = await listed();
    expect(item.enabled).toBe(true);
    for (const key of ['endpoint', 'port']) {
      expect(field(item, key)).toMatchObject({ key, set: false, source: 'unset', kept: true });
      expect(key in host().config).toBe(false);
    }
    expect(item.problems).toEqual([expect.stringContaining('config not in effect: settings.toml keeps endpoint, port')]);
    const table = await runCli(['list'], { env: home.env });
    expect(table.stdout).toContain('endpoint: kept, not in effect');
    // doctor gives the server what the host gives it: nothing.
    expect((await doctorValues())?.values).toEqual({});

    const e = await ok(['enable', 'x']);
    expect(e).toMatchObject({ enabled: true, was_enabled: true, changed: true });
    expect(host()).toEqual({ enabled: true, config: { endpoint: 'https://e.example', port: 8080 } });
    const after = await listed();
    expect(field(after, 'endpoint')).toMatchObject({ set: true, source: 'settings' });
    expect(field(after, 'endpoint')).toHaveProperty('kept', false);
    expect(after.problems).toEqual([]);
  });

  it('a disabled extension shows its config as kept, and doctor checks it with that config', async () => {
    await ok(['enable', 'x', '--config', 'endpoint=https://e.example']);
    await ok(['disable', 'x']);
    expect(host()).toEqual({ enabled: false, config: {} });
    const item = await listed();
    expect(item.enabled).toBe(false);
    expect(field(item, 'endpoint')).toMatchObject({ set: false, kept: true });
    expect(field(item, 'port')).toHaveProperty('kept', false);
    expect(item.problems).toEqual([]);
    expect((await doctorValues())?.values).toEqual({ endpoint: 'https://e.example' });
  });
});

describe('several entries for one extension: nothing the user wrote is lost', () => {
  const write = (text: string) => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, text);
  };
  const text = () => readFileSync(settingsFile, 'utf8');

  it('two enabled tables: the host merges them; enable changes no byte, and list reports the merged config', async () => {
    const file = '# mine\n[[capabilities]]\nref = "ext:x"\nendpoint = "https://e.example" # the user\'s\n\n[[capabilities]]\nref = "ext:x"\nport = 9\n';
    write(file);
    expect(host()).toEqual({ enabled: true, config: { endpoint: 'https://e.example', port: 9 } });
    const e = await ok(['enable', 'x']);
    expect(e).toMatchObject({ enabled: true, was_enabled: true, changed: false });
    expect(text()).toBe(file);
    const item = await listed();
    expect(field(item, 'endpoint')).toMatchObject({ set: true, source: 'settings', kept: false });
    expect(field(item, 'port')).toMatchObject({ set: true, source: 'settings', kept: false });
    expect((await doctorValues())?.values).toEqual(host().config);
  });

  it('--config writes into the table the host merges last; the other table keeps its keys', async () => {
    write('[[capabilities]]\nref = "ext:x"\nendpoint = "https://e.example"\n\n[[capabilities]]\nref = "ext:x"\n');
    await ok(['enable', 'x', '--config', 'port=7']);
    expect(text()).toBe('[[capabilities]]\nref = "ext:x"\nendpoint = "https://e.example"\n\n[[capabilities]]\nref = "ext:x"\nport = 7\n');
    expect(host()).toEqual({ enabled: true, config: { endpoint: 'https://e.example', port: 7 } });
    const item = await listed();
    expect(field(item, 'endpoint')).toMatchObject({ set: true });
    expect(field(item, 'port')).toMatchObject({ set: true });
  });

  it('disable then enable: byte-identical file, every table and key kept in between', async () => {
    const file = '[[capabilities]]\nref = "ext:x"\nendpoint = "https://e.example"\n\n[[capabilities]]\nref = "ext:x"\nappend = true\nport = 2\n';
    write(file);
    expect(hostInstances(text(), 'x')).toEqual([{ endpoint: 'https://e.example' }, { port: 2 }]);
    await ok(['disable', 'x']);
    expect(host().enabled).toBe(false);
    expect(text()).toBe(file.replace('append = true\n', 'enabled = false\nappend = true\n'));
    const off = await listed();
    expect(off.enabled).toBe(false);
    expect(field(off, 'endpoint')).toMatchObject({ set: false, kept: true });
    await ok(['enable', 'x']);
    expect(text()).toBe(file);
    expect(hostInstances(text(), 'x')).toEqual([{ endpoint: 'https://e.example' }, { port: 2 }]);
  });
});
