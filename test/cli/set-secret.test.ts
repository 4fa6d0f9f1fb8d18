import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writeExtension } from '../helpers/extension-fixture.js';
import { hostRuns } from '../helpers/settings-model.js';

const CANARY = 'CANARY-cli-5e3d9f';
const HOST_TABLES = '# yolop connectors\n[github]\ntoken = "ghp_keep_me"\n\n["ext:other"]\nkey = "v"\n';
const FAKE = resolve(import.meta.dirname, '../fixtures/fake-keyring.mjs');

let home: TempHome;
let secretsFile: string;
beforeEach(() => {
  home = makeTempHome();
  secretsFile = join(home.configDir, 'connections.toml');
  writeExtension(join(home.configDir, 'extensions'), 'logfire');
});
afterEach(() => home.cleanup());

/** Run the CLI through `sh -c 'umask 000; exec node ...'` so the file mode is decided by yep-ext alone. */
function runUnderUmask000(args: string[], input: string): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('/bin/sh', ['-c', `umask 000; exec ${quoted}`], { env: home.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    child.stdin.end(input);
  });
}

const noCanary = (r: RunResult) => {
  expect(r.stdout).not.toContain(CANARY);
  expect(r.stderr).not.toContain(CANARY);
};

describe('yep-ext set-secret', () => {
  it('--stdin under umask 000 creates connections.toml with mode 0600 and keeps other tables', async () => {
    const r = await runUnderUmask000(['set-secret', 'logfire', 'token', '--stdin', '--json'], `${CANARY}\n`);
    expect(r.code, r.stderr).toBe(0);
    noCanary(r);
    expect(jsonOf(r)).toMatchObject({ name: 'logfire', field: 'token', action: 'set', changed: true, store: 'file', host_visible: true, env: 'LOGFIRE_TOKEN' });
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(secretsFile, 'utf8')).toBe(`["ext:logfire"]\ntoken = "${CANARY}"\n`);

    // With host tables present: they survive byte for byte, the mode stays 0600.
    writeFileSync(secretsFile, `${HOST_TABLES}\n${readFileSync(secretsFile, 'utf8')}`, { mode: 0o600 });
    const r2 = await runUnderUmask000(['set-secret', 'yolop-extension-logfire', 'token', '--stdin'], 'rotated-value');
    expect(r2.code).toBe(0);
    const text = readFileSync(secretsFile, 'utf8');
    expect(text).toBe(`${HOST_TABLES}\n["ext:logfire"]\ntoken = "rotated-value"\n`);
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
  });

  it('refuses a value on the command line without echoing it, and stores nothing', async () => {
    for (const args of [
      ['set-secret', 'logfire', 'token', CANARY],
      ['set-secret', 'logfire', 'token', `--value=${CANARY}`],
      ['set-secret', 'logfire', 'token', '--stdin', CANARY, '--json'],
    ]) {
      const r = await runCli(args, { env: home.env, input: 'x' });
      expect(r.code, args.join(' ')).toBe(2);
      noCanary(r);
      expect(r.stderr + r.stdout).toMatch(/not shown|does not take the value as an argument/);
    }
    expect(existsSync(secretsFile)).toBe(false);
  });

  it('refuses undeclared and non-secret fields, listing the declared secret fields', async () => {
    const r = await runCli(['set-secret', 'logfire', 'tokne', '--stdin', '--json'], { env: home.env, input: CANARY });
    expect(r.code).toBe(2);
    expect(jsonOf(r).error).toMatchObject({
      code: 'E_USAGE',
      message: 'logfire declares no config field by the name given (not repeated here: it may be a value).',
      hint: 'Did you mean token? Secret fields of logfire: token.',
    });
    const n = await runCli(['set-secret', 'logfire', 'endpoint', '--stdin'], { env: home.env, input: CANARY });
    expect(n.code).toBe(2);
    expect(n.stderr).toContain('not a secret');
    noCanary(r);
    noCanary(n);
    expect(existsSync(secretsFile)).toBe(false);
  });

  it('without a TTY and without --stdin there is nothing to read: exit 2, clear hint', async () => {
    const r = await runCli(['set-secret', 'logfire', 'token'], { env: home.env, input: CANARY });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--stdin');
    expect(existsSync(secretsFile)).toBe(false);
  });

  it('an empty --stdin stores nothing, and its hint is the command to type for this extension and field', async () => {
    for (const input of ['', '\n']) {
      const r = await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: home.env, input });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('error: Standard input was empty; no secret was stored.');
      expect(r.stderr).toContain('| yep-ext set-secret logfire token --stdin');
      expect(r.stderr).not.toContain('<name>');
      expect(existsSync(secretsFile)).toBe(false);
    }
  });

  it('validates the value against the schema without quoting it', async () => {
    const r = await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: home.env, input: 'abc' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('token must NOT have fewer than 4 characters');
    expect(r.stderr).not.toContain('abc');
  });

  it('--unset removes the secret and leaves other tables', async () => {
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(secretsFile, `${HOST_TABLES}\n["ext:logfire"]\ntoken = "${CANARY}"\n`, { mode: 0o600 });
    const r = await runCli(['set-secret', 'logfire', 'token', '--unset', '--json'], { env: home.env });
    expect(r.code).toBe(0);
    noCanary(r);
    expect(jsonOf(r)).toMatchObject({ action: 'unset', changed: true });
    expect(readFileSync(secretsFile, 'utf8')).toBe(HOST_TABLES);
  });

  it('a world-readable connections.toml is made 0600 even when nothing is written (same value, unset of an absent field)', async () => {
    mkdirSync(home.configDir, { recursive: true });
    const text = `${HOST_TABLES}\n["ext:logfire"]\ntoken = "${CANARY}"\n`;
    writeFileSync(secretsFile, text);
    const runs: Array<[string[], string]> = [
      [['set-secret', 'logfire', 'token', '--stdin', '--json'], CANARY],
      [['set-secret', 'logfire', 'token', '--unset', '--json'], ''],
      [['set-secret', 'other', 'nothing', '--unset', '--json'], ''],
    ];
    for (const [args, input] of runs) {
      if (args.includes('--unset') && args[1] === 'logfire') writeFileSync(secretsFile, HOST_TABLES);
      chmodSync(secretsFile, 0o644);
      const before = readFileSync(secretsFile, 'utf8');
      const r = await runCli(args, { env: home.env, input });
      expect(r.code, r.stderr).toBe(0);
      noCanary(r);
      expect(jsonOf(r)).toMatchObject({ changed: false });
      expect(statSync(secretsFile).mode & 0o777, args.join(' ')).toBe(0o600);
      expect(r.stderr).toContain('was readable by other users (mode 0644); it is now 0600');
      expect(readFileSync(secretsFile, 'utf8')).toBe(before);
    }
    expect(text).toContain(CANARY);
  });

  it('a secret field that declares no env: stored, with a warning that yolop never passes it to the server', async () => {
    writeExtension(join(home.configDir, 'extensions'), 'noenv', { type: 'object', properties: { token: { type: 'string', secret: true } } });
    const r = await runCli(['set-secret', 'noenv', 'token', '--stdin', '--json'], { env: home.env, input: CANARY });
    expect(r.code, r.stderr).toBe(0);
    noCanary(r);
    expect(jsonOf(r)).toMatchObject({ changed: true, store: 'file', env: null });
    expect(readFileSync(secretsFile, 'utf8')).toContain(`token = "${CANARY}"`);
    expect(r.stderr).toContain('noenv.token declares no "env" in noenv\'s plugin.json: yolop never passes it to the server');
    // A field with env: no such warning.
    const ok = await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: home.env, input: CANARY });
    expect(ok.code).toBe(0);
    expect(ok.stderr).not.toContain('declares no "env"');
    expect(ok.stdout).toContain('yolop passes it to the server as LOGFIRE_TOKEN once logfire is enabled');
  });

  it('says yolop passes the secret to the server only when settings.toml, read as the host reads it, enables the extension', async () => {
    const settings = join(home.configDir, 'settings.toml');
    const hostEnables = () => existsSync(settings) && hostRuns(readFileSync(settings, 'utf8'), 'logfire').enabled;
    const off = await runCli(['set-secret', 'logfire', 'token', '--stdin', '--json'], { env: home.env, input: CANARY });
    expect(off.code, off.stderr).toBe(0);
    expect(hostEnables()).toBe(false);
    expect(jsonOf(off)).toMatchObject({ enabled: false, env: 'LOGFIRE_TOKEN' });
    const offHuman = await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: home.env, input: 'another-value' });
    expect(offHuman.stdout).not.toMatch(/yolop passes it to the server as LOGFIRE_TOKEN\.$/m);
    expect(offHuman.stdout).toContain('once logfire is enabled (`yep-ext enable logfire`)');
    expect((await runCli(['enable', 'logfire', '--config', 'mode=fast', '--config', 'endpoint=https://x.example'], { env: home.env })).code).toBe(0);
    expect(hostEnables()).toBe(true);
    const on = await runCli(['set-secret', 'logfire', 'token', '--stdin', '--json'], { env: home.env, input: CANARY });
    expect(jsonOf(on)).toMatchObject({ enabled: true, env: 'LOGFIRE_TOKEN' });
    const onHuman = await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: home.env, input: 'third-value' });
    expect(onHuman.stdout).toMatch(/yolop passes it to the server as LOGFIRE_TOKEN\.$/m);
  });

  it('--keychain without a reachable keychain falls back to the file, saying so', async () => {
    const env = { ...home.env, YEP_EXT_TEST_KEYCHAIN_MODULE: FAKE, FAKE_KEYRING_MODE: 'denied' };
    const r = await runCli(['set-secret', 'logfire', 'token', '--stdin', '--keychain', '--json'], { env, input: CANARY });
    expect(r.code).toBe(0);
    noCanary(r);
    expect(jsonOf(r)).toMatchObject({ store: 'file', host_visible: true });
    expect(r.stderr).toMatch(/warning: The OS keychain is not reachable \(Couldn't access platform storage: AccessDenied\)/);
    expect(readFileSync(secretsFile, 'utf8')).toContain(CANARY);
  });

  it('--keychain with a working keychain stores there and says yolop will not see it', async () => {
    const env = { ...home.env, YEP_EXT_TEST_KEYCHAIN_MODULE: FAKE, FAKE_KEYRING_MODE: 'ok' };
    const r = await runCli(['set-secret', 'logfire', 'token', '--stdin', '--keychain'], { env, input: CANARY });
    expect(r.code, r.stderr).toBe(0);
    noCanary(r);
    expect(r.stdout).toContain('yolop reads secrets only from connections.toml');
    expect(existsSync(secretsFile)).toBe(false);
  });
});

