import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { LOGFIRE_SCHEMA } from '../helpers/extension-fixture.js';

// A whole user session through the real CLI (path install, no network): the
// canary secret must not appear in any byte of stdout or stderr, human or --json.
const CANARY = 'CANARY-session-c0ffee';
// A minimal YEP server that also logs its injected secret to stderr (doctor must redact it).
const SERVER = `#!/usr/bin/env node
process.stderr.write('starting with token ' + process.env.LOGFIRE_TOKEN + '\\n');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  for (let i; (i = buf.indexOf('\\n')) >= 0; ) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.method === 'initialize') send({ id: m.id, result: { protocol_version: '1.0', name: 'logfire', capabilities: ['tools'], capability_params: { tools: [{ name: 'logfire_tool' }] } } });
    else if (m.method === 'shutdown') { send({ id: m.id, result: {} }); process.exit(0); }
    else if (m.method && m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'method not found' } });
  }
});
process.stdin.on('end', () => process.exit(0));
`;
const USER_SETTINGS = '# my settings\ntheme = "dark"\n\n[[capabilities]]\nref = "lsp"\n';
const HOST_SECRETS = '[github]\ntoken = "ghp_keep"\n';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
  mkdirSync(home.configDir, { recursive: true });
  writeFileSync(join(home.configDir, 'settings.toml'), USER_SETTINGS);
  writeFileSync(join(home.configDir, 'connections.toml'), HOST_SECRETS, { mode: 0o600 });
});
afterEach(() => home.cleanup());

describe('install, enable, set-secret, list, doctor, disable, remove', () => {
  it("never shows the secret and leaves the user's other settings and secrets byte for byte", async () => {
    const pkg = writePackage(join(home.root, 'src', 'logfire'), { name: 'logfire', yolop: { config_schema: LOGFIRE_SCHEMA } });
    writeFileSync(join(pkg, 'bin', 'logfire-server'), SERVER);
    const debug = { ...home.env, YEP_EXT_DEBUG: '1' };
    const runs: [string, RunResult][] = [];
    const run = async (args: string[], input?: string, env = home.env) => {
      const r = await runCli(args, { env, ...(input !== undefined ? { input } : {}) });
      runs.push([args.join(' '), r]);
      return r;
    };

    expect((await run(['install', pkg])).code).toBe(0);
    const incomplete = await run(['enable', 'logfire', '-c', 'endpoint=https://e.example', '-c', 'mode=fast', '--json']);
    expect(incomplete.code).toBe(10);
    expect((await run(['set-secret', 'logfire', 'token', '--stdin', '--json'], `${CANARY}\n`, debug)).code).toBe(0);
    expect((await run(['set-secret', 'logfire', 'token', '--stdin'], CANARY, debug)).code).toBe(0);
    expect((await run(['enable', 'logfire'], undefined, debug)).code).toBe(0);
    const enabledJson = await run(['enable', 'logfire', '--json']);
    expect(jsonOf(enabledJson).fields.find((f: any) => f.key === 'token')).toEqual({
      key: 'token',
      secret: true,
      required: true,
      set: true,
      source: 'secrets',
      env: 'LOGFIRE_TOKEN',
      kept: false,
    });
    expect((await run(['list'], undefined, debug)).code).toBe(0);
    expect((await run(['list', '--json'])).code).toBe(0);
    // doctor injects the secret as LOGFIRE_TOKEN, exactly as the host would, and never shows it.
    const doctor = await run(['doctor', 'logfire'], undefined, debug);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    const doctorJson = await run(['doctor', 'logfire', '--json']);
    expect(jsonOf(doctorJson).ok).toBe(true);
    expect((await run(['disable', 'logfire'])).code).toBe(0);
    expect((await run(['enable', 'logfire', '--json'])).code).toBe(0);
    // Refusals along the way must not leak either.
    expect((await run(['set-secret', 'logfire', 'token', CANARY])).code).toBe(2);
    expect((await run(['enable', 'logfire', '--config', `token=${CANARY}`, '--json'])).code).toBe(2);

    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).toBe(`${HOST_SECRETS}\n["ext:logfire"]\ntoken = "${CANARY}"\n`);
    expect(readFileSync(join(home.configDir, 'settings.toml'), 'utf8').startsWith(USER_SETTINGS)).toBe(true);

    const removed = await run(['remove', 'logfire', '--json'], undefined, debug);
    expect(removed.code, removed.stderr).toBe(0);
    expect(readFileSync(join(home.configDir, 'settings.toml'), 'utf8')).toBe(USER_SETTINGS);
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).toBe(HOST_SECRETS);

    for (const [label, r] of runs) {
      expect(r.stdout, label).not.toContain(CANARY);
      expect(r.stderr, label).not.toContain(CANARY);
    }
  });
});
