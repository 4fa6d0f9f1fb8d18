/** `yep-ext doctor` as a user runs it: exit statuses, --json shape, Ctrl-C (hardening F46). Needs `npm run build`. */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listGroup } from '../../src/core/yep/process-group.js';
import { makePackage } from '../helpers/ext-package.js';
import { BIN, REPO_ROOT, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome('yep-doctor-cli-');
  mkdirSync(join(home.root, 'pkgs'));
});
afterEach(() => home.cleanup());

describe('yep-ext doctor', () => {
  it('passes the Node example and prints the host-shaped JSON', async () => {
    const r = await runCli(['doctor', join(REPO_ROOT, 'examples/echo-node'), '--json'], { env: home.env });
    expect(r.code).toBe(0);
    const report = jsonOf(r);
    expect(report).toMatchObject({ name: 'echo-node', ok: true });
    for (const c of report.checks) expect(Object.keys(c)).toEqual(['name', 'status', 'detail']);
    expect(report.checks.map((c: { status: string }) => c.status)).not.toContain('fail');
  });

  it('exits 9 with the whole report on stdout when a check fails (--json)', async () => {
    const dir = makePackage(join(home.root, 'pkgs'), 'widened', { args: ['--name', 'widened', '--tools', 'echo,extra'] });
    const r = await runCli(['doctor', dir, '--json', '--timeout', '5'], { env: home.env });
    expect(r.code).toBe(9);
    const report = jsonOf(r);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: { name: string }) => c.name === 'tools').status).toBe('fail');
  });

  it('exits 9 with a readable report and an error line when a check fails', async () => {
    const dir = makePackage(join(home.root, 'pkgs'), 'crashes', { server: 'exit-at-once.mjs' });
    const r = await runCli(['doctor', dir], { env: home.env });
    expect(r.code).toBe(9);
    expect(r.stdout).toMatch(/fail\s+handshake\s+initialize: the server exited with code 3/);
    expect(r.stdout).toContain('cannot open ~/.fixture/config');
    expect(r.stderr).toContain('check(s) failed (handshake');
  });

  it('checks an installed extension by name, and refuses bad names and unknown ones', async () => {
    makePackage(join(home.configDir, 'extensions'), 'inst', { args: ['--name', 'inst'] });
    expect((await runCli(['doctor', 'inst'], { env: home.env })).code).toBe(0);
    expect((await runCli(['doctor', 'yolop-extension-inst', '--json'], { env: home.env })).code).toBe(0);
    const bad = await runCli(['doctor', 'bad name!'], { env: home.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Invalid extension name');
    const missing = await runCli(['doctor', 'nothere', '--json'], { env: home.env });
    expect(missing.code).toBe(3);
    expect(jsonOf(missing).error.code).toBe('E_NOT_INSTALLED');
  });

  it('refuses bad --args and --timeout values', async () => {
    expect((await runCli(['doctor', 'x', '--call', 'echo', '--args', '{nope'], { env: home.env })).code).toBe(2);
    expect((await runCli(['doctor', 'x', '--timeout', 'soon'], { env: home.env })).code).toBe(2);
  });

  it('F46: Ctrl-C kills the server\'s process group before yep-ext exits', async () => {
    const pidFile = join(home.root, 'server.pid');
    const dir = makePackage(join(home.root, 'pkgs'), 'hangs', { server: 'silent.mjs', args: ['--pid-file', pidFile] });
    const cli = spawn(process.execPath, [BIN, 'doctor', dir], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + 15_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
      if (Date.now() > deadline) throw new Error(`server never started: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const serverPid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(listGroup(serverPid)).toContain(serverPid);
    const t = Date.now();
    cli.kill('SIGINT');
    const code = await new Promise<number | null>((r) => cli.on('exit', (c) => r(c)));
    expect(Date.now() - t).toBeLessThan(3000);
    expect(code).toBe(130);
    expect(stderr).toContain('Interrupted');
    expect(listGroup(serverPid)).toEqual([]);
  });
});
