/**
 * Every spawn of a package's code goes through the one resolver of server commands
 * (src/core/package/inspect-command.ts) and the one guard in front of package code
 * (src/core/policy/package-code.ts), under the same policy:
 * - a stdio MCP server the package contributes, whose command runs a program outside
 *   the package (`/bin/sh`, a relative path climbing out of the workspace, a bare name
 *   on PATH), is refused by `server_outside_package = false` at install, enable,
 *   policy check and doctor, and doctor does not start it (the marker it would write
 *   stays absent); without the rule doctor starts it as the host would;
 * - a bare capability-server command that nothing provides is outside the package
 *   (the host would look it up on PATH when it starts the server): the same rule refuses
 *   it at install and enable; without the rule, install, enable and doctor each name
 *   the command and what to do;
 * - a server script whose `#!` line names a relative or a missing interpreter (or ends in
 *   a carriage return) gets an error that says what is missing and what to do, at doctor
 *   (the capability server and an MCP server alike) and enable.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makePackage } from '../helpers/ext-package.js';
import { jsonOf, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';

let home: TempHome;
let workspace: string;
beforeEach(() => {
  home = makeTempHome('yep-spawn-guard-');
  mkdirSync(home.configDir, { recursive: true });
  // The workspace doctor runs in, a few levels down so a relative command can climb out of it.
  workspace = join(home.root, 'w', 'o', 'r', 'k');
  mkdirSync(workspace, { recursive: true });
});
afterEach(() => home.cleanup());

const cli = (args: string[], env: Record<string, string> = {}): Promise<RunResult> => runCli(args, { env: { ...home.env, ...env }, cwd: workspace });
const systemPolicy = (doc: Record<string, unknown>) => writeFileSync(home.env.YEP_EXT_POLICY!, stringify(doc));
const store = (name: string) => join(home.configDir, 'extensions', name);
const lockFile = () => join(home.configDir, 'extensions', 'extensions.lock');
const locked = (): string[] =>
  existsSync(lockFile()) ? ((parse(readFileSync(lockFile(), 'utf8')) as { extensions?: { name: string }[] }).extensions ?? []).map((e) => e.name) : [];
const settingsText = () => (existsSync(join(home.configDir, 'settings.toml')) ? readFileSync(join(home.configDir, 'settings.toml'), 'utf8') : '');
type Check = { name: string; status: string; detail: string };
const checksOf = (r: RunResult): Check[] => jsonOf(r).checks ?? jsonOf(r).error?.details?.checks ?? [];
const check = (r: RunResult, name: string): Check | undefined => checksOf(r).find((c) => c.name === name);

function expectRefused(r: RunResult, item: string) {
  expect(r.code, r.stdout + r.stderr).toBe(13);
  const err = jsonOf(r).error;
  expect(err.code).toBe('E_POLICY');
  expect(err.details.violations).toEqual(expect.arrayContaining([expect.objectContaining({ rule: 'grant.server_outside_package', item })]));
}

describe('a stdio MCP server a package contributes goes through the same guard and policy as its capability server', () => {
  // From the workspace (where the host starts an MCP server) up past the root: `..` at the root stays there.
  const CLIMB = `${'../'.repeat(12)}bin/sh`;
  it.each([
    ['an absolute command', '/bin/sh'],
    ['a relative command that climbs out of the workspace', CLIMB],
    ['a bare name found on PATH', 'sh'],
  ])('%s: refused at install, enable, policy check and doctor, and never started under server_outside_package = false', async (_what, command) => {
    const marker = join(home.root, 'mcp-server-ran');
    // The capability server (doctor starts it at each run) is not the subject here: the sh fixture serves it.
    const dir = makePackage(join(home.root, 'src'), 'mcpout', {
      yolop: { mcpServers: { tool: { type: 'stdio', command, args: ['-c', `: > ${marker}`] } } },
    });
    systemPolicy({ grant: { server_outside_package: false } });

    expectRefused(await cli(['install', dir, '--json']), command);
    expect(existsSync(store('mcpout'))).toBe(false);
    expect(locked()).not.toContain('mcpout');

    const path = await cli(['doctor', dir, '--json']);
    expect(path.code, path.stdout + path.stderr).toBe(9);
    expect(existsSync(marker), 'the MCP server ran').toBe(false);
    expect(check(path, 'mcp:tool')).toMatchObject({ status: 'fail', detail: expect.stringContaining('grant.server_outside_package') });

    // Installed while the policy allowed it: what is on disk is ruled at enable, policy check and doctor.
    systemPolicy({ grant: { server_outside_package: true } });
    const ok = await cli(['install', dir, '--json']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    systemPolicy({ grant: { server_outside_package: false } });
    expectRefused(await cli(['enable', 'mcpout', '--json']), command);
    expect(settingsText()).not.toContain('ext:mcpout');
    expectRefused(await cli(['policy', 'check', '--json']), command);
    const installed = await cli(['doctor', 'mcpout', '--json']);
    expect(installed.code).toBe(9);
    expect(existsSync(marker), 'the MCP server ran').toBe(false);

    // Without the rule, doctor starts it as the host would (so the marker above could appear).
    systemPolicy({ grant: { server_outside_package: true } });
    await cli(['doctor', 'mcpout', '--json']);
    expect(existsSync(marker), 'the MCP server ran once allowed').toBe(true);
  });
});

describe('a bare server command nothing provides', () => {
  it('is outside the package for server_outside_package (the host looks it up on PATH when it starts it): install and enable refuse it', async () => {
    const dir = makePackage(join(home.root, 'src'), 'nosrv', { command: 'yep-no-such-server-program' });
    systemPolicy({ grant: { server_outside_package: false } });
    expectRefused(await cli(['install', dir, '--json']), 'yep-no-such-server-program');
    expect(existsSync(store('nosrv'))).toBe(false);
    systemPolicy({ grant: { server_outside_package: true } });
    expect((await cli(['install', dir, '--json'])).code).toBe(0);
    systemPolicy({ grant: { server_outside_package: false } });
    expectRefused(await cli(['enable', 'nosrv', '--json']), 'yep-no-such-server-program');
    expect(settingsText()).not.toContain('ext:nosrv');
  });

  it('without the rule: install, enable and doctor each name the command and what to do', async () => {
    const dir = makePackage(join(home.root, 'src'), 'nosrv', { command: 'yep-no-such-server-program' });
    const install = await cli(['install', dir]);
    expect(install.code, install.stdout + install.stderr).toBe(0);
    expect(install.stdout).toContain('ship the server as bin/yep-no-such-server-program');
    const enable = await cli(['enable', 'nosrv']);
    expect(enable.code, enable.stdout + enable.stderr).toBe(0);
    expect(settingsText()).toContain('ext:nosrv');
    expect(enable.stderr).toMatch(
      /nosrv's server cannot start yet: "yep-no-such-server-program" is neither in the package's bin\/ nor on PATH: ship the server/,
    );
    const doctor = await cli(['doctor', 'nosrv', '--json']);
    expect(doctor.code).toBe(9);
    expect(check(doctor, 'command')?.detail).toContain('install the program that provides yep-no-such-server-program');
  });

  it('a file on PATH that is not executable: named, with the chmod that fixes it, at enable and doctor', async () => {
    const bin = join(home.root, 'pathbin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'yep-noexec-srv'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const dir = makePackage(join(home.root, 'src'), 'noexec', { command: 'yep-noexec-srv' });
    const env = { PATH: `${bin}:${home.env.PATH}` };
    expect((await cli(['install', dir], env)).code).toBe(0);
    const enable = await cli(['enable', 'noexec'], env);
    expect(enable.code).toBe(0);
    expect(enable.stderr).toContain(`is not executable (run \`chmod +x ${join(bin, 'yep-noexec-srv')}\`)`);
    const doctor = await cli(['doctor', 'noexec', '--json'], env);
    expect(doctor.code).toBe(9);
    expect(check(doctor, 'command')?.detail).toContain('chmod +x');
  });
});

describe('a server script whose #! line cannot start it', () => {
  /** A package whose bin/<name> starts with `shebang` and would leave a marker if it ran; also declared as a stdio MCP server. */
  function scriptPackage(name: string, shebang: string): { dir: string; marker: string } {
    const marker = join(home.root, `${name}-ran`);
    const dir = makePackage(join(home.root, 'src'), name);
    const script = join(dir, 'bin', name);
    writeFileSync(script, `${shebang}\ntouch ${marker}\n`);
    chmodSync(script, 0o755);
    const manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'));
    manifest.yolop.mcpServers = { local: { type: 'stdio', command: script } };
    writeFileSync(join(dir, 'plugin.json'), JSON.stringify(manifest));
    return { dir, marker };
  }

  it.each([
    ['a missing interpreter', '#!/opt/yep-missing/bin/python3', ['/opt/yep-missing/bin/python3', 'install python3', '#!/usr/bin/env python3']],
    ['a relative interpreter', '#!bin/node', ['relative interpreter path', 'the workspace', '#!/usr/bin/env node']],
    ['a carriage return after the interpreter', '#!/bin/sh\r', ['carriage return', 'LF line endings']],
    ['env naming a program not on PATH', '#!/usr/bin/env yep-missing-interp', ['yep-missing-interp', 'not on the server', 'install yep-missing-interp']],
  ])('%s: doctor names it and what to do, for the capability server and an MCP server; enable says so too', async (_what, shebang, says) => {
    const { dir, marker } = scriptPackage('shebang', shebang);
    const doctor = await cli(['doctor', dir, '--json']);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(9);
    for (const name of ['command', 'mcp:local']) {
      const c = check(doctor, name);
      expect(c?.status, name).toBe('fail');
      for (const s of says) expect(c?.detail, name).toContain(s);
    }
    expect(existsSync(marker)).toBe(false);
    expect((await cli(['install', dir])).code).toBe(0);
    const enable = await cli(['enable', 'shebang']);
    expect(enable.code).toBe(0);
    for (const s of says) expect(enable.stderr).toContain(s);
  });
});
