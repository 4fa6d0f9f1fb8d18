/**
 * `enable --config` is all-or-nothing (issue 17, observation 9): the switch and
 * the config reach settings.toml in one atomic write. Crash points are
 * enumerated, not sampled: strace kills the command (SIGKILL) at its 1st, 2nd, …
 * call of each state-changing system call in turn until a run completes, and
 * after every kill settings.toml must be byte for byte the text before or the
 * text after, and read by the host (in order, test/helpers/settings-model.ts) as
 * before or after. A completed run renames onto settings.toml exactly once.
 *
 * Needs strace (ptrace). Without it the suite is skipped with the reason shown,
 * or fails when YEP_EXT_REQUIRE_ALL=1 (CI).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { hostRuns, sortKeys } from '../helpers/settings-model.js';

const probe = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', 'true'], { encoding: 'utf8' });
const hasStrace = probe.status === 0;
if (!hasStrace) {
  const why = `strace is not usable here (${(probe.stderr || probe.error?.message || '').trim()})`;
  if (process.env.YEP_EXT_REQUIRE_ALL === '1') throw new Error(`kill-enable tests need strace: ${why}. Install it (apt-get install strace).`);
  console.warn(`kill-enable tests skipped: ${why}`);
}

/** Every system call that changes what is on disk on the way to settings.toml. */
const SYSCALLS = ['fsync', 'fdatasync', 'rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'mkdir', 'rmdir'];

let home: TempHome;
let settingsFile: string;
beforeEach(async () => {
  home = makeTempHome();
  settingsFile = join(home.configDir, 'settings.toml');
  const pkg = writePackage(join(home.root, 'src', 'alpha'), {
    name: 'alpha',
    yolop: { config_schema: { type: 'object', required: ['endpoint'], properties: { endpoint: { type: 'string' }, port: { type: 'integer' } } } },
  });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
});
afterEach(() => home.cleanup());

/**
 * Run `yep-ext args` under strace tracing `syscalls`, killed at the `n`th call of
 * `kill` (when given). strace counts calls per thread, so libuv's pool is held to
 * one thread and the complete run checks that each call came from one thread.
 */
function traced(args: string[], syscalls: string[], kill?: { syscall: string; n: number }): { status: number | null; signal: string | null; trace: string } {
  const traceFile = join(home.root, 'trace');
  const inject = kill ? ['-e', `inject=${kill.syscall}:signal=KILL:when=${kill.n}`] : [];
  const r = spawnSync('strace', ['-f', '-qq', '-o', traceFile, '-e', `trace=${syscalls.join(',')}`, ...inject, process.execPath, BIN, ...args], {
    env: { ...home.env, UV_THREADPOOL_SIZE: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, signal: r.signal, trace: existsSync(traceFile) ? readFileSync(traceFile, 'utf8') : '' };
}

/** Everything the host would make of settings.toml for ext:alpha. */
const hostState = (text: string | null) => JSON.stringify(sortKeys(text === null ? { enabled: false, config: {} } : hostRuns(text, 'alpha')));
const read = (): string | null => (existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null);

/** Enumerate every kill point of `args` starting from settings text `start` (null: no file). */
function enumerateKills(args: string[], start: string | null): { after: string | null; kills: number } {
  // Each run starts from the same disk: a killed run leaves the installer lock (a later
  // command waits for it to go stale) and maybe a temp file, which would shift the counts.
  const reset = () => {
    mkdirSync(home.configDir, { recursive: true });
    rmSync(join(home.configDir, 'extensions', '.yep-ext.lock'), { recursive: true, force: true });
    for (const n of readdirSync(home.configDir)) if (n.startsWith('settings.toml.')) rmSync(join(home.configDir, n));
    if (start === null) rmSync(settingsFile, { force: true });
    else writeFileSync(settingsFile, start);
  };
  // The completed run first: the "after" text, and how many calls of each syscall there are to kill at.
  reset();
  const full = traced(args, SYSCALLS);
  expect(full.status, full.trace).toBe(0);
  const calls = full.trace.split('\n').map((l) => /^(\d+)\s+(\w+)\(/.exec(l)).filter((m): m is RegExpExecArray => m !== null && SYSCALLS.includes(m[2] as string));
  const renames = calls.filter((m) => m[2]?.startsWith('rename') && /, "[^"]*\/settings\.toml"/.test(m.input));
  expect(renames.map((m) => m.input), 'renames onto settings.toml').toHaveLength(1);
  const after = read();
  expect(after).not.toBe(start);

  let kills = 0;
  for (const syscall of SYSCALLS) {
    const mine = calls.filter((m) => m[2] === syscall);
    expect(new Set(mine.map((m) => m[1])).size, `${syscall} called from several threads: when=N would not enumerate`).toBeLessThanOrEqual(1);
    for (let n = 1; n <= mine.length + 1; n++) {
      reset();
      const r = traced(args, [syscall], { syscall, n });
      const now = read();
      expect([start, after], `killed at ${syscall} #${n}: settings.toml is neither before nor after:\n${now}`).toContain(now);
      expect([hostState(start), hostState(after)]).toContain(hostState(now));
      if (n <= mine.length) {
        expect(r.signal, `${syscall} #${n} of ${mine.length} was not reached`).toBe('SIGKILL');
        kills++;
      } else expect(r.status, `no ${syscall} #${n}, so the run completes`).toBe(0);
    }
  }
  return { after, kills };
}

describe.skipIf(!hasStrace)('enable --config: killed at every state-changing system call', () => {
  it('a first enable with config: before (no entry) or after (enabled with the config), never between', () => {
    const { after, kills } = enumerateKills(['enable', 'alpha', '--config', 'endpoint=https://e.example', '--config', 'port=8080'], '# mine\ntheme = "dark"\n');
    expect(hostRuns(after as string, 'alpha')).toEqual({ enabled: true, config: { endpoint: 'https://e.example', port: 8080 } });
    expect(kills).toBeGreaterThan(0);
  }, 300_000);

  it('a disabled entry plus a host-appended one, folded with new config in one write', () => {
    const start = '[[capabilities]]\nref = "ext:alpha"\nenabled = false\nendpoint = "old"\n\n[[capabilities]]\nref = "lsp"\n\n[[capabilities]]\nref = "ext:alpha"\nenabled = false\n';
    const { after } = enumerateKills(['enable', 'alpha', '--config', 'port=1'], start);
    expect(hostRuns(after as string, 'alpha')).toEqual({ enabled: true, config: { endpoint: 'old', port: 1 } });
    // No temp file of a completed run is left behind.
    expect(readdirSync(home.configDir).filter((n) => n.startsWith('settings.toml.'))).toEqual([]);
  }, 300_000);
});