describe('a canary secret never reaches output', () => {
  it('across enable, set-secret, enable --json, disable', async () => {
    const runs: RunResult[] = [];
    runs.push(await runCli(['enable', 'logfire', '-c', 'endpoint=https://e.example', '-c', 'mode=fast', '--json'], { env: home.env }));
    runs.push(await runCli(['set-secret', 'logfire', 'token', '--stdin', '--json'], { env: { ...home.env, YEP_EXT_DEBUG: '1' }, input: CANARY }));
    runs.push(await runCli(['set-secret', 'logfire', 'token', '--stdin'], { env: { ...home.env, YEP_EXT_DEBUG: '1' }, input: CANARY }));
    runs.push(await runCli(['enable', 'logfire', '--json'], { env: home.env }));
    runs.push(await runCli(['enable', 'logfire'], { env: { ...home.env, YEP_EXT_DEBUG: '1' } }));
    runs.push(await runCli(['enable', 'logfire', '--config', `token=${CANARY}`], { env: { ...home.env, YEP_EXT_DEBUG: '1' } }));
    runs.push(await runCli(['disable', 'logfire', '--json'], { env: home.env }));
    // A corrupt secrets file whose broken line holds the canary: the error names a line, not the text.
    writeFileSync(secretsFile, `["ext:logfire"]\ntoken = "${CANARY}\n`, { mode: 0o600 });
    runs.push(await runCli(['set-secret', 'logfire', 'token', '--stdin', '--json'], { env: { ...home.env, YEP_EXT_DEBUG: '1' }, input: 'other' }));
    runs.push(await runCli(['enable', 'logfire'], { env: { ...home.env, YEP_EXT_DEBUG: '1' } }));
    expect(runs.map((r) => r.code)).toEqual([10, 0, 0, 0, 0, 2, 0, 7, 7]);
    for (const r of runs) noCanary(r);
  });
});
