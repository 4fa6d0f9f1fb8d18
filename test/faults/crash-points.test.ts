/**
 * Crash points enumerated, not sampled. Each state-changing command is
 * killed at every state-changing system call in turn: its 1st rename, 2nd
 * rename, …, 1st fsync, … (test/helpers/syscall-kill.ts), each time from the same
 * home; and at every call where a change of a file of the home in place can start or
 * go on (syscall-kill.ts's IN_PLACE_SYSCALLS, `inPlaceCall`): an open that may truncate
 * or write a file already there (O_TRUNC, or O_CREAT without O_EXCL), a truncation, and
 * every write to a file the command did not create O_EXCL for itself (its temp files are
 * exempt until renamed). A kill at the write after an O_TRUNC open is the one that finds
 * a state file empty: without those points a state file rewritten in place would pass.
 * After every kill:
 *   (a) what the agent would load (test/helpers/agent-view.ts: the enabled
 *       extensions, read as the host reads them, with their package files, config
 *       and secrets) equals the state before the command or after it, with NO
 *       recovery run: the agent runs none;
 *   (b) after the next command's recovery (the first installer-lock holder's,
 *       run here in-process), everything on disk in the home (store, versions,
 *       lock, grants, settings, secrets, staging) equals before or after, with no
 *       temp file left anywhere (the cache included).
 * A completed run of each command is the "after", and recovery changes nothing in it.
 *
 * Kill points that leave the same disk are killed at once: the completed run is traced
 * with every call, and points with only calls between them that change no file the
 * checks or recovery read (test/helpers/kill-equivalence.ts: fsyncs, failed calls,
 * reads, the download cache in HOME) are one state.
 *
 * A kill at a call's entry leaves every change made before it and none after, so the
 * distinct points of a command are all visited in one run of it: held at each point's
 * call while its home is copied, with every call that could change a file held too
 * (seccomp-kill.c's --snapshot), each copy then judged as the kill's home. Where seccomp
 * cannot do that, each point is one SIGKILLed run (strace's, which counts every call of a
 * syscall: the in-place points, counted only where they can change a file, are seccomp's
 * alone and left out there). Real SIGKILLs check both shortcuts every run: the first merged
 * point of each command (its first point when none merged) is killed and must end exactly
 * as its group's point did (the agent's view, the disk's names as killed, the disk after
 * recovery); CRASH_POINTS_VERIFY=1 kills at every point, merged or not, and checks each
 * against its group's. A recovery that refuses a killed home fails its point.
 */
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createContext } from '../../src/core/context.js';
import { withInstallLock } from '../../src/core/store/install-lock.js';
import { agentView } from '../helpers/agent-view.js';
import { copyTree, removeTree } from '../helpers/file-walk.js';
import { buildCrate } from '../helpers/crates.js';
import { homeState, strayFiles } from '../helpers/home-state.js';
import { REPO_ROOT, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import {
  canSnapshot,
  IN_PLACE_SYSCALLS,
  inPlaceCall,
  killPlan,
  killedElsewhere,
  limiter,
  maskVolatile,
  parseCalls,
  snapshotRun,
  STATE_SYSCALLS,
  straceNeed,
  tracedRun,
  type KillPoint,
  type TracedRun,
} from '../helpers/syscall-kill.js';
import { equivalentPoints, freshFiles, INERT_SYSCALLS } from '../helpers/kill-equivalence.js';
import { describeNeeding } from '../helpers/needs.js';

const strace = straceNeed();
const hasStrace = strace.ok;
/** Two traced runs at a time over all scenarios (the CI machine has two cores). */
const slot = limiter(2);

const FAST = { YEP_EXT_HTTP_TIMEOUT_MS: '10000', YEP_EXT_HTTP_RETRIES: '1', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '20' };

let reg: TestRegistry;
let shared: TempHome; // templates, path packages and project locks; never a home that is run in
const scratch: string[] = [];

/** A small crate: manifest (a config field and a secret one), Cargo.toml, an executable server. */
function crate(name: string, version: string, tools = ['one']): Buffer {
  const manifest = {
    name,
    version,
    yolop: {
      capabilityServer: { command: `${name}-server` },
      tools: tools.map((t) => ({ name: t })),
      config_schema: { type: 'object', properties: { level: { type: 'string' }, token: { type: 'string', secret: true, env: 'TOKEN' } } },
    },
  };
  return buildCrate({
    name: `yolop-extension-${name}`,
    version,
    files: {
      'Cargo.toml': `[package]\nname = "yolop-extension-${name}"\nversion = "${version}"\n`,
      'plugin.json': JSON.stringify(manifest, null, 2),
      [`bin/${name}-server`]: { content: Buffer.from(`#!/bin/sh\n# ${version}\nexec cat >/dev/null\n`), mode: 0o755 },
    },
  });
}

function envFor(configDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: join(configDir, '..', 'home'),
    YOLOP_CONFIG_DIR: configDir,
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    YEP_EXT_INDEX: reg.indexUrl,
    ...FAST,
    ...extra,
  };
}

