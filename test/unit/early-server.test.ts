/**
 * Doctor's early start (src/core/yep/early-server.ts): a ServerProcess adopts the
 * early server only for exactly its own spawn, gets everything it wrote before
 * (even when it had exited already: Node resumes unread pipes at exit), and a
 * server not adopted is killed and reaped by discard().
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EarlyServerSet } from '../../src/core/yep/early-server.js';
import { ServerProcess, type ExitInfo } from '../../src/core/yep/server-process.js';
import type { ServerLaunch } from '../../src/core/yep/server-launch.js';

const dir = mkdtempSync(join(tmpdir(), 'yep-early-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const launch = (code: string, env: Record<string, string> = {}): ServerLaunch => ({
  command: process.execPath,
  args: ['-e', code],
  packageDir: dir,
  workspaceRoot: dir,
  env: { PATH: process.env.PATH ?? '', ...env },
});

function adopt(l: ServerLaunch, early: EarlyServerSet): { p: ServerProcess; out: () => string; exit: Promise<ExitInfo> } {
  let out = '';
  const p = new ServerProcess(l, { adopt: early }, { stdout: (c) => (out += c.toString()), stdoutEnd: () => {}, stdinError: () => {}, exit: () => {} });
  return { p, out: () => out, exit: p.exited };
}

const gone = async (pid: number): Promise<boolean> => {
  for (let i = 0; i < 100 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 20));
  return !existsSync(`/proc/${pid}`);
};

describe('early server', () => {
  it('is adopted for the same launch, with what it wrote and its exit, even after it exited', async () => {
    const l = launch("process.stdout.write('hello\\n'); process.stderr.write('oops\\n'); process.exit(3)");
    const early = EarlyServerSet.start(l, 1);
    const [pid] = early.pids;
    // Let it write and exit before it is adopted.
    await new Promise((r) => setTimeout(r, 1500));
    const { p, out, exit } = adopt(l, early);
    expect(p.pid).toBe(pid);
    expect(await p.spawned).toBe(true);
    expect((await exit).code).toBe(3);
    expect(out()).toBe('hello\n');
    expect(p.stderrTail()).toBe('oops\n');
    await early.discard(); // adopted: a no-op
    await p.stop({ graceMs: 0 });
    expect(await gone(pid!)).toBe(true);
  });

  it('is not adopted for another launch: the caller spawns its own and the early one is killed and reaped', async () => {
    const code = 'process.stdin.resume(); setInterval(() => {}, 1000)';
    const early = EarlyServerSet.start(launch(code), 2);
    const pids = early.pids as number[];
    const { p } = adopt(launch(code, { EXTRA: '1' }), early);
    expect(await p.spawned).toBe(true);
    expect(pids).not.toContain(p.pid);
    await early.discard();
    for (const pid of pids) expect(await gone(pid), `early ${pid}`).toBe(true);
    p.kill();
    await p.stop({ graceMs: 0 });
    expect(await gone(p.pid!)).toBe(true);
  });

  it('hands out each server once, in order, and discards the rest', async () => {
    const l = launch('process.stdin.resume(); setInterval(() => {}, 1000)');
    const early = EarlyServerSet.start(l, 2);
    const pids = early.pids as number[];
    const first = adopt(l, early).p;
    expect(first.pid).toBe(pids[0]);
    await early.discard();
    expect(await gone(pids[1]!)).toBe(true);
    const third = adopt(l, early).p;
    expect(pids).not.toContain(third.pid);
    for (const p of [first, third]) {
      p.kill();
      await p.stop({ graceMs: 0 });
    }
  });
});
