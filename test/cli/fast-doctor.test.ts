/**
 * The oclif-free `doctor` runner (src/cli/fast-doctor.ts) must be invisible: for
 * passing and failing servers, in --json and human output, stdout, stderr and
 * the exit status are byte-identical to the oclif path (YEP_EXT_NO_FAST_PATH=1)
 * once the inherently variable parts (durations, pids) are masked; every shape it
 * cannot match exactly is left to oclif. Needs `npm run build`.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePackage } from '../helpers/ext-package.js';
import { REPO_ROOT, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { runBothWays } from '../helpers/fast-path-both.js';

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
let mark: string;
let pkgs: string;

/**
 * Durations and pids differ from run to run, and so does whether a server that
 * answered shutdown had exited before its stdin was closed or only once it was
 * (a race inside the server: check-stop.ts reports both as a pass); nothing else may.
 */
function masked(text: string): string {
  return text
    .replace(/and exited once its input closed after/g, 'and exited after')
    .replace(/(?<!limit )\b\d+(\.\d+)? (ms|s)\b/g, '<t>')
    .replace(/: done \(\d+(\.\d+)?m?s\)/g, ': done (<t>)')
    .replace(/\bpid \d+/g, 'pid <n>')
    .replace(/"duration_ms": \d+/g, '"duration_ms": <t>')
    .replace(/"server_pids": \[[\d,\s]*\]/g, '"server_pids": [<n>]');
}

function both(args: string[], env: Record<string, string> = {}): Promise<{ fast: RunResult; oclif: RunResult; tookFastPath: boolean }> {
  return runBothWays(args, { ...home.env, ...env }, mark);
}

function expectSame(r: { fast: RunResult; oclif: RunResult }): void {
  const shape = (x: RunResult) => ({ code: x.code, stdout: masked(x.stdout), stderr: masked(x.stderr) });
  expect(shape(r.fast)).toEqual(shape(r.oclif));
}

beforeAll(() => {
  home = makeTempHome('yep-fast-doctor-');
  mark = join(home.root, 'fast-path-taken');
  pkgs = join(home.root, 'pkgs');
  mkdirSync(pkgs);
  makePackage(join(home.configDir, 'extensions'), 'inst', { args: ['--name', 'inst'] });
});
afterAll(() => home.cleanup());

