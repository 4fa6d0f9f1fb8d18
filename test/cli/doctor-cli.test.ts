/** `yep-ext doctor` as a user runs it: exit statuses, --json shape, Ctrl-C (hardening F46). Needs `npm run build`. */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listGroup } from '../../src/core/yep/process-group.js';
import { makePackage } from '../helpers/ext-package.js';
import { BIN, REPO_ROOT, jsonOf, makeTempHome, runCli, runCliProcess, type RunResult, type TempHome } from '../helpers/home.js';
import { mcpStdioServer } from '../helpers/mcp-fixture.js';
import { procAlive, procsWith } from '../helpers/proc.js';
import { secretFragments } from '../helpers/secret-fragments.js';

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

  it('with no TARGET checks the package it is run in (`cd my-ext && yep-ext doctor`); elsewhere exit 2 naming what to give', async () => {
    const mine = makePackage(join(home.root, 'pkgs'), 'here', { args: ['--name', 'here'] });
    const here = await runCli(['doctor', '--json'], { env: home.env, cwd: mine });
    expect(here.code, here.stderr).toBe(0);
    const grades = (r: RunResult) => {
      const doc = jsonOf(r);
      return { name: doc.name, ok: doc.ok, checks: doc.checks.map((c: { name: string; status: string }) => [c.name, c.status]) };
    };
    expect(grades(here)).toEqual(grades(await runCli(['doctor', '.', '--json'], { env: home.env, cwd: mine })));
    expect(grades(here).checks.length).toBeGreaterThan(5);
    const elsewhere = await runCli(['doctor'], { env: home.env, cwd: home.root });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('no plugin.json here');
    expect(elsewhere.stderr).toContain('hint: For example: yep-ext doctor lsp');
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
    const dir = makePackage(join(home.root, 'pkgs'), 'crashes', { server: 'exit-at-once.sh' });
    const r = await runCli(['doctor', dir], { env: home.env });
    expect(r.code).toBe(9);
    expect(r.stdout).toMatch(/fail\s+server answers\s+no answer to yolop's first request \(initialize\): the server exited with code 3/);
    expect(r.stdout).toContain('cannot open ~/.fixture/config');
    expect(r.stderr).toContain('error: crashes: 1 check failed (server answers).');
  });

  it("the authoring loop's first failures say what to do next: a rust package not built yet gets its build step, a directory with no plugin.json is named as no package", async () => {
    const made = await runCli(['new', 'rusty', '--language', 'rust', '--tool', 't', '--dir', join(home.root, 'pkgs')], { env: home.env });
    expect(made.code, made.stderr).toBe(0);
    const dir = join(home.root, 'pkgs', 'rusty');
    const r = await runCli(['doctor', dir], { env: home.env });
    expect(r.code).toBe(9);
    expect(r.stdout).toMatch(/fail\s+server program\s+"rusty" is neither in the package's bin\//);
    expect(r.stderr).toContain(
      `hint: rusty's server is not built yet (bin/rusty is missing): run \`(cd ${dir} && cargo build --release && cp target/release/rusty bin/)\`, then doctor again.`,
    );

    const empty = join(home.root, 'pkgs', 'empty');
    mkdirSync(empty);
    const e = await runCli(['doctor', empty], { env: home.env });
    expect(e.code).toBe(9);
    expect(e.stderr).toContain('hint: Pass the package directory (the one holding plugin.json), or create one with `yep-ext new');
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

  it('a name the lock pins whose package is gone: exit 3 saying the lock pins it, with the install that restores it (not "run list")', async () => {
    const dir = makePackage(join(home.root, 'pkgs'), 'pinned', { args: ['--name', 'pinned'] });
    expect((await runCli(['install', dir, '--yes'], { env: home.env })).code).toBe(0);
    rmSync(join(home.configDir, 'extensions', 'pinned'));
    const r = await runCli(['doctor', 'pinned', '--json'], { env: home.env });
    expect(r.code).toBe(3);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_NOT_INSTALLED', message: expect.stringContaining('extensions.lock pins it') });
    expect(jsonOf(r).error.hint).toContain('yep-ext remove pinned');
    // The lock still pins it: the message describes that state.
    expect(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')).toContain('name = "pinned"');
  });

  it('refuses bad --args and --timeout values', async () => {
    expect((await runCli(['doctor', 'x', '--call', 'echo', '--args', '{nope'], { env: home.env })).code).toBe(2);
    expect((await runCli(['doctor', 'x', '--timeout', 'soon'], { env: home.env })).code).toBe(2);
  });

  it("F46: Ctrl-C kills the server's process group before yep-ext exits", async () => {
    const pidFile = join(home.root, 'server.pid');
    const dir = makePackage(join(home.root, 'pkgs'), 'hangs', { server: 'silent.sh', args: ['--pid-file', pidFile] });
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

  it('a secret across the cut of a long non-JSON line never shows, human or --json', async () => {
    const secret = 'Zq7-Kx93-Jw5R-Vb28-Tn6Q-Pm41-Hd3L-Yc8U';
    const schema = { config_schema: { type: 'object', properties: { token: { type: 'string', secret: true, env: 'FIXTURE_TOKEN' } }, required: ['token'] } };
    const dir = makePackage(join(home.root, 'pkgs'), 'leaky', {
      server: 'leaky.sh',
      args: ['--stdout-banner', '--stderr-cut', String(4096 - 12)],
      yolop: schema,
    });
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(join(home.configDir, 'connections.toml'), `["ext:leaky"]\ntoken = "${secret}"\n`, { mode: 0o600 });
    const human = await runCli(['doctor', dir, '--timeout', '5'], { env: home.env });
    const json = await runCli(['doctor', dir, '--json', '--timeout', '5'], { env: home.env });
    expect(human.code).toBe(9);
    expect(json.code).toBe(9);
    expect(human.stdout).toMatch(/not JSON: b{20}/);
    expect(human.stdout).toContain('earlier bytes dropped');
    expect(jsonOf(json).problems.join('\n')).toMatch(/not JSON: b{20}/);
    for (const r of [human, json]) expect(secretFragments(r.stdout + r.stderr, secret)).toEqual([]);
  });

  it('the config warning names the commands that set each missing field, and running them clears it', async () => {
    const schema = {
      config_schema: {
        type: 'object',
        properties: { token: { type: 'string', secret: true, env: 'CFGX_TOKEN' }, endpoint: { type: 'string' } },
        required: ['token', 'endpoint'],
      },
    };
    const dir = makePackage(join(home.root, 'pkgs'), 'cfgx', { args: ['--name', 'cfgx'], yolop: schema });
    expect((await runCli(['install', dir, '--yes'], { env: home.env })).code).toBe(0);
    const configCheck = async () =>
      jsonOf(await runCli(['doctor', 'cfgx', '--json', '--timeout', '5'], { env: home.env })).checks.find((c: { name: string }) => c.name === 'config');
    const before = await configCheck();
    expect(before.status).toBe('warn');
    expect(before.detail).toContain('`yep-ext set-secret cfgx token`');
    expect(before.detail).toContain('`yep-ext enable cfgx --config endpoint=<value>`');
    expect(before.detail).not.toContain('yep-ext config');
    expect((await runCli(['set-secret', 'cfgx', 'token', '--stdin'], { env: home.env, input: 'tok-123' })).code).toBe(0);
    expect((await runCli(['enable', 'cfgx', '--config', 'endpoint=https://example.test'], { env: home.env })).code).toBe(0);
    const after = await configCheck();
    expect(after.status, after.detail).toBe('pass');
  });

  it('a secret held in the OS keychain: the config check warns that yolop will not pass it (doctor does); moved to connections.toml, it passes', async () => {
    const schema = { config_schema: { type: 'object', properties: { token: { type: 'string', secret: true, env: 'KC_TOKEN' } }, required: ['token'] } };
    const dir = makePackage(join(home.root, 'pkgs'), 'kcx', { args: ['--name', 'kcx'], yolop: schema });
    // A keychain that outlives each process, as a real one does.
    const env = {
      ...home.env,
      YEP_EXT_TEST_KEYCHAIN_MODULE: join(REPO_ROOT, 'test/fixtures/fake-keyring.mjs'),
      FAKE_KEYRING_MODE: 'ok',
      FAKE_KEYRING_FILE: join(home.root, 'keyring.json'),
    };
    expect((await runCli(['install', dir, '--yes'], { env })).code).toBe(0);
    const stored = await runCli(['set-secret', 'kcx', 'token', '--stdin', '--keychain', '--json'], { env, input: 'kc-secret-1' });
    expect(jsonOf(stored)).toMatchObject({ store: 'keychain', host_visible: false });
    expect(existsSync(join(home.configDir, 'connections.toml'))).toBe(false);
    const configCheck = async () => {
      const r = await runCli(['doctor', 'kcx', '--json', '--timeout', '5'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toContain('kc-secret-1');
      return jsonOf(r).checks.find((c: { name: string }) => c.name === 'config');
    };
    const before = await configCheck();
    expect(before.status).toBe('warn');
    expect(before.detail).toContain('token is in the OS keychain: doctor passes it to the server, yolop will not');
    expect((await runCli(['set-secret', 'kcx', 'token', '--stdin'], { env, input: 'kc-secret-1' })).code).toBe(0);
    expect(readFileSync(join(home.configDir, 'connections.toml'), 'utf8')).toContain('token = "kc-secret-1"');
    const after = await configCheck();
    expect(after.status, after.detail).toBe('pass');
  });

  it('a server that leaves a daemon in another session fails `processes` naming it, and the daemon is dead', async () => {
    const pidFile = join(home.root, 'daemon.pid');
    const dir = makePackage(join(home.root, 'pkgs'), 'daemon', {
      server: 'daemonize.sh',
      args: ['--mode', 'setsid', '--pid-file', pidFile, '--sleep', '377'],
    });
    const r = await runCli(['doctor', dir, '--json', '--timeout', '5'], { env: home.env });
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    try {
      expect(procAlive(pid), `pid ${pid} survived yep-ext doctor`).toBe(false);
      expect(r.code).toBe(9);
      const processes = jsonOf(r).checks.find((c: { name: string }) => c.name === 'processes');
      expect(processes.status).toBe('fail');
      expect(processes.detail).toContain(`pid ${pid} (sleep 377, outside its process group)`);
    } finally {
      if (procAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('yep-ext doctor and contributed MCP servers', () => {
  /** The arguments that start the SDK-built stdio fixture server (from a snapshot: it starts for a fraction of the CPU). */
  const STDIO = mcpStdioServer();
  /** Packages whose MCP servers doctor probes; their capability server is the sh fixture. */
  const withMcp = (name: string, marker: string, flags: string[]) =>
    makePackage(join(home.root, 'pkgs'), name, {
      args: ['--name', name],
      yolop: {
        mcpServers: { docs: { command: process.execPath, args: [...STDIO, ...flags, '--marker', marker], env: { FIXTURE_MCP_TOKEN: '${MCP_CLI_TOKEN}' } } },
      },
    });

  it('reports each MCP server in the human report and in --json (both ways of running doctor), secrets never shown, nothing left running', async () => {
    const marker = `cli-mcp-${process.pid}-${Date.now()}`;
    const secret = 'mcp-cli-canary-7Hq2Lx9Vw3';
    const dir = withMcp('mcpcli', marker, ['--need-env', 'FIXTURE_MCP_TOKEN']);
    const env = { ...home.env, MCP_CLI_TOKEN: secret };
    // The plain shape and one with --call.
    const human = await runCli(['doctor', dir, '--timeout', '10'], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/pass\s+MCP server docs\s+started `.*stdio-server\.mjs.*` and listed 1 tool \(search\)/);
    const json = await runCli(['doctor', dir, '--json', '--timeout', '10', '--call', 'echo', '--args', '{"text":"hi"}'], { env });
    expect(json.code, json.stderr).toBe(0);
    const report = jsonOf(json);
    expect(report.checks.find((c: { name: string }) => c.name === 'mcp:docs')).toMatchObject({ status: 'pass' });
    expect(report.mcp_servers).toEqual([
      {
        server: 'docs',
        host_name: 'mcpcli__docs',
        transport: 'stdio',
        ok: true,
        tools: [
          {
            name: 'search',
            description: 'Fixture tool search. Uses token [redacted].',
            input_schema: { type: 'object', properties: { q: { type: 'string' } } },
          },
        ],
        changes: null,
        previous_run: null,
      },
    ]);
    for (const r of [human, json]) expect(r.stdout + r.stderr).not.toContain(secret);
    expect(procsWith(marker)).toEqual([]);
  });

  it('loads the MCP SDK only for a manifest that declares an MCP server', async () => {
    const preload = join(home.root, 'loaded.cjs');
    const seen = join(home.root, 'loaded.json');
    writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify(Object.keys(require.cache))));`);
    const loaded = async (dir: string): Promise<string[]> => {
      const r = await runCliProcess(['doctor', dir, '--json', '--timeout', '10'], { env: { ...home.env, NODE_OPTIONS: `--require ${preload}` } });
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(readFileSync(seen, 'utf8')) as string[]).filter((f) => f.includes(join('dist', 'bundle', 'lib')));
    };
    const plain = makePackage(join(home.root, 'pkgs'), 'nomcp', { args: ['--name', 'nomcp'] });
    const report = await loaded(plain);
    expect(report.some((f) => f.endsWith('mcp.cjs'))).toBe(false);
    const marker = `cli-mcp-lazy-${process.pid}-${Date.now()}`;
    expect((await loaded(withMcp('lazymcp', marker, []))).some((f) => f.endsWith(join('lib', 'mcp.cjs')))).toBe(true);
    expect(procsWith(marker)).toEqual([]);
  });

  it('exits 9 naming the MCP server that never answers, and Ctrl-C during its probe kills it', async () => {
    const marker = `cli-mcp-hang-${process.pid}-${Date.now()}`;
    const dir = withMcp('mcphang', marker, ['--hang']);
    const r = await runCli(['doctor', dir, '--timeout', '2'], { env: home.env });
    expect(r.code).toBe(9);
    expect(r.stdout).toMatch(/fail\s+MCP server docs\s+started .*, but the server did not answer MCP's first request \(initialize\) within 2\.0 s/);
    expect(r.stderr).toContain('1 check failed (MCP server docs)');
    expect(procsWith(marker)).toEqual([]);

    const cli = spawn(process.execPath, [BIN, 'doctor', dir, '--timeout', '60'], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + 20_000;
    // Each look reads every process's command line: a few looks while the CLI starts and runs
    // doctor up to the MCP probe, not one every event-loop turn or two.
    while (procsWith(marker).length === 0) {
      if (Date.now() > deadline) throw new Error(`the MCP server never started: ${stderr}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    cli.kill('SIGINT');
    const code = await new Promise<number | null>((res) => cli.on('exit', (c) => res(c)));
    expect(code).toBe(130);
    expect(procsWith(marker)).toEqual([]);
  });
});
