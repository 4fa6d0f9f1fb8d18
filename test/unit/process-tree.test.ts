/** /proc parsing and the pid-reuse guard of the descendant tracker (src/core/yep/process-tree.ts). Linux. */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessTracker, isSameProcess, listPids, parseProcStat, readProcStat } from '../../src/core/yep/process-tree.js';
import { procAlive } from '../helpers/proc.js';

const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) if (procAlive(pid)) process.kill(pid, 'SIGKILL');
});

describe('parseProcStat', () => {
  it('reads fields after the last parenthesis (comm may hold spaces and parentheses)', () => {
    const fields = ['S', '10', '20', '30', ...Array.from({ length: 15 }, (_, i) => String(i)), '987654', '0'];
    const s = parseProcStat(`4242 (a (b) c) ${fields.join(' ')}`);
    expect(s).toEqual({ pid: 4242, comm: 'a (b) c', state: 'S', ppid: 10, pgrp: 20, session: 30, startTime: 987654 });
  });

  it('matches this process', () => {
    const s = readProcStat(process.pid)!;
    expect(s.pid).toBe(process.pid);
    expect(s.ppid).toBe(process.ppid);
    expect(isSameProcess(process.pid, s.startTime)).toBe(true);
    expect(isSameProcess(process.pid, s.startTime + 1)).toBe(false);
  });
});

