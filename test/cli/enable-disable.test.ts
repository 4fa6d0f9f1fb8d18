import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { LOGFIRE_SCHEMA } from '../helpers/extension-fixture.js';
import { writePackage } from '../helpers/packages.js';
import { agentView } from '../helpers/agent-view.js';
import { killAt, staleLock } from '../helpers/faults.js';

// The commands run in this process through the dispatcher (test/helpers/in-process.ts), without a
// TTY; the runs killed at a checkpoint (killAt) are real child processes of bin/run.js and need a build.
let home: TempHome;
let settingsFile: string;
/** A real path install, as a user would do it. */
async function install(name: string, configSchema: Record<string, unknown>): Promise<void> {
  const pkg = writePackage(join(home.root, 'src', name), { name, yolop: { config_schema: configSchema } });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
}

beforeEach(async () => {
  home = makeTempHome();
  settingsFile = join(home.configDir, 'settings.toml');
  await install('logfire', LOGFIRE_SCHEMA);
});
afterEach(() => home.cleanup());

const USER_SETTINGS = `# my settings — do not lose this comment
theme = "dark"

[[capabilities]]
ref = "lsp"   # built-in
[capabilities.overrides]
timeout = 30

[profiles.work]
model = "big"
`;

describe('yep-ext enable / disable (no TTY)', () => {
  it('a name the lock pins whose package is gone: a moved path install points at installing it from where it is now, any other source at install --force (its recorded source); never at the crate yolop-extension-<name>; nothing written', async () => {
    const { rmSync } = await import('node:fs');
    rmSync(join(home.root, 'src', 'logfire'), { recursive: true, force: true });
    rmSync(join(home.configDir, 'extensions', 'logfire'), { force: true });
    for (const args of [
      ['enable', 'logfire', '--json'],
      ['set-secret', 'logfire', 'token', '--stdin', '--json'],
    ]) {
      const r = await runCli(args, { env: home.env, input: 'x' });
      expect(r.code, r.stdout).toBe(3);
      const err = jsonOf(r).error;
      expect(err.code).toBe('E_NOT_INSTALLED');
      // Its recorded source is the directory that is gone: `install --force` would fail on it too.
      expect(err.message).toContain(`extensions.lock pins it to the local directory ${join(home.root, 'src', 'logfire')}, which is gone`);
      expect(err.hint).toContain('yep-ext install <its directory> --yes');
      expect(err.hint).toContain('yep-ext remove logfire');
      expect(err.hint).not.toContain('--force');
      expect(err.hint).not.toContain('(yep-ext install logfire)');
    }
    // The same entry as a git source (its store entry removed by hand): reinstalled from the record.
    const lockPath = join(home.configDir, 'extensions', 'extensions.lock');
    const lockBefore = readFileSync(lockPath, 'utf8');
    const asGit = lockBefore.replace(
      /(name = "logfire"[\s\S]*?\[extensions\.source\]\n)type = "path"\npath = "[^"]*"\n/,
      '$1type = "git"\nurl = "https://example.invalid/logfire.git"\nrev = "0123456789abcdef0123456789abcdef01234567"\n',
    );
    expect(asGit).not.toBe(lockBefore);
    writeFileSync(lockPath, asGit);
    const git = await runCli(['enable', 'logfire', '--json'], { env: home.env });
    expect(git.code, git.stdout).toBe(3);
    expect(jsonOf(git).error.message).toContain('extensions.lock pins it, but its package is missing from the store');
    expect(jsonOf(git).error.hint).toContain('yep-ext install --force logfire');
    writeFileSync(lockPath, lockBefore);
    expect(existsSync(settingsFile)).toBe(false);
    expect(existsSync(join(home.configDir, 'connections.toml'))).toBe(false);
    // A name nobody pinned keeps the plain hint.
    const other = await runCli(['enable', 'nosuch', '--json'], { env: home.env });
    expect(other.code).toBe(3);
    expect(jsonOf(other).error.hint).toContain('yep-ext install nosuch');
  });

  it('a path install whose store link is gone but whose directory is still there: the error says so (not "the directory is gone"), and its hint, followed, puts the link back so yolop finds the package', async () => {
    const dir = join(home.root, 'src', 'logfire');
    const link = join(home.configDir, 'extensions', 'logfire');
    rmSync(link);
    expect(existsSync(join(dir, 'plugin.json')), 'the directory is still there').toBe(true);
    for (const args of [
      ['enable', 'logfire', '--json'],
      ['set-secret', 'logfire', 'token', '--stdin', '--json'],
    ]) {
      const r = await runCli(args, { env: home.env, input: 'x' });
      expect(r.code, r.stdout).toBe(3);
      const err = jsonOf(r).error;
      expect(err.code).toBe('E_NOT_INSTALLED');
      expect(err.message).not.toMatch(/which is gone/);
      expect(err.message).toContain(link);
      expect(err.message).toContain(`${dir}, which is still there`);
      expect(err.hint).toContain('yep-ext install --force logfire');
    }
    expect(existsSync(settingsFile)).toBe(false);
    // The hint, followed: the store entry links to the directory again and enable turns it on.
    expect((await runCli(['install', '--force', 'logfire'], { env: home.env })).code).toBe(0);
    expect(realpathSync(link)).toBe(realpathSync(dir));
    expect((await runCli(['enable', 'logfire', '--config', 'mode=fast', '--config', 'endpoint=https://x.example'], { env: home.env })).code).not.toBe(3);
    expect(parse(readFileSync(settingsFile, 'utf8'))).toMatchObject({ capabilities: [{ ref: 'ext:logfire' }] });
  });

  it('a removal killed after its commit, finished by the recovery of the next enable or set-secret: they say not installed (exit 3), not "Enabled" or "Stored", and yolop is told to load nothing', async () => {
    await interruptedRemoval('paused-1');
    const r = await runCli(['enable', 'plain'], { env: home.env });
    expect(r.stderr).toContain('Recovered: completed an interrupted removal of plain');
    expect(r.code, r.stdout).toBe(3);
    expect(r.stdout).not.toContain('Enabled');
    expect(existsSync(join(home.configDir, 'extensions', 'plain'))).toBe(false);
    // The removal took plain's table out; enable did not put one back for a package that is gone.
    expect(agentView(home.configDir)).toEqual({});
    expect(existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : '').not.toContain('ext:plain');

    // set-secret: the same window, the same answer, and no secret stored for what was removed.
    expect((await runCli(['enable', 'logfire', '--config', 'mode=fast', '--config', 'endpoint=https://x.example'], { env: home.env })).code).toBe(10);
    await killAt('remove:after-lock', ['remove', 'logfire'], home.env, join(home.root, 'paused-2'));
    staleLock(home);
    const s = await runCli(['set-secret', 'logfire', 'token', '--stdin', '--json'], { env: home.env, input: 'tok-canary-1234' });
    expect(s.code, s.stdout).toBe(3);
    expect(jsonOf(s).error.code).toBe('E_NOT_INSTALLED');
    const secretsFile = join(home.configDir, 'connections.toml');
    expect(existsSync(secretsFile) ? readFileSync(secretsFile, 'utf8') : '').not.toContain('tok-canary-1234');
    expect(agentView(home.configDir)).toEqual({});
  });

  it('missing required fields -> setup_incomplete, exit 10, enabled anyway, exact fix commands', async () => {
    const r = await runCli(['enable', 'logfire', '--config', 'mode=fast'], { env: home.env });
    expect(r.code).toBe(10);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('logfire is enabled but not configured');
    expect(r.stderr).toContain('yep-ext set-secret logfire token');
    expect(r.stderr).toContain('yep-ext enable logfire --config endpoint=<string>');
    const settings = parse(readFileSync(settingsFile, 'utf8')) as any;
    expect(settings.capabilities).toEqual([{ ref: 'ext:logfire', mode: 'fast' }]);

    const j = await runCli(['enable', 'logfire', '--json'], { env: home.env });
    expect(j.code).toBe(10);
    const out = jsonOf(j);
    expect(out.error.code).toBe('E_SETUP_INCOMPLETE');
    expect(out.error.details).toMatchObject({
      status: 'setup_incomplete',
      name: 'logfire',
      enabled: true,
      missing: [
        { key: 'token', secret: true, command: 'yep-ext set-secret logfire token' },
        { key: 'endpoint', secret: false, command: 'yep-ext enable logfire --config endpoint=<string>' },
      ],
    });
  });

  it('several missing non-secret fields: the hint is one enable with every --config (not one enable per field), then set-secret', async () => {
    const r = await runCli(['enable', 'logfire'], { env: home.env });
    expect(r.code).toBe(10);
    expect(r.stderr).toContain(
      'hint: Run:\n  yep-ext set-secret logfire token\n  yep-ext enable logfire --config endpoint=<string> --config mode=<fast|slow>\n',
    );
    expect(r.stderr.match(/yep-ext enable logfire/g)).toHaveLength(1);
  });

  it('--config sets typed values; everything else in settings.toml survives byte for byte', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, USER_SETTINGS);
    const r = await runCli(
      [
        'enable',
        'yolop-extension-logfire',
        '-c',
        'endpoint=https://logfire.example',
        '-c',
        'mode=slow',
        '-c',
        'port=8080',
        '-c',
        'ratio=0.5',
        '-c',
        'verbose=false',
        '-c',
        'tags=a,b',
        '--json',
      ],
      { env: home.env },
    );
    expect(r.code).toBe(10); // the secret is still missing
    const text = readFileSync(settingsFile, 'utf8');
    expect(text.startsWith(USER_SETTINGS.slice(0, USER_SETTINGS.indexOf('[profiles.work]')))).toBe(true);
    expect(text.endsWith('[profiles.work]\nmodel = "big"\n')).toBe(true);
    const ours = (parse(text) as any).capabilities[1];
    expect(ours).toEqual({ ref: 'ext:logfire', endpoint: 'https://logfire.example', mode: 'slow', port: 8080, ratio: 0.5, verbose: false, tags: ['a', 'b'] });
    expect(text).toContain('port = 8080\n');
    expect(text).toContain('verbose = false\n');
  });

  it('a value that violates the schema is refused and nothing is written', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, USER_SETTINGS);
    for (const bad of ['port=0', 'port=http', 'mode=medium', 'endpoint=not-a-uri', 'ratio=2']) {
      const r = await runCli(['enable', 'logfire', '--config', bad, '--json'], { env: home.env });
      expect(r.code, bad).toBe(2);
      expect(jsonOf(r).error).toMatchObject({ code: 'E_USAGE', message: expect.stringContaining('Invalid value for logfire.') });
    }
    expect(readFileSync(settingsFile, 'utf8')).toBe(USER_SETTINGS);
  });

  it('the hint of a refused value quotes the field description as one sentence (a description ending in "." does not end the hint with "..")', async () => {
    await install('described', { type: 'object', properties: { endpoint: { type: 'string', format: 'uri', description: 'Where traces go.' } } });
    const r = await runCli(['enable', 'described', '--config', 'endpoint=nope'], { env: home.env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('hint: endpoint expects a string - Where traces go.\n');
    expect(r.stderr).not.toContain('..');
  });

  it('enable / disable / enable keeps inline config and the rest of the file', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, USER_SETTINGS);
    await runCli(['enable', 'logfire', '-c', 'endpoint=https://e.example', '-c', 'mode=fast'], { env: home.env });
    const enabled = readFileSync(settingsFile, 'utf8');
    const d = await runCli(['disable', 'logfire', '--json'], { env: home.env });
    expect(d.code).toBe(0);
    expect(jsonOf(d)).toEqual({ name: 'logfire', enabled: false, changed: true, installed: true, profile: null });
    const disabled = readFileSync(settingsFile, 'utf8');
    expect((parse(disabled) as any).capabilities[1]).toEqual({ ref: 'ext:logfire', enabled: false, endpoint: 'https://e.example', mode: 'fast' });
    const d2 = await runCli(['disable', 'logfire'], { env: home.env });
    expect(d2.stdout).toContain('already disabled; nothing changed');
    await runCli(['enable', 'logfire'], { env: home.env });
    expect(readFileSync(settingsFile, 'utf8')).toBe(enabled);
  });

  it('not installed -> exit 3 with an install hint; bad names -> exit 2; corrupt settings -> exit 7, file kept', async () => {
    const r = await runCli(['enable', 'nothere'], { env: home.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('yep-ext install nothere');
    // A path is read as the directory an extension may be installed from: none is.
    expect((await runCli(['enable', '../etc'], { env: home.env })).code).toBe(3);
    expect((await runCli(['disable', 'a/b'], { env: home.env })).code).toBe(2);
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, Buffer.alloc(32));
    const c = await runCli(['enable', 'logfire', '--config', 'mode=fast'], { env: home.env });
    expect(c.code).toBe(7);
    expect(c.stderr).toContain(settingsFile);
    expect(readFileSync(settingsFile).equals(Buffer.alloc(32))).toBe(true);
  });

  it('a fully configured extension enables with exit 0 and reports field status', async () => {
    await install('simple', { type: 'object', required: ['level'], properties: { level: { type: 'integer' } } });
    const r = await runCli(['enable', 'simple', '--config', 'level=3', '--json'], { env: home.env });
    expect(r.code).toBe(0);
    expect(jsonOf(r)).toMatchObject({
      name: 'simple',
      enabled: true,
      changed: true,
      config_set: ['level'],
      fields: [{ key: 'level', set: true, source: 'settings' }],
    });
    const again = await runCli(['enable', 'simple'], { env: home.env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already enabled; nothing changed');
    expect(existsSync(join(home.configDir, 'connections.toml'))).toBe(false);
  });
});

describe('install and the enabled state the host reads', () => {
  it('an entry already in settings.toml (dotfiles, a kept entry) turns a new install on: install says so, never "Not enabled"; the file is not touched', async () => {
    const text = `${USER_SETTINGS}\n[[capabilities]]\nref = "ext:vault"\n`;
    writeFileSync(settingsFile, text);
    const pkg = writePackage(join(home.root, 'src', 'vault'), { name: 'vault' });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('Not enabled');
    expect(r.stdout).toContain('Enabled: settings.toml already turns vault on, so yolop loads it now. Run `yep-ext disable vault` to turn it off.');
    expect(readFileSync(settingsFile, 'utf8')).toBe(text);
    // The host's reading of the file: the last ext:vault entry does not say enabled = false.
    const caps = (parse(readFileSync(settingsFile, 'utf8')) as { capabilities: Array<Record<string, unknown>> }).capabilities.filter(
      (c) => c.ref === 'ext:vault',
    );
    expect(caps.at(-1)?.enabled).not.toBe(false);
    const json = await runCli(['install', pkg, '--force', '--json'], { env: home.env });
    expect(jsonOf(json).installed[0]).toMatchObject({ name: 'vault', enabled: true });
    const list = jsonOf(await runCli(['list', '--json'], { env: home.env }));
    expect(list.extensions.find((e: { name: string }) => e.name === 'vault')).toMatchObject({ enabled: true });

    // The last entry says enabled = false: "Not enabled", and `enabled: false`.
    expect((await runCli(['remove', 'vault'], { env: home.env })).code).toBe(0);
    const off = `${text}\n[[capabilities]]\nref = "ext:vault"\nenabled = false\n`;
    writeFileSync(settingsFile, off);
    const again = await runCli(['install', pkg], { env: home.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Not enabled. Run `yep-ext enable vault` to turn it on.');
    expect(readFileSync(settingsFile, 'utf8')).toBe(off);
    const forced = await runCli(['install', pkg, '--force', '--json'], { env: home.env });
    expect(jsonOf(forced).installed[0]).toMatchObject({ name: 'vault', enabled: false });
  });
});

describe('concurrent enables', () => {
  it('two processes enabling different extensions both land in settings.toml', async () => {
    await install('other', { type: 'object', properties: { level: { type: 'integer' } } });
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, USER_SETTINGS);
    const [a, b] = await Promise.all([
      runCli(['enable', 'logfire', '-c', 'mode=fast'], { env: home.env }),
      runCli(['enable', 'other', '-c', 'level=2'], { env: home.env }),
    ]);
    expect([a.code, b.code].sort()).toEqual([0, 10]);
    const text = readFileSync(settingsFile, 'utf8');
    expect(text.startsWith(USER_SETTINGS.slice(0, USER_SETTINGS.indexOf('[profiles.work]')))).toBe(true);
    const refs = (parse(text) as any).capabilities.map((c: any) => c.ref).sort();
    expect(refs).toEqual(['ext:logfire', 'ext:other', 'lsp']);
  });
  it('remove of a name with no store or lock entry but its settings table and secrets left: both removed from the files, the rest of settings.toml kept; then exit 3', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(settingsFile, USER_SETTINGS);
    const en = await runCli(['enable', 'logfire', '-c', 'endpoint=https://e.example', '-c', 'mode=fast'], { env: home.env });
    expect(en.code === 0 || en.code === 10, en.stderr).toBe(true);
    const sec = await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: home.env, input: 'tok-12345' });
    expect(sec.code, sec.stderr).toBe(0);
    const secretsFile = join(home.configDir, 'connections.toml');
    expect(readFileSync(secretsFile, 'utf8')).toContain('tok-12345');
    expect((parse(readFileSync(settingsFile, 'utf8')) as any).capabilities.map((c: any) => c.ref)).toEqual(['lsp', 'ext:logfire']);
    // The store and the lock lose it by hand (a store deleted, an older version's crash).
    const { rmSync } = await import('node:fs');
    rmSync(join(home.configDir, 'extensions', 'logfire'), { force: true });
    const lockPath = join(home.configDir, 'extensions', 'extensions.lock');
    writeFileSync(lockPath, 'version = 1\n');

    const r = await runCli(['remove', 'logfire', '--json'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r)).toMatchObject({ name: 'logfire', removed: { store: false, lock: false, settings: true, secrets: true } });
    const settings = parse(readFileSync(settingsFile, 'utf8')) as any;
    expect(settings.capabilities.map((c: any) => c.ref)).toEqual(['lsp']);
    expect(settings.theme).toBe('dark');
    expect(readFileSync(settingsFile, 'utf8')).toContain('# my settings — do not lose this comment');
    expect(readFileSync(secretsFile, 'utf8')).not.toContain('tok-12345');
    expect(readFileSync(secretsFile, 'utf8')).not.toContain('ext:logfire');

    const again = await runCli(['remove', 'logfire'], { env: home.env });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('"logfire" is not installed');
  });
});

