/**
 * `enable --config` is all-or-nothing: the switch and
 * the config reach settings.toml in one atomic write. Crash points are
 * enumerated, not sampled: the command is killed at its 1st, 2nd, … call of each
 * state-changing system call in turn until a run completes (one run held at each
 * point while its home is copied, where seccomp allows: test/helpers/syscall-kill.ts's
 * snapshotRun; else strace's SIGKILL, a run per point), and after every kill
 * settings.toml must be byte for byte the text before or the text after, and read by the host (in order, test/helpers/settings-model.ts) as
 * before or after. A completed run renames onto settings.toml exactly once.
 * (test/faults/crash-points.test.ts does the same for every command and the whole home.)
 *
 * Needs strace (ptrace). Without it the suite is skipped with the reason shown,
 * or fails when YEP_EXT_REQUIRE_ALL=1 (CI).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyTree } from '../helpers/file-walk.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { hostRuns, sortKeys } from '../helpers/settings-model.js';
import { canSnapshot, limiter, parseCalls, snapshotRun, straceNeed, tracedRun } from '../helpers/syscall-kill.js';
import { describeNeeding } from '../helpers/needs.js';

const strace = straceNeed();

/** Every system call that changes what is on disk on the way to settings.toml. */
const SYSCALLS = ['fsync', 'fdatasync', 'rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'mkdir', 'rmdir'];
/** Two traced runs at a time (the machine has two cores). */
const slot = limiter(2);
/** Temp files of settings.toml: yep-ext's own (`.settings.toml.yep-<pid>-<n>.tmp`) and write-file-atomic's. */
const SETTINGS_TEMP = /^(\.settings\.toml\.yep-\d+-\d+\.tmp|settings\.toml\.\d+)$/;

let home: TempHome;
beforeEach(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', 'alpha'), {
    name: 'alpha',
    yolop: { config_schema: { type: 'object', required: ['endpoint'], properties: { endpoint: { type: 'string' }, port: { type: 'integer' } } } },
  });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
});
afterEach(() => home.cleanup());

/** Everything the host would make of settings.toml for ext:alpha. */
const hostState = (text: string | null) => JSON.stringify(sortKeys(text === null ? { enabled: false, config: {} } : hostRuns(text, 'alpha')));
const readSettings = (configDir: string): string | null =>
  existsSync(join(configDir, 'settings.toml')) ? readFileSync(join(configDir, 'settings.toml'), 'utf8') : null;

/**
 * Enumerate every kill point of `args` starting from settings text `start` (null: no file).
 * Each run starts from its own copy of the same home: a killed run leaves the installer
 * lock (a later command would wait for it to go stale) and maybe a temp file.
 */