describe('doctor fast path: same bytes as oclif', () => {
  const echo = join(REPO_ROOT, 'examples', 'echo-node');
  const cases: [string, () => string[], number][] = [
    ['echo-node --json', () => ['doctor', echo, '--json'], 0],
    ['echo-node, human', () => ['doctor', echo], 0],
    ['echo-node --no-config --timeout 5 -q', () => ['doctor', '--no-config', echo, '--timeout', '5', '-q'], 0],
    ['an installed name', () => ['doctor', 'inst', '--verbose'], 0],
    [
      'a failing tools check --json',
      () => ['doctor', makePackage(pkgs, 'widened', { args: ['--name', 'widened', '--tools', 'echo,extra'] }), '--json', '--timeout', '5'],
      9,
    ],
    ['a failing tools check, human', () => ['doctor', makePackage(pkgs, 'widened', { args: ['--name', 'widened', '--tools', 'echo,extra'] })], 9],
    ['a server that exits at once, human', () => ['doctor', makePackage(pkgs, 'crashes', { server: 'exit-at-once.mjs' })], 9],
    ['a server that exits at once --json', () => ['doctor', makePackage(pkgs, 'crashes', { server: 'exit-at-once.mjs' }), '--json'], 9],
    ['a server that writes garbage --json', () => ['doctor', makePackage(pkgs, 'garbage', { server: 'garbage.mjs' }), '--json', '--timeout', '3'], 9],
    ['a command that is missing', () => ['doctor', makePackage(pkgs, 'nocmd', { command: 'bin/not-there' })], 9],
    ['a bad --timeout', () => ['doctor', echo, '--timeout', 'soon'], 2],
    ['a bad --timeout --json', () => ['doctor', echo, '--json', '--timeout', '0'], 2],
    ['a directory that does not exist', () => ['doctor', join(pkgs, 'nope')], 3],
    ['a bad name --json', () => ['doctor', 'bad name!', '--json'], 2],
  ];
  it.each(cases)('%s', async (_name, args, code) => {
    const r = await both(args());
    expect(r.tookFastPath).toBe(true);
    expect(r.oclif.code).toBe(code);
    expectSame(r);
  });

  it('declines the shapes it does not fully understand (oclif answers them)', async () => {
    const declined = [
      ['doctor', 'nothere'], // not installed: oclif adds "did you mean"
      ['doctor', 'inst', '--call', 'echo'],
      ['doctor', 'inst', '--timeout=5'],
      ['doctor', 'inst', '--json', '--json'],
      ['doctor', 'inst', '-q', '--verbose'],
      ['doctor', 'inst', 'other'],
      ['doctor', '--help'],
      ['doctor'],
    ];
    for (const args of declined) {
      rmSync(mark, { force: true });
      await runCli(args, { env: { ...home.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
      expect(existsSync(mark), args.join(' ')).toBe(false);
    }
  });
});

/**
 * The early start (src/cli/doctor-early.ts): bin/run.js spawns the server before it
 * loads doctor's code, and doctor adopts it only when its own spawn would be the
 * same. A recording server writes what it was started with; the spawn made early
 * and the one doctor makes itself (oclif's path, reached through `--timeout=20`,
 * a shape the runner declines, so that the environment is the same) must agree in
 * everything but the run tag, and whatever was started early and not adopted must
 * be gone (killed and reaped) when doctor exits, with the output unchanged.
 */
describe('doctor fast path: the server started before doctor loads', () => {
  let earlyMark: string;
  beforeAll(() => {
    earlyMark = join(home.root, 'early-servers');
  });

  /** A package whose server appends how it was started to <dir>/record.jsonl, then serves as good.mjs does. */
  function recorder(name: string, yolop: Record<string, unknown> = {}): string {
    return makePackage(pkgs, name, { server: 'record-spawn.mjs', args: ['--name', name, '--record', join(pkgs, name, 'record.jsonl'), 'an arg', ''], yolop });
  }

  interface Record_ {
    pid: number;
    argv: string[];
    execArgv: string[];
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

  async function run(args: string[], env: Record<string, string> = {}): Promise<RunResult & { early: number[]; fast: boolean }> {
    rmSync(mark, { force: true });
    rmSync(earlyMark, { force: true });
    const r = await runCli(args, { env: { ...home.env, YEP_EXT_TEST_FAST_PATH_MARK: mark, YEP_EXT_TEST_EARLY_SERVER_MARK: earlyMark, ...env } });
    return { ...r, early: earlyPids(), fast: existsSync(mark) };
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
    expect(fast.fast).toBe(true);
    expect(fast.code, fast.stderr).toBe(0);
    const early = records(dir);
    rmSync(join(dir, 'record.jsonl'));
    const full = await run(['doctor', dir, '--json', '--timeout=20']);
    expect(full.fast).toBe(false);
    expect(full.early, 'no early start for a shape the runner declines').toEqual([]);
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

  it('same bytes as oclif when both runs were started early', async () => {
    const dir = recorder('recorded-bytes');
    rmSync(earlyMark, { force: true });
    const r = await runBothWays(['doctor', dir], { ...home.env, YEP_EXT_TEST_EARLY_SERVER_MARK: earlyMark }, mark);
    expect(r.tookFastPath).toBe(true);
    expect(earlyPids()).toHaveLength(2);
    expect(r.oclif.code).toBe(0);
    expectSame(r);
  });

  // Started early, then not adopted: doctor spawns nothing (a manifest that parses as JSON
  // but is not valid), or only the first run (the handshake fails), or the server is gone
  // before it is adopted. Killed and reaped before doctor exits; the output is oclif's.
  const discarded: [string, () => string[], number, number][] = [
    [
      'a manifest that is JSON but not valid: nothing adopted',
      () => ['doctor', recorder('invalid-manifest', { tools: [{ name: 'no description' }] }), '--json'],
      9,
      0,
    ],
    ['a manifest that is JSON but not valid, human', () => ['doctor', recorder('invalid-manifest-h', { tools: 'none' })], 9, 0],
    [
      'a handshake that fails: the second run is not adopted',
      () => ['doctor', makePackage(pkgs, 'silent-early', { server: 'silent.mjs' }), '--json', '--timeout', '1'],
      9,
      1,
    ],
    ['a server that writes garbage', () => ['doctor', makePackage(pkgs, 'garbage-early', { server: 'garbage.mjs' }), '--json', '--timeout', '3'], 9, 2],
    ['a server that exits before it is adopted', () => ['doctor', makePackage(pkgs, 'crashes-early', { server: 'exit-at-once.mjs' }), '--json'], 9, 1],
  ];
  it.each(discarded)('%s', async (_name, args, code, adopted) => {
    const a = args();
    rmSync(earlyMark, { force: true });
    const r = await runBothWays(a, { ...home.env, YEP_EXT_TEST_EARLY_SERVER_MARK: earlyMark }, mark);
    const pids = earlyPids();
    expect(r.tookFastPath).toBe(true);
    expect(pids, 'both runs were started early').toHaveLength(2);
    expect(r.oclif.code).toBe(code);
    expectSame(r);
    for (const pid of pids) expect(alive(pid), `early server ${pid} left behind`).toBe(false);
    if (a.includes('--json')) {
      const report = JSON.parse(r.fast.stdout) as { server_pids: number[] };
      expect(report.server_pids, 'every server doctor reports is one started early').toEqual(pids.slice(0, adopted));
      expect((JSON.parse(r.oclif.stdout) as { server_pids: number[] }).server_pids).toHaveLength(adopted);
    }
  });

  it('a server that leaves a session daemon and exits at once: the daemon is found and killed, adopted or discarded', async () => {
    const cases: [string, Record<string, unknown>, number][] = [
      ['daemon-adopted', {}, 9],
      // A manifest that fails its checks: both early servers are discarded, never adopted.
      ['daemon-discarded', { tools: 'none' }, 9],
    ];
    // Every process still running (not a zombie) whose environment names this pid file: the
    // daemons, and the shell between, whether or not it got as far as recording the pid.
    const leftBehind = (pidFile: string): number[] => {
      const tag = Buffer.from(`PID_FILE=${pidFile}\0`);
      const found: number[] = [];
      for (const e of readdirSync('/proc')) {
        if (!/^\d+$/.test(e)) continue;
        try {
          if (!readFileSync(`/proc/${e}/environ`).includes(tag)) continue;
          if (!/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${e}/stat`, 'utf8'))) found.push(Number(e));
        } catch {
          // gone, or not ours to read
        }
      }
      return found;
    };
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
          expect(r.fast, name).toBe(true);
          expect(r.early, `${name}: both runs were started early`).toHaveLength(2);
          expect(r.code, `${name}: ${r.stdout}`).toBe(code);
          // Whatever got started, recorded or not, is gone once doctor has exited.
          await new Promise((done) => setTimeout(done, 100));
          expect(leftBehind(pidFile), `${name}: processes outlived doctor`).toEqual([]);
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
          for (const pid of leftBehind(pidFile))
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
      [['doctor', dir, '--timeout=5']],
      [['doctor', dir, '--json'], { YEP_EXT_NO_FAST_PATH: '1' }],
      [['doctor', 'inst']],
      [['doctor', join(pkgs, 'nope')]],
      [['doctor', makePackage(pkgs, 'nocmd-early', { command: 'bin/not-there' })]],
    ];
    for (const [args, env] of none) {
      const r = await run(args, env);
      expect(r.early, args.join(' ')).toEqual([]);
    }
    // Config the host would inject: a secret on record for it (connections.toml names it).
    writeFileSync(join(home.configDir, 'connections.toml'), '["ext:configured"]\ntoken = "s3cret"\n', { mode: 0o600 });
    const r = await run(['doctor', configured, '--json']);
    expect(r.early).toEqual([]);
    expect(r.fast).toBe(true);
    expect(records(configured).map((x) => x.env.TOKEN)).toEqual(['s3cret', 's3cret']);
    // With --no-config nothing is injected: started early again.
    expect((await run(['doctor', configured, '--json', '--no-config'])).early).toHaveLength(2);
  });
});