/**
 * `plain` installed and enabled, then its removal killed just after the commit: the lock no
 * longer pins it; the store and settings.toml still have it (yolop would still load it).
 */
async function interruptedRemoval(pauseName: string): Promise<void> {
  await install('plain', { type: 'object', properties: {} });
  expect((await runCli(['enable', 'plain'], { env: home.env })).code).toBe(0);
  await killAt('remove:after-lock', ['remove', 'plain'], home.env, join(home.root, pauseName));
  staleLock(home);
  expect(agentView(home.configDir)).toHaveProperty('plain');
}

describe('a removal interrupted after its commit (read before the next command finishes it)', () => {
  it('list, verify and info say the removal was interrupted (not "placed by hand?: reinstall it"), and the `yep-ext remove` they name exits 0 having finished it, instead of "not installed" (exit 3)', async () => {
    await interruptedRemoval('paused');

    const listed = jsonOf(await runCli(['list', '--json'], { env: home.env })).extensions.find((e: { name: string }) => e.name === 'plain');
    expect(listed.problems).toEqual([expect.stringContaining('its removal was interrupted')]);
    expect(listed.problems.join()).not.toContain('placed by hand');
    const v = await runCli(['verify', '--json'], { env: home.env });
    expect(v.code).toBe(5);
    const report = jsonOf(v).error.details.extensions.find((e: { name: string }) => e.name === 'plain');
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'unlocked', message: expect.stringContaining('yep-ext remove plain') })]);
    expect(jsonOf(await runCli(['info', 'plain', '--json'], { env: home.env })).verify.problems).toEqual([
      expect.stringContaining('its removal was interrupted'),
    ]);
    // Read-only: nothing of that finished the removal.
    expect(agentView(home.configDir)).toHaveProperty('plain');

    // The command they name: its recovery finishes the removal, and that is a success, said as one.
    const r = await runCli(['remove', 'plain', '--json'], { env: home.env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(jsonOf(r)).toEqual({ name: 'plain', removed: { store: true, lock: false, settings: true, secrets: false, files: false }, leftovers: null });
    expect(agentView(home.configDir)).toEqual({});
    expect(existsSync(join(home.configDir, 'extensions', 'plain'))).toBe(false);
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
    // Once done, it is not installed: a second remove says so.
    expect((await runCli(['remove', 'plain'], { env: home.env })).code).toBe(3);
  });

  it('an install killed before the lock pinned it: list says the install was interrupted, and `yep-ext remove` exits 0 when the recovery it runs rolls the install back', async () => {
    const pkg = writePackage(join(home.root, 'src', 'fresh'), { name: 'fresh' });
    await killAt('place:before-lock', ['install', pkg], home.env, join(home.root, 'paused'));
    staleLock(home);
    expect(existsSync(join(home.configDir, 'extensions', 'fresh', 'plugin.json')), 'switched in, not pinned').toBe(true);
    const listed = jsonOf(await runCli(['list', '--json'], { env: home.env })).extensions.find((e: { name: string }) => e.name === 'fresh');
    expect(listed.problems).toEqual([expect.stringContaining('its install was interrupted before the lock pinned it')]);
    const r = await runCli(['remove', 'fresh'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Recovered: rolled back an interrupted install of fresh');
    expect(r.stdout).toContain('Removed fresh.');
    expect(existsSync(join(home.configDir, 'extensions', 'fresh'))).toBe(false);
    expect(existsSync(join(pkg, 'plugin.json')), 'the directory itself is never touched').toBe(true);
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
  });
});