describe('ProcessTracker', () => {
  it('claims a child by the parent chain and kills it', async () => {
    const tracker = new ProcessTracker(process.pid);
    const child = spawn('sleep', ['311'], { stdio: 'ignore' });
    children.push(child.pid!);
    await new Promise((r) => setTimeout(r, 50));
    tracker.snapshot();
    expect(tracker.alive().map((p) => [p.pid, p.via])).toContainEqual([child.pid, 'parent']);
    expect(await tracker.killAll(2000)).toEqual([]);
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    expect(child.signalCode).toBe('SIGKILL');
    expect(procAlive(child.pid!)).toBe(false);
  });

  it('never signals a pid whose start time is not the one it recorded (pid reuse)', async () => {
    const tracker = new ProcessTracker(process.pid);
    const other = spawn('sleep', ['312'], { stdio: 'ignore' });
    children.push(other.pid!);
    await new Promise((r) => setTimeout(r, 50));
    const real = readProcStat(other.pid!)!;
    // As if `other` had taken the pid of a claimed process that exited: same pid, another start time.
    (tracker as unknown as { claimed: Map<number, object> }).claimed.set(other.pid!, {
      pid: other.pid,
      startTime: real.startTime - 1,
      command: 'gone',
      via: 'parent',
    });
    expect(tracker.killAlive()).toEqual([]);
    await new Promise((r) => setTimeout(r, 50));
    expect(procAlive(other.pid!)).toBe(true);
  });

  // Each mark alone: the root starts the orphan only after the tracker's first look and
  // exits before the second, so the parent chain never sees it.
  const orphanCases: [string, string, { detached?: boolean; env?: Record<string, string>; tag?: string }][] = [
    ['pipe', 'env -i setsid /usr/bin/sleep 321 &', {}],
    ['tag', 'setsid /usr/bin/sleep 322 </dev/null >/dev/null 2>&1 &', { env: { PATH: '/usr/bin:/bin', RUN_TAG: 'x1' }, tag: 'RUN_TAG=x1' }],
    ['session', '( /usr/bin/sleep 323 </dev/null >/dev/null 2>&1 & );', { detached: true, env: { PATH: '/usr/bin:/bin' } }],
  ];
  // `olderPids` (early-server.ts): the first look reads only what was not listed before the
  // spawn, and here the last one is a quick look too (not `full`): the orphan is still found.
  for (const [via, script, o] of orphanCases)
    for (const listed of [false, true]) {
      it(`finds an orphan by its ${via} alone${listed ? ', from looks that skip the processes listed before the spawn' : ''}`, async () => {
        const olderPids = listed ? listPids() : undefined;
        if (listed) expect(olderPids!.length).toBeGreaterThan(0);
        const root = spawn('/bin/sh', ['-c', `sleep 0.3; ${script} sleep 0.3`], {
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: o.detached ?? false,
          env: o.env ?? { PATH: '/usr/bin:/bin' },
        });
        root.stdout.resume();
        root.stderr.resume();
        const tracker = new ProcessTracker(root.pid!, { ...(o.tag ? { tag: o.tag } : {}), ...(olderPids ? { olderPids } : {}) });
        tracker.snapshot();
        await new Promise((r) => root.once('exit', r));
        tracker.snapshot(listed ? {} : { full: true });
        const found = tracker.alive().filter((p) => /^\/usr\/bin\/sleep 32\d$/.test(p.command));
        for (const p of found) children.push(p.pid);
        expect(found.map((p) => p.via)).toEqual([via]);
        expect(await tracker.killAll(2000)).toEqual([]);
        expect(found.every((p) => !procAlive(p.pid))).toBe(true);
      });
    }

  // A server that starts a daemon and exits before its tracker is made (a loaded machine).
  // The loop is held until the root is a zombie, so the tracker never sees it alive: it is
  // still ours (unreaped), and what it started is found by the tag.
  it('a root already a zombie when the tracker is made: its daemon is still claimed by the tag', async () => {
    const root = spawn('/bin/sh', ['-c', 'setsid /usr/bin/sleep 341 </dev/null >/dev/null 2>&1 & exit 0'], {
      stdio: 'ignore',
      detached: true,
      env: { PATH: '/usr/bin:/bin', RUN_TAG: 'z1' },
    });
    const until = performance.now() + 10_000;
    while (readProcStat(root.pid!)?.state !== 'Z' && performance.now() < until) {
      // spin: the loop must not turn, or Node reaps the root
    }
    expect(readProcStat(root.pid!)?.state).toBe('Z');
    const tracker = new ProcessTracker(root.pid!, { tag: 'RUN_TAG=z1' });
    // Now the loop may turn (the root is reaped) and the daemon finish its exec.
    await new Promise((r) => setTimeout(r, 200));
    tracker.snapshot({ full: true });
    const found = tracker.alive().filter((p) => p.command === '/usr/bin/sleep 341');
    for (const p of found) children.push(p.pid);
    expect(found.map((p) => p.via)).toEqual(['tag']);
    expect(await tracker.killAll(2000)).toEqual([]);
    expect(found.every((p) => !procAlive(p.pid))).toBe(true);
  });

  it('look(): the live members of a group and the live descendants, from one read of /proc', async () => {
    // A group leader whose child stays in its group, and a grandchild that leaves it (setsid).
    const root = spawn('/bin/sh', ['-c', '/usr/bin/sleep 331 & setsid /usr/bin/sleep 332 </dev/null >/dev/null 2>&1 & wait'], {
      stdio: 'ignore',
      detached: true,
      env: { PATH: '/usr/bin:/bin' },
    });
    children.push(root.pid!);
    const tracker = new ProcessTracker(root.pid!, { olderPids: listPids()!.filter((p) => p !== root.pid) });
    tracker.snapshot();
    await new Promise((r) => setTimeout(r, 300));
    // A look is undecided when any process appears between its two listings of /proc: on a
    // machine running other tests that happens, so it is asked again (as its callers do).
    let look = tracker.look(root.pid!);
    for (let i = 0; i < 20 && !look.decided; i++) look = tracker.look(root.pid!);
    const sleeps = look.alive.filter((p) => /^\/usr\/bin\/sleep 33\d$/.test(p.command));
    for (const p of sleeps) children.push(p.pid);
    expect(sleeps.map((p) => p.command).sort()).toEqual(['/usr/bin/sleep 331', '/usr/bin/sleep 332']);
    const inGroup = sleeps.find((p) => p.command.endsWith('331'))!.pid;
    expect(look.group.sort()).toEqual([root.pid!, inGroup].sort());
    expect(look.decided).toBe(true);
    process.kill(-root.pid!, 'SIGKILL');
    expect(await tracker.killAll(2000)).toEqual([]);
    await new Promise((r) => (root.exitCode !== null || root.signalCode !== null ? r(undefined) : root.once('exit', r)));
    const after = tracker.look(root.pid!);
    expect(after.group).toEqual([]);
    expect(after.alive).toEqual([]);
  });
});