/** A fresh scratch directory holding a copy of `template` (a config dir alone, nothing re-signed: not a prepared home, see prepared-home.ts); returns its config dir. */
function scratchConfigFrom(template: string): { root: string; configDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'yep-crash-'));
  scratch.push(root);
  const configDir = join(root, 'yolop');
  copyTree(template, configDir);
  return { root, configDir };
}

async function ok(configDir: string, args: string[], input?: string): Promise<void> {
  const r = await runCli(args, { env: envFor(configDir), ...(input !== undefined ? { input } : {}) });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** What the next lock-taking command does first: recovery (a killed holder's installer lock is stale by then). */
async function recover(configDir: string): Promise<void> {
  const lockDir = join(configDir, 'extensions', '.yep-ext.lock');
  if (existsSync(lockDir)) utimesSync(lockDir, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  await withInstallLock(createContext({ env: envFor(configDir) }), async () => {});
}

interface Scenario {
  title: string;
  /** The config dir the command starts from. */
  template: () => string;
  args: () => string[];
  input?: string;
  env?: Record<string, string>;
  /**
   * The documented window of a first replacement of a real-directory entry: kill
   * points where the agent finds this extension enabled but absent. Exactly one is allowed.
   */
  window?: string;
  /** Checks of the completed run's result. */
  expectAfter?: (agent: ReturnType<typeof agentView>, before: ReturnType<typeof agentView>) => void;
}

const points: Record<string, string> = {};
const unreached: Record<string, number> = {};

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const oneOf = (x: unknown, a: unknown, b: unknown): boolean => same(x, a) || same(x, b);

/** What every kill of one scenario is judged against, and where its failures go. */
interface KillRun {
  s: Scenario;
  template: string;
  agentBefore: ReturnType<typeof agentView>;
  agentAfter: ReturnType<typeof agentView>;
  stateBefore: ReturnType<typeof homeState>;
  stateAfter: ReturnType<typeof homeState>;
  /** What the agent sees inside the documented window (the scenario has one). */
  gapState: object | undefined;
  failures: string[];
}

/** What the test judges of a home as a kill at a point left it. */
type Outcome = { agent: ReturnType<typeof agentView>; killed: string[]; recovered: string[]; gap: boolean };

/** Judge the home at `configDir` (where the command ran) as the kill at `point` left it; `killed`: the call it was killed at. */
async function judge(run: KillRun, point: KillPoint, configDir: string, killed: TracedRun['killed'], how: string): Promise<Outcome> {
  const { s, agentBefore, agentAfter, stateBefore, stateAfter, gapState, failures } = run;
  const where = `${s.title}: ${how} at ${point.syscall} #${point.n}`;
  const killedAt = point.call.line;
  // The run died at the planned call: the same syscall, per-thread number and paths.
  const elsewhere = killedElsewhere(point, killed);
  if (elsewhere !== null) failures.push(`${where} (${killedAt}): ${elsewhere}`);
  const agent = agentView(configDir);
  // The disk as the kill left it, names only (temp and staging names carry pids and clocks).
  const names = homeState(configDir, { digests: false }).files.map((l) => maskVolatile(l.split(' ')[0] ?? ''));
  const gap = gapState !== undefined && same(agent, gapState);
  if (gap) {
    // Counted below, per point.
  } else if (!oneOf(agent, agentBefore, agentAfter)) {
    failures.push(
      `${where} (${killedAt}): the agent would load neither the before nor the after state:\n${JSON.stringify({ agent, before: agentBefore, after: agentAfter }, null, 1)}`,
    );
  }
  try {
    await recover(configDir);
  } catch (e) {
    // Recovery refusing the home (a state file torn in place) is this kill point's failure.
    failures.push(`${where} (${killedAt}): recovery failed: ${(e as Error).message}`);
  }
  const state = homeState(configDir);
  if (!oneOf(state.files, stateBefore.files, stateAfter.files)) {
    const extra = (l: string[], o: string[]) => l.filter((x) => !o.includes(x));
    const near = extra(state.files, stateBefore.files).length <= extra(state.files, stateAfter.files).length ? stateBefore : stateAfter;
    failures.push(
      `${where} (${killedAt}): after recovery the home is neither before nor after:\n  unexpected: ${extra(state.files, near.files).join('\n    ')}\n  missing: ${extra(near.files, state.files).join('\n    ')}`,
    );
  }
  const stray = strayFiles(state);
  if (stray.length > 0) failures.push(`${where} (${killedAt}): stray files after recovery: ${stray.join(', ')}`);
  return { agent, killed: names, recovered: state.files, gap };
}

/** Kill at `point` (SIGKILL) on a fresh copy of the template; what the test judges of the result. */
async function killAtPoint(run: KillRun, point: KillPoint): Promise<Outcome | undefined> {
  const { s, template, failures } = run;
  const h = scratchConfigFrom(template);
  try {
    const r = await tracedRun(s.args(), {
      env: envFor(h.configDir, s.env),
      traceFile: join(h.root, 'trace'),
      kill: { syscall: point.syscall, n: point.n },
      ...(s.input ? { input: s.input } : {}),
    });
    if (r.signal !== 'SIGKILL') {
      failures.push(`${s.title}: killed at ${point.syscall} #${point.n}: not reached (exit ${r.status}; the command's calls differ between runs)\n${r.stderr}`);
      return undefined;
    }
    return await judge(run, point, h.configDir, r.killed, 'killed');
  } finally {
    rmSync(h.root, { recursive: true, force: true });
  }
}

/**
 * The disk a kill at each of `points` leaves, from one run of the command on a fresh copy of
 * the template, copied at each point's call while the command is held there
 * (syscall-kill.ts's snapshotRun). Each copy is judged in turn where the command ran (the
 * home's own path: recovery finds what the run named), once the run has ended.
 */
async function snapshotPoints(run: KillRun, points: KillPoint[]): Promise<Map<KillPoint, Outcome | undefined>> {
  const { s, template, stateAfter, failures } = run;
  const h = scratchConfigFrom(template);
  const copies = points.map((point, i) => ({ point, copy: join(h.root, `at-${i}`) }));
  const out = new Map<KillPoint, Outcome | undefined>();
  try {
    const r = await snapshotRun(s.args(), {
      env: envFor(h.configDir, s.env),
      dir: h.configDir,
      points: copies,
      log: join(h.root, 'log'),
      ...(s.input ? { input: s.input } : {}),
    });
    if (r.status !== 0) failures.push(`${s.title}: the run held at each kill point did not complete (exit ${r.status ?? r.signal})\n${r.stderr}`);
    else if (!same(homeState(h.configDir), stateAfter)) failures.push(`${s.title}: the run held at each kill point ended elsewhere than the completed run`);
    for (const [i, { point, copy }] of copies.entries()) {
      const paths = r.taken[i];
      if (paths === undefined) {
        const failed = r.failed[i];
        failures.push(
          failed !== undefined
            ? `${s.title}: held at ${point.syscall} #${point.n}: the home could not be copied there (${failed})`
            : `${s.title}: held at ${point.syscall} #${point.n}: not reached (the command's calls differ between runs)`,
        );
        out.set(point, undefined);
        continue;
      }
      removeTree(h.configDir);
      renameSync(copy, h.configDir);
      out.set(point, await judge(run, point, h.configDir, { syscall: point.syscall, n: point.n, paths }, 'killed (held and copied)'));
    }
  } finally {
    rmSync(h.root, { recursive: true, force: true });
  }
  return out;
}

/** Kill `s` at every state-changing call; returns how many kill points there were. */
async function enumerate(s: Scenario): Promise<number> {
  const template = s.template();
  const agentBefore = agentView(template);
  const stateBefore = homeState(template);
  // The completed run: the "after" state, and how many calls of each syscall there are to kill at.
  const full = scratchConfigFrom(template);
  const done = await slot(() =>
    tracedRun(s.args(), {
      env: envFor(full.configDir, s.env),
      everything: true,
      omit: INERT_SYSCALLS,
      traceFile: join(full.root, 'trace'),
      ...(s.input ? { input: s.input } : {}),
    }),
  );
  expect(done.status, done.stderr).toBe(0);
  // The state syscalls, and (where seccomp-kill can count them) the calls where a change in
  // place can start, kept where they would find a file of the home in the middle of one.
  const inPlace = canSnapshot() ? IN_PLACE_SYSCALLS : [];
  const all = killPlan(parseCalls(done.trace, [...STATE_SYSCALLS, ...inPlace]));
  const fresh = freshFiles(done.trace);
  const kept = (c: KillPoint['call']) => !inPlace.includes(c.syscall) || inPlaceCall(c, full.configDir, fresh);
  const plan = { points: all.points.filter((p) => kept(p.call)), unreachable: all.unreachable.filter(kept) };
  if (process.env.CRASH_POINTS_DUMP) writeFileSync(join(process.env.CRASH_POINTS_DUMP, s.title.replace(/[^a-z0-9]+/gi, '_')), done.trace);
  // A call no when=N reaches (another thread's call of the same syscall came first) may only be
  // the unpacker writing into private staging: a stage without a journal, swept whole by recovery.
  expect(plan.unreachable.filter((c) => !c.line.includes('/.yep-staging/')).map((c) => c.line)).toEqual([]);
  const agentAfter = agentView(full.configDir);
  const stateAfter = homeState(full.configDir);
  expect(stateAfter).not.toEqual(stateBefore);
  s.expectAfter?.(agentAfter, agentBefore);
  await recover(full.configDir);
  expect(homeState(full.configDir), 'recovery after a completed run changes nothing').toEqual(stateAfter);
  expect(strayFiles(stateAfter)).toEqual([]);

  const failures: string[] = [];
  const gapState = s.window ? { ...agentBefore, [s.window]: { ...agentBefore[s.window], package: null } } : undefined;
  const run: KillRun = { s, template, agentBefore, agentAfter, stateBefore, stateAfter, gapState, failures };
  // Points with only inert calls between them leave the same disk (test/helpers/kill-equivalence.ts),
  // calls that change only files in HOME (the shared download cache) counted as inert:
  // each group is killed once. HOME holds only the shared download cache (cacache's):
  // nothing here reads it, recovery neither.
  const { kill, same: merged } = equivalentPoints(done.trace, plan.points, [join(full.root, 'home')]);
  // Every group's point is killed in one run held at each of them in turn, the disk copied
  // there (what a kill there leaves), where seccomp allows; else in one SIGKILLed run each.
  const outcomes = canSnapshot()
    ? await slot(() => snapshotPoints(run, kill))
    : new Map(await Promise.all(kill.map(async (p) => [p, await slot(() => killAtPoint(run, p))] as const)));
  // Real SIGKILLs, at the first merged point of every scenario (at every point, groups' own
  // included, with CRASH_POINTS_VERIFY=1): each must end exactly as its group's point did,
  // so the merge holds, and a held-and-copied point is what a kill there leaves.
  // A command whose every point is distinct has its first point killed for real instead.
  const own = kill.map((p) => ({ point: p, as: p }));
  const verify = process.env.CRASH_POINTS_VERIFY === '1' ? [...merged, ...own] : merged.length > 0 ? merged.slice(0, 1) : own.slice(0, 1);
  let crossChecked = 0;
  await Promise.all(
    verify.map(async ({ point, as }) => {
      const o = await slot(() => killAtPoint(run, point));
      if (o) crossChecked++;
      if (o && !same(o, outcomes.get(as)))
        failures.push(
          `${s.title}: killed at ${point.syscall} #${point.n} (${point.call.line}) is not the same as at ${as.syscall} #${as.n} (${as.call.line}), its group's point:\n${JSON.stringify({ killed: o, group: outcomes.get(as) }, null, 1)}`,
        );
    }),
  );
  expect(failures, failures.slice(0, 5).join('\n\n')).toEqual([]);
  expect(crossChecked, 'at least one real SIGKILL checks the held points').toBeGreaterThanOrEqual(1);
  // Kill points in the window: a killed group's point and every point merged into it.
  const gaps = plan.points.filter((p) => outcomes.get(merged.find((m) => m.point === p)?.as ?? p)?.gap).map((p) => `${p.syscall} #${p.n} (${p.call.line})`);
  if (s.window) expect(gaps, 'the migration window is one rename wide').toHaveLength(1);
  else expect(gaps).toEqual([]);
  rmSync(full.root, { recursive: true, force: true });
  points[s.title] = `${plan.points.length} (${kill.length} distinct, ${verify.length} killed to check)`;
  if (plan.unreachable.length > 0) unreached[s.title] = plan.unreachable.length;
  return plan.points.length;
}

// Templates (config dirs under `shared`), built once through the CLI.
const T: Record<string, string> = {};
let projectLock: string;

beforeAll(async () => {
  if (!hasStrace) return;
  reg = await startRegistry();
  shared = makeTempHome('yep-crash-shared-');
  for (const [name, version] of [
    ['keep', '1.0.0'],
    ['up', '1.0.0'],
    ['fresh', '1.0.0'],
  ] as const)
    reg.publish({ name: `yolop-extension-${name}`, vers: version, data: crate(name, version) });
  const pathPkg = writePackage(join(shared.root, 'src', 'linked'), {
    name: 'linked',
    yolop: { config_schema: { type: 'object', properties: { level: { type: 'string' } } } },
  });

  // base: keep and up installed (crates, owned trees) and enabled; up with config and a secret.
  const base = join(shared.root, 'base');
  await ok(base, ['install', 'keep', 'up']);
  await ok(base, ['enable', 'keep']);
  await ok(base, ['enable', 'up', '--config', 'level=debug']);
  await ok(base, ['set-secret', 'up', 'token', '--stdin'], 'first-secret\n');
  T.base = base;
  projectLock = join(shared.root, 'project.lock');
  writeFileSync(projectLock, readFileSync(join(base, 'extensions', 'extensions.lock')));

  const derive = async (key: string, steps: (dir: string) => Promise<void> | void): Promise<void> => {
    const dir = join(shared.root, key);
    cpSync(base, dir, { recursive: true, verbatimSymlinks: true });
    await steps(dir);
    T[key] = dir;
  };
  // Names settings.toml already enables before they are installed (a leftover entry, or the project's settings).
  await derive('leftover', (d) =>
    appendFileSync(join(d, 'settings.toml'), '\n[[capabilities]]\nref = "ext:fresh"\n\n[[capabilities]]\nref = "ext:linked"\nlevel = "info"\n'),
  );
  await derive('disabled', (d) => ok(d, ['disable', 'up']));
  // up as an older yep-ext (or the host) left it: a real directory at <store>/up.
  await derive('realdir', (d) => {
    const entry = join(d, 'extensions', 'up');
    const version = join(d, 'extensions', readlinkSync(entry));
    rmSync(entry);
    cpSync(version, entry, { recursive: true });
    rmSync(version, { recursive: true });
  });
  // frozen: a home with keep only; the project's settings and secrets already name up.
  const frozen = join(shared.root, 'frozen');
  await ok(frozen, ['install', 'keep']);
  await ok(frozen, ['enable', 'keep']);
  appendFileSync(join(frozen, 'settings.toml'), '\n[[capabilities]]\nref = "ext:up"\nlevel = "debug"\n');
  writeFileSync(join(frozen, 'connections.toml'), '["ext:up"]\ntoken = "first-secret"\n', { mode: 0o600 });
  T.frozen = frozen;
  T.pathPkg = pathPkg;
  // Published after the templates: update and replace have somewhere to go.
  reg.publish({ name: 'yolop-extension-up', vers: '1.1.0', data: crate('up', '1.1.0', ['one', 'two']) });
}, 120_000);

afterAll(async () => {
  if (!hasStrace) return;
  await reg.close();
  shared.cleanup();
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
  console.log(`crash points per command: ${JSON.stringify(points)}; staging-only calls strace's per-thread counter cannot reach: ${JSON.stringify(unreached)}`);
});

const changed = (name: string) => (after: ReturnType<typeof agentView>, before: ReturnType<typeof agentView>) => {
  expect(after[name]?.package, `${name} is loaded after`).toBeTruthy();
  expect(after[name]).not.toEqual(before[name]);
};

const scenarios: Scenario[] = [
  {
    title: 'install (fresh crate, already enabled in settings)',
    template: () => T.leftover as string,
    args: () => ['install', 'fresh'],
    expectAfter: changed('fresh'),
  },
  {
    title: 'install (fresh path, already enabled in settings)',
    template: () => T.leftover as string,
    args: () => ['install', T.pathPkg as string],
    expectAfter: changed('linked'),
  },
  {
    title: 'install replacing an enabled crate (1.0.0 -> 1.1.0)',
    template: () => T.base as string,
    args: () => ['install', 'up@=1.1.0', '--yes'],
    expectAfter: changed('up'),
  },
  { title: 'update of an enabled crate', template: () => T.base as string, args: () => ['update', 'up', '--yes'], expectAfter: changed('up') },
  {
    title: 'update of an enabled crate whose entry is a real directory (first migration)',
    template: () => T.realdir as string,
    args: () => ['update', 'up', '--yes'],
    window: 'up',
    expectAfter: changed('up'),
  },
  {
    title: 'remove of an enabled crate with config and a secret',
    template: () => T.base as string,
    args: () => ['remove', 'up'],
    expectAfter: (after) => expect(after.up).toBeUndefined(),
  },
  {
    title: 'enable',
    template: () => T.disabled as string,
    args: () => ['enable', 'up'],
    expectAfter: (after) => expect(after.up?.config).toEqual({ level: 'debug' }),
  },
  {
    title: 'enable --config',
    template: () => T.disabled as string,
    args: () => ['enable', 'up', '--config', 'level=trace'],
    expectAfter: (after) => expect(after.up?.config).toEqual({ level: 'trace' }),
  },
  { title: 'disable', template: () => T.base as string, args: () => ['disable', 'up'], expectAfter: (after) => expect(after.up).toBeUndefined() },
  {
    title: 'set-secret',
    template: () => T.base as string,
    args: () => ['set-secret', 'up', 'token', '--stdin'],
    input: 'second-secret\n',
    expectAfter: (after) => expect(after.up?.secrets).toEqual({ token: 'second-secret' }),
  },
  {
    // Two files (the keychain index, then connections.toml): in between, the file's value wins for every
    // reader, and recovery drops the index entry it shadows.
    title: 'set-secret --keychain (moving a secret out of connections.toml)',
    template: () => T.base as string,
    args: () => ['set-secret', 'up', 'token', '--stdin', '--keychain'],
    input: 'keychain-secret\n',
    env: { YEP_EXT_TEST_KEYCHAIN_MODULE: join(REPO_ROOT, 'test', 'fixtures', 'fake-keyring.mjs') },
    expectAfter: (after) => expect(after.up?.secrets).toEqual({}),
  },
  {
    title: 'install --frozen --lockfile',
    template: () => T.frozen as string,
    args: () => ['install', '--frozen', '--lockfile', projectLock],
    expectAfter: changed('up'),
  },
];

describeNeeding(strace, 'every state-changing command, killed at every state-changing system call', () => {
  it.concurrent.each(scenarios.map((s) => [s.title, s] as const))(
    '%s',
    async (_title, s) => {
      const n = await enumerate(s);
      expect(n).toBeGreaterThan(3);
    },
    600_000,
  );
});