describe('enable turns on only what the user approved', () => {
  const manifestOf = (name: string) => join(home.root, 'src', name, 'plugin.json');
  const edit = (name: string, change: (m: any) => void) => {
    const m = JSON.parse(readFileSync(manifestOf(name), 'utf8'));
    change(m);
    writeFileSync(manifestOf(name), JSON.stringify(m, null, 2));
  };

  it('a path package edited in place to ask for more (a match-all blocking hook, an MCP server) is not enabled: exit 8, settings.toml untouched, until update approves it', async () => {
    await install('gx', {});
    edit('gx', (m) => {
      m.yolop.hooks = [{ event: 'pre_tool_use', tool_name_glob: '*', on_error: 'block' }];
      m.yolop.mcpServers = { m: { type: 'stdio', command: 'sh', args: ['-c', 'id'] } };
    });
    const before = existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null;
    const r = await runCli(['enable', 'gx', '--json'], { env: home.env });
    expect(r.code, r.stdout + r.stderr).toBe(8);
    expect(jsonOf(r).error.code).toBe('E_CONSENT_REQUIRED');
    expect(jsonOf(r).error.hint).toContain('yep-ext update gx');
    expect(existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null).toBe(before);
    expect(Object.keys(agentView(home.configDir))).not.toContain('gx');
    // update shows the difference and takes consent for exactly it; then enable goes through.
    const plan = jsonOf(await runCli(['update', 'gx', '--dry-run', '--json'], { env: home.env }));
    expect(plan.updates[0]).toMatchObject({ consent_needed: true, diff: { widens: true } });
    const fingerprint = plan.updates[0].diff.to as string;
    const accepted = await runCli(['update', 'gx', '--accept', fingerprint], { env: home.env });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect((await runCli(['enable', 'gx'], { env: home.env })).code).toBe(0);
    expect(Object.keys(agentView(home.configDir))).toContain('gx');
  });

  it('an edit that asks for less is enabled, with a warning that update re-pins it', async () => {
    await install('narrow', LOGFIRE_SCHEMA);
    edit('narrow', (m) => {
      delete m.yolop.config_schema;
    });
    const r = await runCli(['enable', 'narrow'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/changed since it was approved.*yep-ext update narrow/);
    expect(Object.keys(agentView(home.configDir))).toContain('narrow');
  });
});
