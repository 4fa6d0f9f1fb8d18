import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { LOGFIRE_SCHEMA } from '../helpers/extension-fixture.js';
import { writePackage } from '../helpers/packages.js';
import { agentView } from '../helpers/agent-view.js';
import { hostRuns } from '../helpers/settings-model.js';

// The host's verbs (host-compat §11: `yolop extensions scaffold | secret set NAME FIELD |
// config show|set | uninstall`), as an agent that learned them runs them: no TTY, --json.
let home: TempHome;
let settingsFile: string;
const run = (args: string[], input?: string) => runCli(args, { env: home.env, ...(input !== undefined ? { input } : {}) });

beforeEach(async () => {
  home = makeTempHome();
  settingsFile = join(home.configDir, 'settings.toml');
  const pkg = writePackage(join(home.root, 'src', 'logfire'), { name: 'logfire', yolop: { config_schema: LOGFIRE_SCHEMA } });
  const r = await run(['install', pkg]);
  expect(r.code, r.stderr).toBe(0);
});
afterEach(() => home.cleanup());

describe('config set / config show', () => {
  it('config set writes typed values into the entry the host reads, without enabling; enable then runs with them', async () => {
    const user = '# mine\ntheme = "dark"\n';
    writeFileSync(settingsFile, user);
    const r = await run(['config', 'set', 'yolop-extension-logfire', 'endpoint=https://t.example', 'port=8080', 'tags=a,b', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = jsonOf(r);
    expect(doc).toMatchObject({ name: 'logfire', enabled: false, changed: true, config_set: ['endpoint', 'port', 'tags'] });
    const text = readFileSync(settingsFile, 'utf8');
    expect(text.startsWith(user)).toBe(true);
    // Not enabled: the host loads nothing, and the values wait where enable brings them back.
    expect(agentView(home.configDir)).toEqual({});
    expect(hostRuns(text, 'logfire').enabled).toBe(false);
    const e = await run(['enable', 'logfire', '--config', 'mode=fast', '--json']);
    expect(e.code).toBe(10); // token (a secret) is still missing
    expect(agentView(home.configDir).logfire?.config).toEqual({ endpoint: 'https://t.example', mode: 'fast', port: 8080, tags: ['a', 'b'] });
  });

  it('config set on an enabled extension changes what the host gives the server, and show reads it back (values for config, set/unset for secrets)', async () => {
    await run(['set-secret', 'logfire', 'token', '--stdin'], 'tok-12345');
    expect((await run(['enable', 'logfire', '--config', 'endpoint=https://a.example', '--config', 'mode=slow'])).code).toBe(0);
    const r = await run(['config', 'set', 'logfire', 'endpoint=https://b.example']);
    expect(r.code, r.stderr).toBe(0);
    expect(agentView(home.configDir).logfire?.config).toEqual({ endpoint: 'https://b.example', mode: 'slow' });
    const show = await run(['config', 'show', 'logfire', '--json']);
    expect(show.code).toBe(0);
    const fields = Object.fromEntries(jsonOf(show).fields.map((f: { key: string }) => [f.key, f]));
    expect(fields.endpoint).toMatchObject({ value: 'https://b.example', source: 'settings' });
    expect(fields.service_name).toMatchObject({ value: 'yolop', source: 'default' });
    expect(fields.token).toMatchObject({ secret: true, set: true, value: null });
    for (const out of [show.stdout, (await run(['config', 'show', 'logfire'])).stdout]) expect(out).not.toContain('tok-12345');
  });

  it('a secret field, an unknown field or a bad value is refused, nothing written, and a secret value is never echoed', async () => {
    writeFileSync(settingsFile, 'theme = "dark"\n');
    for (const [args, code] of [
      [['config', 'set', 'logfire', 'token=sk-live-SECRET'], 2],
      [['config', 'set', 'logfire', 'nope=1'], 2],
      [['config', 'set', 'logfire', 'port=99999'], 2],
      [['config', 'set', 'logfire'], 2],
      [['config', 'set', 'ghost', 'a=1'], 3],
    ] as const) {
      for (const json of [false, true]) {
        const r = await run([...args, ...(json ? ['--json'] : [])]);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
        expect(r.stdout + r.stderr).not.toContain('sk-live-SECRET');
      }
    }
    expect(readFileSync(settingsFile, 'utf8')).toBe('theme = "dark"\n');
    expect(existsSync(join(home.configDir, 'connections.toml'))).toBe(false);
  });

  it('a secret put where a name, a field or a key=value belongs is refused without being repeated, and nothing is stored', async () => {
    writeFileSync(settingsFile, 'theme = "dark"\n');
    const SECRET = 'sk-live-ARGV-0123456789';
    for (const args of [
      ['secret', 'set', 'logfire', `token=${SECRET}`],
      ['set-secret', 'logfire', SECRET],
      ['set-secret', 'logfire', `token=${SECRET}`, '--unset'],
      ['config', 'set', 'logfire', SECRET],
      ['enable', 'logfire', '--config', 'token', `=${SECRET}`],
      ['enable', 'logfire', `--config=token=${SECRET}`],
      ['config', 'show', 'logfire', `token=${SECRET}`],
    ]) {
      for (const json of [false, true]) {
        const r = await run([...args, ...(json ? ['--json'] : [])]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stdout + r.stderr, args.join(' ')).not.toContain(SECRET.slice(0, 12));
      }
    }
    expect(readFileSync(settingsFile, 'utf8')).toBe('theme = "dark"\n');
    expect(existsSync(join(home.configDir, 'connections.toml'))).toBe(false);
  });

  it('--profile writes the profile file the host reads under --profile, and a missing profile is refused', async () => {
    const missing = await run(['config', 'set', 'logfire', 'endpoint=https://p.example', '--profile', 'work']);
    expect(missing.code).toBe(3);
    mkdirSync(join(home.configDir, 'profiles'), { recursive: true });
    writeFileSync(join(home.configDir, 'profiles', 'work.toml'), '');
    const r = await run(['config', 'set', 'logfire', 'endpoint=https://p.example', '--profile', 'work']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(settingsFile)).toBe(false);
    expect(readFileSync(join(home.configDir, 'profiles', 'work.toml'), 'utf8')).toContain('endpoint = "https://p.example"');
    expect(jsonOf(await run(['config', 'show', 'logfire', '--profile', 'work', '--json'])).profile).toBe('work');
  });
});

describe("the host's other verbs", () => {
  it('secret set NAME FIELD stores like set-secret, and a value on the command line is refused unechoed', async () => {
    const r = await run(['secret', 'set', 'logfire', 'token', '--stdin', '--json'], 'tok-abcdef');
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).toContain('tok-abcdef');
    const bad = await run(['secret', 'set', 'logfire', 'token', 'sk-typed-SECRET']);
    expect(bad.code).toBe(2);
    expect(bad.stdout + bad.stderr).not.toContain('sk-typed-SECRET');
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).not.toContain('sk-typed-SECRET');
  });

  it('reload (yep-ext has no session) is list: what yolop loads next, nothing written', async () => {
    await run(['set-secret', 'logfire', 'token', '--stdin'], 'tok-12345');
    // Enabled even while a required field is unset (exit 10): yolop loads it.
    expect((await run(['enable', 'logfire', '--config', 'endpoint=https://a.example'])).code).toBe(10);
    const files = () =>
      [settingsFile, join(home.configDir, 'extensions', 'extensions.lock'), join(home.configDir, 'connections.toml')].map((f) => readFileSync(f, 'utf8'));
    const before = files();
    const r = await run(['reload', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r)).toEqual(jsonOf(await run(['list', '--json'])));
    expect(jsonOf(r).extensions).toEqual([expect.objectContaining({ name: 'logfire', enabled: true })]);
    expect(r.stdout).not.toContain('tok-12345');
    expect(files()).toEqual(before);
    expect((await run(['disable', 'logfire'])).code).toBe(0);
    expect(jsonOf(await run(['reload', '--json'])).extensions).toEqual([expect.objectContaining({ name: 'logfire', enabled: false })]);
    expect(agentView(home.configDir)).toEqual({});
  });

  it('scaffold is new, and uninstall is remove', async () => {
    const s = await run(['scaffold', 'weather', '--dir', home.root, '-l', 'py', '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(existsSync(join(home.root, 'weather', 'plugin.json'))).toBe(true);
    const u = await run(['uninstall', 'logfire', '--json']);
    expect(u.code, u.stderr).toBe(0);
    expect(existsSync(join(home.configDir, 'extensions', 'logfire'))).toBe(false);
  });
});