async function enumerateKills(args: string[], start: string | null): Promise<{ after: string | null; kills: number; afterDir: string }> {
  const template = home.configDir;
  if (start === null) rmSync(join(template, 'settings.toml'), { force: true });
  else writeFileSync(join(template, 'settings.toml'), start);
  const copies: string[] = [];
  const copy = (): { root: string; configDir: string; env: Record<string, string> } => {
    const root = mkdtempSync(join(tmpdir(), 'yep-kill-enable-'));
    copies.push(root);
    const configDir = join(root, 'yolop');
    copyTree(template, configDir);
    return { root, configDir, env: { ...home.env, YOLOP_CONFIG_DIR: configDir } };
  };
  try {
    // The completed run first: the "after" text, and how many calls of each syscall there are to kill at.
    const full = copy();
    const done = await slot(() => tracedRun(args, { env: full.env, traceFile: join(full.root, 'trace'), syscalls: SYSCALLS }));
    expect(done.status, done.trace).toBe(0);
    const calls = parseCalls(done.trace, SYSCALLS);
    const renames = calls.filter((c) => c.syscall.startsWith('rename') && /, "[^"]*\/settings\.toml"/.test(c.line));
    expect(
      renames.map((c) => c.line),
      'renames onto settings.toml',
    ).toHaveLength(1);
    const after = readSettings(full.configDir);
    expect(after).not.toBe(start);

    for (const syscall of SYSCALLS) {
      const mine = calls.filter((c) => c.syscall === syscall);
      expect(new Set(mine.map((c) => c.tid)).size, `${syscall} called from several threads: when=N would not enumerate`).toBeLessThanOrEqual(1);
    }
    // Each syscall's 1st, 2nd, … call, and one more than the completed run made (none: the run completes).
    const points = SYSCALLS.flatMap((syscall) => {
      const count = calls.filter((c) => c.syscall === syscall).length;
      return Array.from({ length: count + 1 }, (_, i) => ({ syscall, n: i + 1, count }));
    });
    /** What a kill at `p` left in settings.toml, judged; 1 when it was a kill. */
    const judge = (p: (typeof points)[number], now: string | null, reached: boolean): number => {
      expect([start, after], `killed at ${p.syscall} #${p.n}: settings.toml is neither before nor after:\n${now}`).toContain(now);
      expect([hostState(start), hostState(after)]).toContain(hostState(now));
      if (p.n <= p.count) {
        expect(reached, `${p.syscall} #${p.n} of ${p.count} was not reached`).toBe(true);
        return 1;
      }
      expect(reached, `no ${p.syscall} #${p.n}, so the run completes`).toBe(false);
      return 0;
    };
    let kills = 0;
    if (canSnapshot()) {
      // One run, held at every point while its home is copied (syscall-kill.ts's snapshotRun):
      // each copy is what a kill there leaves. A point past the last call is never reached.
      const h = copy();
      const copies = points.map((point, i) => ({ point, copy: join(h.root, `at-${i}`) }));
      const r = await slot(() => snapshotRun(args, { env: h.env, dir: h.configDir, points: copies, log: join(h.root, 'log') }));
      expect(r.status, r.stderr).toBe(0);
      expect(
        r.failed.filter((f) => f !== undefined),
        'copies that failed',
      ).toEqual([]);
      expect(readSettings(h.configDir), 'the held run ends as the completed run').toBe(after);
      // A point never reached leaves what the completed run does.
      for (const [i, { point, copy: dir }] of copies.entries()) {
        const reached = r.taken[i] !== undefined;
        kills += judge(point, readSettings(reached ? dir : h.configDir), reached);
      }
    } else {
      const runs = points.map((p) =>
        slot(async () => {
          const h = copy();
          const r = await tracedRun(args, { env: h.env, traceFile: join(h.root, 'trace'), syscalls: [p.syscall], kill: { syscall: p.syscall, n: p.n } });
          const reached = r.signal === 'SIGKILL';
          if (!reached) expect(r.status, `${p.syscall} #${p.n}: neither killed nor completed`).toBe(0);
          return judge(p, readSettings(h.configDir), reached);
        }),
      );
      // Every run finishes before any failure is reported (and before the copies are removed).
      const settled = await Promise.allSettled(runs);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      kills = settled.reduce((a, r) => a + (r.status === 'fulfilled' ? r.value : 0), 0);
    }
    const afterDir = join(home.root, 'after');
    copyTree(full.configDir, afterDir);
    return { after, kills, afterDir };
  } finally {
    for (const c of copies) rmSync(c, { recursive: true, force: true });
  }
}

describeNeeding(strace, 'enable --config: killed at every state-changing system call', () => {
  it('a first enable with config: before (no entry) or after (enabled with the config), never between', async () => {
    const { after, kills } = await enumerateKills(
      ['enable', 'alpha', '--config', 'endpoint=https://e.example', '--config', 'port=8080'],
      '# mine\ntheme = "dark"\n',
    );
    expect(hostRuns(after as string, 'alpha')).toEqual({ enabled: true, config: { endpoint: 'https://e.example', port: 8080 } });
    expect(kills).toBeGreaterThan(0);
  }, 300_000);

  it('two disabled entries around another capability, the last switched on with new config in one write', async () => {
    const start =
      '[[capabilities]]\nref = "ext:alpha"\nenabled = false\nendpoint = "old"\n\n[[capabilities]]\nref = "lsp"\n\n[[capabilities]]\nref = "ext:alpha"\nenabled = false\n';
    // enable switches back on the last table (the one disable marks); the first stays a removing
    // entry the host reads before any instance exists, so its endpoint is not in force: set anew.
    const { after, afterDir } = await enumerateKills(['enable', 'alpha', '--config', 'port=1', '--config', 'endpoint=new'], start);
    expect(hostRuns(after as string, 'alpha')).toEqual({ enabled: true, config: { endpoint: 'new', port: 1 } });
    // No temp file of a completed run is left behind.
    expect(readdirSync(afterDir).filter((n) => SETTINGS_TEMP.test(n))).toEqual([]);
  }, 300_000);
});
