/**
 * Doctor's early start (src/cli/doctor-early.ts): the doctor command spawns the server
 * of a package directory before it loads doctor's code, and doctor adopts it only when
 * its own spawn would be the same. A recording server writes what it was started with;
 * the spawn made early and the one doctor makes itself (with --call, which the early
 * start declines) must agree in everything but the run tag, and whatever was started
 * early and not adopted must be gone (killed and reaped) when doctor exits. Needs
 * `npm run build`.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePackage, SERVER_FIXTURES } from '../helpers/ext-package.js';
import { makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { waitNoneWithEnv } from '../helpers/proc.js';

// A server that leaves a daemon in a session of its own (stdio on /dev/null: only the
// environment's run tag ties it to the server) and exits at once, before answering anything.
// Its arguments are `--pid-file FILE --sleep SECS`; the daemon's pid goes to FILE. It re-runs
// itself once with PID_FILE in its environment, so every process it starts carries it from
// birth (the test finds them by it). Doctor must find and kill the daemon even when it first
// looks after the server is gone (its early start, doctor-early.ts).
const daemonThenExit = `#!/bin/sh
[ -n "$PID_FILE" ] || exec env PID_FILE="$2" SECS="$4" /bin/sh "$0" "$@"
setsid sleep "$SECS" </dev/null >/dev/null 2>&1 &
echo $! >> "$PID_FILE"
exit 0
`;

let home: TempHome;
let pkgs: string;

beforeAll(() => {
  home = makeTempHome('yep-doctor-early-');
  pkgs = join(home.root, 'pkgs');
  mkdirSync(pkgs);
  makePackage(join(home.configDir, 'extensions'), 'inst', { server: 'good.sh', args: ['--name', 'inst'] });
});
afterAll(() => home.cleanup());

describe('doctor: the server started before doctor loads', () => {
  let earlyMark: string;
  beforeAll(() => {
    earlyMark = join(home.root, 'early-servers');
  });

  /** A package whose server appends how it was started to <dir>/record.jsonl, then serves as good.sh does. */
  function recorder(name: string, yolop: Record<string, unknown> = {}): string {
    const args = ['--name', name, '--record', join(pkgs, name, 'record.jsonl'), 'an arg', '', '--serve', join(SERVER_FIXTURES, 'good.sh')];
    return makePackage(pkgs, name, { server: 'record-spawn.sh', args, yolop });
  }

  interface Record_ {
    pid: number;
    argv: string[];
    cwd: string;
    env: Record<string, string>;
    ppid: number;
    pgid: number;
    sid: number;
    fds: string[];
    umask: number;
  }
  const records = (dir: string): Record_[] =>
    existsSync(join(dir, 'record.jsonl'))
      ? readFileSync(join(dir, 'record.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record_)
      : [];
  const earlyPids = (): number[] => (existsSync(earlyMark) ? readFileSync(earlyMark, 'utf8').split(/\s+/).filter(Boolean).map(Number) : []);
  const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);

  async function run(args: string[], env: Record<string, string> = {}): Promise<RunResult & { early: number[] }> {
    rmSync(earlyMark, { force: true });
    const r = await runCli(args, { env: { ...home.env, YEP_EXT_TEST_EARLY_SERVER_MARK: earlyMark, ...env } });
    return { ...r, early: earlyPids() };
  }

  /** What a record says about the spawn, with the run's tag checked and set aside. */
  function spawnShape(r: Record_, doctorPid: number): Omit<Record_, 'pid' | 'ppid' | 'pgid' | 'sid'> {
    expect(r.ppid, "the server is doctor's own child").toBe(doctorPid);
    expect(r.pgid, 'in a process group of its own').toBe(r.pid);
    expect(r.sid, 'in a session of its own').toBe(r.pid);
    expect(r.env.YEP_EXT_SERVER_RUN).toMatch(new RegExp(`^${doctorPid}-[0-9a-z]+-[0-9a-z]+$`));
    const env = { ...r.env };
    delete env.YEP_EXT_SERVER_RUN;
    const { pid: _p, ppid: _pp, pgid: _g, sid: _s, ...rest } = r;
    return { ...rest, env };
  }

  it('spawns exactly what doctor spawns itself (argv, env, cwd, stdio, group, session), and doctor adopts both runs', async () => {
    const dir = recorder('recorded');
    const fast = await run(['doctor', dir, '--json']);
    expect(fast.code, fast.stderr).toBe(0);
    const early = records(dir);
    rmSync(join(dir, 'record.jsonl'));
    // --call: doctor calls a tool in its first run, which the early start does not guess; it spawns both runs itself.
    const full = await run(['doctor', dir, '--json', '--call', 'echo']);
    expect(full.early, 'no early start with --call').toEqual([]);
    expect(full.code, full.stderr).toBe(0);
    const late = records(dir);
    // Both runs of each, and the early ones are the servers doctor reports (adopted, not respawned).
    expect(early).toHaveLength(2);
    expect(late).toHaveLength(2);
    const report = JSON.parse(fast.stdout) as { server_pids: number[] };
    expect(fast.early).toHaveLength(2);
    expect([...report.server_pids].sort()).toEqual([...fast.early].sort());
    expect(early.map((r) => r.pid).sort()).toEqual([...fast.early].sort());
    // The doctor process: every record names the same parent, whichever run it is.
    const fastDoctor = early[0]!.ppid;
    const fullDoctor = late[0]!.ppid;
    for (const r of [...early, ...late]) expect(r.argv).toContain('an arg');
    const shapes = early.map((r) => spawnShape(r, fastDoctor));
    const want = late.map((r) => spawnShape(r, fullDoctor));
    expect(shapes[0]).toEqual(want[0]);
    expect(shapes[1]).toEqual(want[1]);
    expect(early[0]!.env.YEP_EXT_SERVER_RUN).not.toBe(early[1]!.env.YEP_EXT_SERVER_RUN);
    for (const pid of fast.early) expect(alive(pid), `server ${pid}`).toBe(false);
  });

  // Started early, then not adopted: doctor spawns nothing (a manifest that parses as JSON
  // but is not valid), or only the first run (the handshake fails), or the server is gone
  // before it is adopted. Killed and reaped before doctor exits.
  const discarded: [string, () => string[], number, number][] = [
    [
      'a manifest that is JSON but not valid: nothing adopted',
      () => ['doctor', recorder('invalid-manifest', { tools: [{ name: 'no description' }] }), '--json'],
      9,
      0,
    ],
    ['a manifest that is JSON but not valid, human', () => ['doctor', recorder('invalid-manifest-h', { tools: [{ name: 'no description' }] })], 9, 0],
    [
      'a handshake that fails: the second run is not adopted',
      () => ['doctor', makePackage(pkgs, 'silent-early', { server: 'silent.sh' }), '--json', '--timeout', '1'],
      9,
      1,
    ],
    ['a server that writes garbage', () => ['doctor', makePackage(pkgs, 'garbage-early', { server: 'garbage.sh' }), '--json', '--timeout', '3'], 9, 2],
    // In sh it is normally gone before doctor has loaded its code, as the name says; that a
    // discarded server still running is killed is checked by the cases above (invalid manifest,
    // silent), which fail when discard() kills nothing.
    ['a server that exits before it is adopted', () => ['doctor', makePackage(pkgs, 'crashes-early', { server: 'exit-at-once.sh' }), '--json'], 9, 1],
  ];
  it.each(discarded)('%s', async (_name, args, code, adopted) => {
    const a = args();
    // Every case fails its checks: how long doctor waits for a server that never answers to
    // stop (2 s a step, the silent one's shutdown and EOF) is not what is checked here.
    const r = await run(a, { YEP_EXT_TEST_DOCTOR_GRACE_MS: '300' });
    const pids = r.early;
    expect(pids, 'both runs were started early').toHaveLength(2);
    expect(r.code).toBe(code);
    for (const pid of pids) expect(alive(pid), `early server ${pid} left behind`).toBe(false);
    if (a.includes('--json')) {
      const report = JSON.parse(r.stdout) as { server_pids: number[] };
      expect(report.server_pids, 'every server doctor reports is one started early').toEqual(pids.slice(0, adopted));
    }
  });

  it('a server that leaves a session daemon and exits at once: the daemon is found and killed, adopted or discarded', async () => {
    const cases: [string, Record<string, unknown>, number][] = [
      ['daemon-adopted', {}, 9],
      // A manifest that fails its checks: both early servers are discarded, never adopted.
      ['daemon-discarded', { tools: [{ name: 'no description' }] }, 9],
    ];
    for (const [name, yolop, code] of cases) {
      const pidFile = join(pkgs, `${name}.pids`);
      const dir = makePackage(pkgs, name, { args: ['--pid-file', pidFile, '--sleep', '97'], yolop });
      // A shell server, not Node: it starts its daemon within a millisecond or two, before doctor
      // can decide to discard it (a Node server under CI load could be killed before it got that
      // far, and then there is no daemon to find).
      writeFileSync(join(dir, 'bin', name), daemonThenExit, { mode: 0o755 });
      // Even a shell can lose that race on a loaded machine: a run with no daemon proves nothing,
      // so it is run again, a few times at most.
      let daemons: number[] = [];
      for (let attempt = 0; attempt < 5 && daemons.length === 0; attempt++) {
        rmSync(pidFile, { force: true });
        const r = await run(['doctor', dir, '--json']);
        try {
          expect(r.early, `${name}: both runs were started early`).toHaveLength(2);
          expect(r.code, `${name}: ${r.stdout}`).toBe(code);
          // Whatever got started, recorded or not (the daemons, and the shell between: each
          // inherits PID_FILE), is killed by the time doctor exits: on a loaded machine a killed
          // process may take a moment to go, one never signalled sleeps for 97 s.
          expect(await waitNoneWithEnv(`PID_FILE=${pidFile}`), `${name}: processes outlived doctor`).toEqual([]);
          daemons = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split(/\s+/).filter(Boolean).map(Number) : [];
          if (name === 'daemon-adopted') {
            // The adopted run waits for the server, so its daemon exists and is reported.
            expect(daemons.length, `${name}: the servers started their daemons`).toBeGreaterThan(0);
            const processes = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find(
              (c) => c.name === 'processes',
            )!;
            expect(processes.status).toBe('fail');
            expect(processes.detail).toContain('sleep 97');
          }
        } finally {
          for (const { pid } of await waitNoneWithEnv(`PID_FILE=${pidFile}`, 0))
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              /* gone */
            }
        }
      }
      expect(daemons.length, `${name}: in five runs, no server started its daemon before doctor decided`).toBeGreaterThan(0);
    }
  });

  it('starts nothing early for what it would not adopt, and nothing is left', async () => {
    const dir = recorder('not-early');
    const configured = recorder('configured', { config_schema: { type: 'object', properties: { token: { type: 'string', secret: true, env: 'TOKEN' } } } });
    const none: [string[], Record<string, string>?][] = [
      [['doctor', dir, '--call', 'echo']],
      [['doctor', dir, '--help']],
      [['doctor', dir, '--timeout', 'soon']],
      [['doctor', 'inst']],
      [['doctor', join(pkgs, 'nope')]],
      [['doctor', makePackage(pkgs, 'nocmd-early', { command: 'bin/not-there' })]],
    ];
    for (const [args, env] of none) {
      const r = await run(args, env);
      expect(r.early, args.join(' ')).toEqual([]);
    }
    // A manifest doctor rejects (a name the host refuses, nothing contributed): no code of it runs at all.
    const rejected: Array<[string, (m: Record<string, any>) => void]> = [
      ['badname-early', (m) => (m.name = 'Wrong Name!')],
      ['empty-early', (m) => (m.yolop = { capabilityServer: m.yolop.capabilityServer })],
    ];
    for (const [name, change] of rejected) {
      const pkg = recorder(name);
      const manifest = JSON.parse(readFileSync(join(pkg, 'plugin.json'), 'utf8'));
      change(manifest);
      writeFileSync(join(pkg, 'plugin.json'), JSON.stringify(manifest));
      const r = await run(['doctor', pkg, '--json']);
      expect(r.code, name).toBe(9);
      expect(r.early, name).toEqual([]);
      expect(records(pkg), name).toEqual([]);
    }
    // Config the host would inject: a secret on record for it (connections.toml names it).
    writeFileSync(join(home.configDir, 'connections.toml'), '["ext:configured"]\ntoken = "s3cret"\n', { mode: 0o600 });
    const r = await run(['doctor', configured, '--json']);
    expect(r.early).toEqual([]);
    expect(records(configured).map((x) => x.env.TOKEN)).toEqual(['s3cret', 's3cret']);
    // With --no-config nothing is injected: started early again.
    expect((await run(['doctor', configured, '--json', '--no-config'])).early).toHaveLength(2);
  });
});
