/**
 * doctor against real server processes: the clean case, the host's grading rules,
 * the probes beyond the host, and every hostile case of hardening.md F39-F45
 * (F46, Ctrl-C, is in test/cli/doctor-cli.test.ts). Each run must finish within
 * its deadline and leave no process of the server's group behind.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorOptions, type DoctorReport } from '../../src/core/doctor/doctor.js';
import { listGroup } from '../../src/core/yep/process-group.js';
import { makePackage } from '../helpers/ext-package.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
beforeAll(() => {
  home = makeTempHome('yep-doctor-');
  mkdirSync(join(home.root, 'pkgs'), { recursive: true });
});
afterAll(() => home.cleanup());

// Short enough that the fault cases (servers that hang or ignore EOF) finish quickly, long enough
// that a healthy server on a loaded 2-core machine is not graded as failing (300 ms of grace was not).
const FAST = { timeoutMs: 6000, probeTimeoutMs: 1000, graceMs: 1000 };

async function doctor(dir: string, options: Partial<DoctorOptions> = {}, deadlineMs = 8000): Promise<DoctorReport & { status: Record<string, string> }> {
  const t = Date.now();
  const report = await runDoctor(home.ctx(), { target: { kind: 'path', dir }, workspaceRoot: home.root, ...FAST, ...options });
  expect(Date.now() - t, 'doctor deadline').toBeLessThan(deadlineMs);
  for (const pid of report.server_pids) expect(listGroup(pid), `process group ${pid} is gone`).toEqual([]);
  return Object.assign(report, { status: Object.fromEntries(report.checks.map((c) => [c.name, c.status])) });
}

const detail = (r: DoctorReport, name: string): string => r.checks.find((c) => c.name === name)?.detail ?? '(no such check)';
// The well-behaved server is makePackage's sh fixture (good.sh); the hostile fixtures name their own (sh too: what is graded is what a server does, not its language).
const pkg = (name: string, options: Parameters<typeof makePackage>[2] = {}): string => makePackage(join(home.root, 'pkgs'), name, options);

describe('doctor: the grading rules', () => {
  it('passes a clean server on every check', async () => {
    const dir = pkg('clean', {
      args: ['--name', 'clean', '--prompt', 'Be brief.'],
      yolop: { prompt: true, dynamic_prompt: true, hooks: [{ event: 'pre_tool_use', tool_name_glob: 'ec*', timeout_ms: 1000 }] },
    });
    const r = await doctor(dir);
    expect(r.checks.filter((c) => c.status !== 'pass')).toEqual([]);
    expect(r.ok).toBe(true);
    expect(Object.keys(r.status)).toEqual([
      'manifest',
      'command',
      'spawn',
      'handshake',
      'protocol_version',
      'name',
      'capabilities',
      'tools',
      'prompt',
      'notifications',
      'cancel',
      'unknown_method',
      'dynamic_prompt',
      'hooks',
      'shutdown',
      'stdin_eof',
      'messages',
      'processes',
    ]);
    expect(r.server_pids).toHaveLength(2);
    expect(r.stderr_tail).toBeUndefined();
  });

  it('fails a server that offers a tool plugin.json does not list (yolop hides it from the model)', async () => {
    const r = await doctor(pkg('widened', { args: ['--name', 'widened', '--tools', 'echo,rm_rf'] }));
    expect(r.status.tools).toBe('fail');
    expect(detail(r, 'tools')).toContain('rm_rf');
    expect(r.ok).toBe(false);
  });

  it("speaks plain words: no design jargon in any check's detail, and each warning or failure says what to do", async () => {
    const reports = [
      await doctor(pkg('plain-widened', { args: ['--name', 'other', '--tools', 'echo,rm_rf', '--prompt', 'hi', '--version', '1.0'] })),
      await doctor(pkg('plain-no-eof', { args: ['--name', 'plain-no-eof', '--ignore-eof', '--silent-unknown'] })),
    ];
    const checks = reports.flatMap((r) => r.checks);
    expect(checks.map((c) => c.name)).toEqual(expect.arrayContaining(['tools', 'name', 'prompt', 'capabilities', 'stdin_eof', 'unknown_method']));
    for (const c of checks) {
      expect(c.detail, c.name).not.toMatch(/\bD\d\b|clamp|facet|\bthe host\b|\bEOF\b|YEP v1|advertis|\btokens?\b/);
      // What to do next: an instruction after a colon (or doctor's own action) in every warning and failure.
      if (c.status !== 'pass')
        expect(c.detail, c.name).toMatch(/[:.] (add|answer|use|list|offer|declare|exit|take|send|yolop may|write)\b|doctor (killed|stopped)/i);
    }
    expect(checks.find((c) => c.name === 'tools')?.detail).toContain('the model never sees it. Add it to "tools" in plugin.json');
  });

  it('warns when a declared tool is not served', async () => {
    const r = await doctor(pkg('unserved', { args: ['--name', 'unserved', '--tools', 'echo'], yolop: { tools: [{ name: 'echo' }, { name: 'grep' }] } }));
    expect(r.status.tools).toBe('warn');
    expect(detail(r, 'tools')).toContain('grep');
    expect(r.ok).toBe(true);
  });

  it('fails a server speaking another major version', async () => {
    const r = await doctor(pkg('major', { args: ['--name', 'major', '--version', '2.0'] }));
    expect(r.status.protocol_version).toBe('fail');
    expect(detail(r, 'protocol_version')).toContain('2.0');
    expect(r.ok).toBe(false);
  });

  it('warns on a name mismatch and on a prompt offered but not declared', async () => {
    const r = await doctor(pkg('misnamed', { args: ['--name', 'other', '--prompt', 'hi'] }));
    expect(r.status.name).toBe('warn');
    expect(r.status.prompt).toBe('warn');
    expect(r.status.capabilities).toBe('warn'); // advertises `prompt` without declaring it
  });

  it('fails a server that dies on a config push (config/changed notification)', async () => {
    const r = await doctor(pkg('config-crash', { args: ['--name', 'config-crash', '--crash-on', 'config/changed'] }));
    expect(r.status.notifications).toBe('fail');
    expect(detail(r, 'notifications')).toContain('exited with code 4');
    expect(r.stderr_tail).toContain('cannot handle config/changed');
  });

  it('fails an unknown method met with silence', async () => {
    const r = await doctor(pkg('silent-unknown', { args: ['--name', 'silent-unknown', '--silent-unknown'] }));
    expect(r.status.unknown_method).toBe('fail');
    expect(detail(r, 'unknown_method')).toContain('no answer');
  });

  it('fails a hook that does not answer within its timeout_ms', async () => {
    const r = await doctor(
      pkg('slow-hook', {
        args: ['--name', 'slow-hook', '--hook-delay', '600'],
        yolop: { hooks: [{ event: 'post_tool_use', timeout_ms: 150, on_error: 'block' }] },
      }),
    );
    expect(r.status.hooks).toBe('fail');
    expect(detail(r, 'hooks')).toContain('timeout_ms=150');
    // A post_tool_use hook's failure is only logged by the host (on_error decides for pre_tool_use hooks).
    expect(detail(r, 'hooks')).toContain('yolop would log the hook as failed');
  });

  it('fails a hook whose reply is not a hook decision, saying what yolop then does (the host treats it as an error)', async () => {
    const cases: [string, 'warn' | 'block', string][] = [
      ['{"block":"yes"}', 'warn', 'let the tool call go ahead unchecked'],
      ['null', 'block', 'block the tool call'],
      ['[]', 'warn', 'let the tool call go ahead unchecked'],
    ];
    for (const [i, [reply, onError, consequence]] of cases.entries()) {
      const r = await doctor(
        pkg(`bad-hook-${i}`, {
          args: ['--name', `bad-hook-${i}`, '--hook-reply', reply],
          yolop: { hooks: [{ event: 'pre_tool_use', tool_name_glob: '*', timeout_ms: 2000, on_error: onError }] },
        }),
      );
      expect(r.status.hooks, reply).toBe('fail');
      expect(detail(r, 'hooks')).toContain(`the reply ${reply} is not a hook decision`);
      expect(detail(r, 'hooks')).toContain(consequence);
      expect(r.ok).toBe(false);
    }
    // `{}` still allows, and a reply with only known fields of the right types passes.
    for (const [i, reply] of ['{}', '{"block":false,"user_message":null}'].entries()) {
      const r = await doctor(
        pkg(`ok-hook-${i}`, { args: ['--name', `ok-hook-${i}`, '--hook-reply', reply], yolop: { hooks: [{ event: 'pre_tool_use', timeout_ms: 2000 }] } }),
      );
      expect(r.status.hooks, reply).toBe('pass');
    }
  });

  it('fails a server that asks the user a question (ui/ask) without declaring ui_ask, and passes one that declares it', async () => {
    const undeclared = await doctor(pkg('asks', { args: ['--name', 'asks', '--ask', 'Your API token?'] }));
    expect(undeclared.status.ui_ask).toBe('fail');
    expect(detail(undeclared, 'ui_ask')).toContain('asked the user a question (ui/ask: "Your API token?")');
    expect(detail(undeclared, 'ui_ask')).toContain('Add "ui_ask": true');
    expect(undeclared.ok).toBe(false);
    const declared = await doctor(pkg('asks-ok', { args: ['--name', 'asks-ok', '--ask', 'Your API token?'], yolop: { ui_ask: true } }));
    expect(declared.status.ui_ask).toBe('pass');
    expect(declared.ok).toBe(true);
    // A server that asks nothing gets no such check.
    expect((await doctor(pkg('asks-nothing', { args: ['--name', 'asks-nothing'] }))).status.ui_ask).toBeUndefined();
  });

  it('runs one tool call with --call and reports the streamed updates', async () => {
    const seen: string[] = [];
    const r = await doctor(pkg('caller', { args: ['--name', 'caller'] }), {
      call: { tool: 'echo', args: { text: 'hi', updates: 2 } },
      onUpdate: (u) => seen.push(u),
    });
    expect(r.status.call).toBe('pass');
    expect(r.call).toMatchObject({ tool: 'echo', updates: ['update 1', 'update 2'], result: { text: 'hi' } });
    expect(seen).toEqual(['update 1', 'update 2']);
    const bad = await doctor(pkg('caller2', { args: ['--name', 'caller2'] }), { call: { tool: 'nope', args: {} } });
    expect(bad.status.call).toBe('fail');
  });
});

describe('doctor: config injection (the seam)', () => {
  const secretManifest = {
    args: ['--name', 'needs-secret', '--need-env', 'FIXTURE_TOKEN'],
    yolop: {
      config_schema: {
        type: 'object',
        properties: { token: { type: 'string', secret: true, env: 'FIXTURE_TOKEN' }, region: { type: 'string' } },
        required: ['token'],
      },
    },
  };

  it('passes when the secret is provided, and never shows its value', async () => {
    const dir = pkg('needs-secret', secretManifest);
    const r = await doctor(dir, { loadConfig: async () => ({ values: { region: 'eu' }, secrets: { token: 'canary-s3cr3t-value' } }) });
    expect(r.ok).toBe(true);
    expect(detail(r, 'config')).toContain('token (secret): set -> $FIXTURE_TOKEN');
    expect(JSON.stringify(r)).not.toContain('canary-s3cr3t-value');
  });

  it('fails with a clear detail when the secret is not set, and redacts nothing it does not know', async () => {
    const dir = pkg('needs-secret2', { ...secretManifest, args: ['--name', 'needs-secret2', '--need-env', 'FIXTURE_TOKEN'] });
    const r = await doctor(dir, { loadConfig: async () => ({ values: {}, secrets: {} }) });
    expect(r.ok).toBe(false);
    expect(r.status.config).toBe('warn');
    expect(r.status.handshake).toBe('fail');
    expect(detail(r, 'handshake')).toContain('exited with code 2');
    expect(detail(r, 'handshake')).toContain('required config is unset: token (secret) -> $FIXTURE_TOKEN');
    expect(r.stderr_tail).toContain('FIXTURE_TOKEN is not set');
  });

  it('--no-config injects nothing even when config exists', async () => {
    const dir = pkg('needs-secret3', { ...secretManifest, args: ['--name', 'needs-secret3', '--need-env', 'FIXTURE_TOKEN'] });
    let asked = false;
    const loadConfig = async () => {
      asked = true;
      return { values: {}, secrets: { token: 'x' } };
    };
    const r = await doctor(dir, { noConfig: true, loadConfig });
    expect(asked).toBe(false);
    expect(detail(r, 'config')).toContain('--no-config');
    expect(r.status.handshake).toBe('fail');
  });

  it('redacts a secret the server echoes to stderr', async () => {
    const dir = pkg('echoes-secret', { args: ['--name', 'echoes-secret', '--need-env', 'FIXTURE_TOKEN', '--version', '9.0'], yolop: secretManifest.yolop });
    const r = await doctor(dir, { loadConfig: async () => ({ values: {}, secrets: { token: 'canary-echoed-secret' } }) });
    expect(r.ok).toBe(false);
    expect(r.stderr_tail).toContain('using token [redacted]');
    expect(JSON.stringify(r)).not.toContain('canary-echoed-secret');
  });
});

describe('doctor: hostile servers (hardening F39-F45)', () => {
  it('F39: a missing command is a failed check, nothing spawned', async () => {
    const r = await doctor(pkg('missing-cmd', { command: 'no-such-server-binary' }));
    expect(r.status.command).toBe('fail');
    expect(detail(r, 'command')).toContain('neither in the package');
    expect(r.server_pids).toEqual([]);
  });

  it('F39: a command that is not executable, a directory, a dangling symlink', async () => {
    const a = pkg('not-exec');
    chmodSync(join(a, 'bin', 'not-exec'), 0o644);
    expect(detail(await doctor(a), 'command')).toContain('not executable');

    const b = pkg('is-dir', { command: 'tooldir' });
    mkdirSync(join(b, 'bin', 'tooldir'));
    expect(detail(await doctor(b), 'command')).toContain('is a directory');

    const c = pkg('dangling', { command: 'gone' });
    symlinkSync(join(c, 'bin', 'nowhere'), join(c, 'bin', 'gone'));
    expect(detail(await doctor(c), 'command')).toContain('dangling symlink');
  });

  it('F39: a binary for another architecture, and a missing #! interpreter', async () => {
    const a = pkg('wrong-arch');
    const elf = Buffer.alloc(64);
    elf.write('\x7fELF', 0, 'latin1');
    elf[4] = 2; // 64-bit
    elf[5] = 1; // little endian
    elf.writeUInt16LE(process.arch === 'arm64' ? 0x3e : 0xb7, 18);
    writeFileSync(join(a, 'bin', 'wrong-arch'), elf);
    const r = await doctor(a);
    expect(r.status.command).toBe('fail');
    expect(detail(r, 'command')).toMatch(/built for (x64|arm64); this machine is/);

    const b = pkg('bad-shebang');
    writeFileSync(join(b, 'bin', 'bad-shebang'), '#!/nonexistent/interpreter\n');
    expect(detail(await doctor(b), 'command')).toContain('/nonexistent/interpreter');
  });

  it('F39 / D27: a command leaving the package is reported, never run', async () => {
    // The host resolves both (a path is the file, relative to the package, `..` allowed): doctor names
    // where they lead, fails the check and starts nothing.
    // As many `..` as lead from the package to / (the suite's temp dir may be deeper than /tmp), then bin/sh.
    const depth = join(home.root, 'pkgs', 'escape').split('/').length - 1;
    const a = pkg('escape', { command: `${'../'.repeat(depth)}bin/sh` });
    const ra = await doctor(a);
    expect(ra.status.command).toBe('fail');
    expect(detail(ra, 'command')).toContain('climbs out of the package to /bin/sh');
    expect(ra.status.spawn).toBeUndefined();
    const b = pkg('absolute', { command: '/bin/sh' });
    const rb = await doctor(b);
    expect(rb.status.command).toBe('fail');
    expect(detail(rb, 'command')).toContain('the absolute path /bin/sh, outside the package');
    expect(rb.status.spawn).toBeUndefined();
  });

  it('a server program another process still holds open for writing (exec says ETXTBSY) starts once it is closed, as the host retries', async () => {
    const dir = pkg('busy');
    // A writer in another process (a copy or a build still finishing) holds bin/busy for 0.3 s.
    const holder = spawn('sh', ['-c', 'exec 3>>"$1"; echo ready; sleep 0.3', 'sh', join(dir, 'bin', 'busy')], { stdio: ['ignore', 'pipe', 'ignore'] });
    await once(holder.stdout, 'data');
    const r = await doctor(dir);
    expect(r.status.spawn, detail(r, 'spawn')).toBe('pass');
    expect(r.status.handshake).toBe('pass');
    if (holder.exitCode === null) await once(holder, 'exit');
  });

  it('F40: a server that never answers initialize: timeout, group killed', async () => {
    const r = await doctor(pkg('silent', { server: 'silent.sh' }), { timeoutMs: 800 }, 5000);
    expect(r.status.handshake).toBe('fail');
    expect(detail(r, 'handshake')).toContain('no answer');
    expect(r.status.processes).toBe('pass');
  });

  it('F41: 1 GB with no newline: line cap hit, killed, memory bounded', async () => {
    const before = process.memoryUsage().rss;
    const r = await doctor(pkg('flood-out', { server: 'flood-stdout.sh' }), { maxLineBytes: 1 << 20 }, 8000);
    expect(r.status.handshake).toBe('fail');
    expect(detail(r, 'handshake')).toContain('longer than 1048576 bytes');
    expect(detail(r, 'messages')).toContain('cap');
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('F42: banner, partial JSON, invalid UTF-8, wrong ids, __proto__: reported, no crash, no pollution', async () => {
    const r = await doctor(pkg('garbage', { server: 'garbage.sh' }));
    expect(r.status.handshake).toBe('pass');
    expect(r.status.messages).toBe('fail');
    const all = r.problems.join('\n');
    expect(all).toContain('not JSON: Welcome to fixture server');
    expect(all).toContain('invalid UTF-8');
    expect(all).toContain('answer to id 4242, which we never sent');
    expect(all).toContain('__proto__');
    expect(all).toContain('cancel result: cancelled');
    for (const p of r.problems) expect(p.length).toBeLessThan(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('F43: a stderr flood with stdout idle: no deadlock, only a bounded tail kept', async () => {
    const r = await doctor(pkg('flood-err', { server: 'flood-stderr.sh' }), { stderrTailBytes: 2048, call: { tool: 'nope', args: {} } }, 15000);
    expect(r.status.handshake).toBe('pass');
    expect(r.ok).toBe(false); // the bad --call makes the tail appear in the report
    expect(r.stderr_tail).toContain('stderr flood done');
    expect(r.stderr_tail!.length).toBeLessThan(2 * 2048 + 200);
  });

  it('F44: a server that exits at once: exit code and stderr tail reported', async () => {
    const r = await doctor(pkg('exits', { server: 'exit-at-once.sh' }));
    expect(r.status.handshake).toBe('fail');
    expect(detail(r, 'handshake')).toContain('exited with code 3');
    expect(r.stderr_tail).toContain('cannot open ~/.fixture/config');
  });

  it('F44: a server that dies mid-response: signal, the partial line and the stderr tail reported', async () => {
    const r = await doctor(pkg('dies', { server: 'die-mid-response.sh' }));
    expect(r.status.handshake).toBe('fail');
    expect(detail(r, 'handshake')).toContain('killed by SIGKILL');
    expect(r.problems.join()).toContain('incomplete line');
    expect(r.stderr_tail).toContain('about to crash');
  });

  it('F45: ignores shutdown and EOF, traps SIGTERM, a child holds stdout: finishes in time, group killed', async () => {
    const r = await doctor(pkg('stubborn', { server: 'stubborn.sh' }), {}, 8000);
    expect(r.status.shutdown).toBe('fail');
    expect(detail(r, 'shutdown')).toContain('SIGKILL');
    expect(r.status.stdin_eof).toBe('fail');
    expect(r.status.processes).toBe('pass');
  });

  // Why doctor starts the server twice (docs/performance.md, doctor): each run can be stopped
  // only once, and these two servers differ only in which stop they obey. One process cannot
  // grade both `shutdown` (shutdown request, then exit) and `stdin_eof` (EOF alone, no shutdown).
  it('exits on shutdown but not on EOF: shutdown passes, stdin_eof fails (graded on a run of its own)', async () => {
    const r = await doctor(pkg('no-eof-exit', { args: ['--ignore-eof'] }));
    expect(r.status.shutdown).toBe('pass');
    expect(detail(r, 'shutdown')).toContain('answered the stop request (shutdown) and exited after');
    expect(r.status.stdin_eof).toBe('fail');
    expect(detail(r, 'stdin_eof')).toContain('kept running after its input closed; doctor stopped it with SIGTERM');
    expect(r.status.processes).toBe('pass');
    expect(r.ok).toBe(false);
  });

  it('answers shutdown but exits only on EOF: both stops pass, the first one said so', async () => {
    const r = await doctor(pkg('eof-exit-only', { args: ['--stay-after-shutdown'] }));
    expect(r.status.shutdown).toBe('pass');
    expect(detail(r, 'shutdown')).toContain('answered the stop request (shutdown) and exited once its input closed');
    expect(r.status.stdin_eof).toBe('pass');
    expect(r.ok).toBe(true);
  });

  it('F45: a server that exits but leaves a child in its group: reported and killed', async () => {
    const r = await doctor(pkg('orphan', { server: 'orphan.sh' }));
    expect(r.status.shutdown).toBe('pass');
    expect(r.status.processes).toBe('fail');
    expect(detail(r, 'processes')).toContain('left');
  });
});

describe('doctor: targets', () => {
  it('reads an installed extension by name and refuses bad names before touching paths', async () => {
    const ctx = home.ctx();
    makePackage(ctx.paths.storeDir, 'installed-one', { args: ['--name', 'installed-one'] });
    const r = await runDoctor(ctx, { target: { kind: 'installed', name: 'installed-one' }, workspaceRoot: home.root, ...FAST });
    expect(r).toMatchObject({ name: 'installed-one', ok: true, source: 'installed' });
    await expect(runDoctor(ctx, { target: { kind: 'installed', name: 'not-there' }, workspaceRoot: home.root })).rejects.toMatchObject({
      code: 'E_NOT_INSTALLED',
    });
  });

  it('reports a broken manifest as a failed check', async () => {
    const dir = join(home.root, 'pkgs', 'broken');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plugin.json'), '{"name": "broken", "yolop": {}}');
    const r = await doctor(dir);
    expect(r.status.manifest).toBe('fail');
    expect(r.ok).toBe(false);
  });
});
