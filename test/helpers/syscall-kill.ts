/**
 * Crash points enumerated, not sampled: run the CLI under strace and SIGKILL it
 * at the Nth call of one state-changing system call (`-e inject=<call>:signal=KILL:when=N`).
 * A completed traced run says how many calls of each there are; killing at each
 * of them in turn visits every point where the disk can change.
 *
 * strace counts calls per thread, so a syscall made from two threads could not be
 * enumerated this way: yep-ext makes every state-changing call synchronously on the main
 * thread (libuv's pool is held to one thread all the same, UV_THREADPOOL_SIZE=1), and
 * `countCalls` fails when a syscall comes from more than one thread.
 *
 * Needs strace (ptrace): suites declare it with `straceNeed()` and `describeNeeding`
 * (skipped with the reason shown, or failing when YEP_EXT_REQUIRE_ALL=1, as in CI).
 *
 * The kill runs themselves do not need ptrace: where the kernel has seccomp user
 * notifications (x86_64, Linux 5.5+, a C compiler), test/helpers/seccomp-kill.c kills at the same
 * call with the same per-thread count, and only that one syscall leaves the kernel;
 * strace stops the tracee at every call of every thread (a kill run under strace costs
 * far more CPU than a plain run of the CLI; under seccomp, about the same). `strace --seccomp-bpf` is no way out: its `signal=KILL` never fires
 * (a signal passed when restarting from a seccomp event stop is dropped by the kernel).
 * YEP_EXT_KILL_WITH=strace kills with strace as before. Either way the run reports the
 * call it killed at (`killed`), for the caller to check against its plan.
 *
 * `snapshotRun` visits many kill points in one run that is not killed: held at each
 * point's call while the home is copied (seccomp-kill.c's --snapshot), each copy is the
 * disk a kill there leaves. Seccomp only, like the kill runs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BIN, REPO_ROOT } from './home.js';
import { withSeams } from './seams.mjs';
import { need, type Need } from './needs.js';
import { testCacheDir } from './test-cache.js';

/** Every system call by which a command changes what is on disk. */
export const STATE_SYSCALLS = [
  'rename',
  'renameat',
  'renameat2',
  'unlink',
  'unlinkat',
  'rmdir',
  'symlink',
  'symlinkat',
  'fsync',
  'fdatasync',
  'mkdir',
  'mkdirat',
];

/** Whether strace works here, as a need (test/helpers/needs.ts: skipped with the reason, or failing under YEP_EXT_REQUIRE_ALL=1). */
export function straceNeed(): Need {
  const probe = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', 'true'], { encoding: 'utf8' });
  const why = (probe.stderr || probe.error?.message || '').trim();
  return need(probe.status === 0, `a working strace (Debian package strace, and ptrace allowed${why ? `; here: ${why}` : ''})`);
}

export interface TracedRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** strace's output: one line per traced call, `<tid> <syscall>(...) = ...` (a kill run's: seccomp-kill's log). */
  trace: string;
  /** A kill run that was killed: the call it was killed at, its paths (descriptors as the files they are open on). */
  killed?: { syscall: string; n: number; paths: string[] };
}

/**
 * The calls where a change of a file in place can start (test/faults/crash-points.test.ts's
 * kill points beside the state syscalls): an open that may truncate or write a file already
 * there, truncation, and writes. Each is counted, per thread, only where it can change a
 * file (`inPlaceKind`): the opens with O_TRUNC, or O_CREAT without O_EXCL; the writes to a
 * descriptor open on a file (libuv's wake-ups write to an eventfd as timing has it, and
 * would make a count of every write differ between runs). Killed and held by seccomp-kill
 * only: strace's when=N counts every call.
 */
export const IN_PLACE_SYSCALLS = [
  'open',
  'openat',
  'creat',
  'truncate',
  'ftruncate',
  'fallocate',
  'write',
  'pwrite64',
  'writev',
  'pwritev',
  'pwritev2',
  'sendfile',
  'copy_file_range',
];

const SECCOMP_KILL_SRC = join(REPO_ROOT, 'test', 'helpers', 'seccomp-kill.c');
/**
 * x86_64 numbers of the state syscalls and the in-place ones, which arguments are paths (bit
 * i) or descriptors (bit 8 + i), and which of their calls are counted (seccomp-kill.c's
 * kinds: 0 every call; 1 an open that may write a file already there; 10 + i the calls whose
 * descriptor argument i is open on a file).
 */
const SECCOMP_CALLS: Record<string, [number, number, number?]> = {
  rename: [82, 0b11],
  mkdir: [83, 0b1],
  rmdir: [84, 0b1],
  unlink: [87, 0b1],
  symlink: [88, 0b11],
  fsync: [74, 0x100],
  fdatasync: [75, 0x100],
  mkdirat: [258, 0b10],
  unlinkat: [263, 0b10],
  renameat: [264, 0b1010],
  symlinkat: [266, 0b101],
  renameat2: [316, 0b1010],
  open: [2, 0b1, 1],
  openat: [257, 0b10, 1],
  creat: [85, 0b1],
  truncate: [76, 0b1],
  ftruncate: [77, 0x100],
  fallocate: [285, 0x100],
  write: [1, 0x100, 10],
  pwrite64: [18, 0x100, 10],
  writev: [20, 0x100, 10],
  pwritev: [296, 0x100, 10],
  pwritev2: [328, 0x100, 10],
  sendfile: [40, 0x100, 10],
  copy_file_range: [326, 0x400, 12],
};
/** How seccomp-kill names a call to count: its number, with its kind when not every call counts. */
function callId(syscall: string): string {
  const [nr, , kind] = SECCOMP_CALLS[syscall] ?? [];
  if (nr === undefined) throw new Error(`no seccomp number for ${syscall}`);
  return kind ? `${nr}/${kind}` : String(nr);
}

/**
 * The top-level arguments of a call as strace writes it (`name(a, "b, c", [d, e]) = 3`):
 * quoted strings, brackets and strace's `<...>` decodes kept whole.
 */
export function callArgs(line: string): string[] {
  const start = line.indexOf('(');
  const args: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = start + 1; i < line.length; i++) {
    const c = line[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      cur += line.slice(i, j + 1);
      i = j;
    } else if (c === '<') {
      const j = line.indexOf('>', i);
      cur += line.slice(i, j + 1);
      i = j < 0 ? line.length : j;
    } else if (c === '(' || c === '[' || c === '{') {
      depth++;
      cur += c;
    } else if (c === ')' && depth === 0) {
      break;
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
      cur += c;
    } else if (c === ',' && depth === 0) {
      args.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim() !== '') args.push(cur.trim());
  return args;
}

/** A descriptor argument as `strace -y` decodes it (`3</a/file>`): the path, or null. */
const fdPath = (arg: string | undefined): string | null => /^\d+<([^>]*)>$/.exec(arg ?? '')?.[1] ?? null;

/**
 * Whether seccomp-kill counts this call of an in-place syscall (its kind, as `strace -y`
 * shows the call): the same calls in the same order per thread, so the Nth is the same call.
 */
function inPlaceKind(syscall: string, line: string): boolean {
  const [, , kind] = SECCOMP_CALLS[syscall] ?? [];
  if (!kind) return true;
  const args = callArgs(line);
  if (kind === 1) {
    const flags = args[syscall === 'open' ? 1 : 2] ?? '';
    return /\bO_TRUNC\b/.test(flags) || (/\bO_CREAT\b/.test(flags) && !/\bO_EXCL\b/.test(flags));
  }
  const path = fdPath(args[kind - 10]);
  return path?.startsWith('/') === true && !path.startsWith('/dev/');
}

/** The paths a call names, as seccomp-kill logs them for its mask (paths as quoted, descriptors as decoded). */
function targetsOf(syscall: string, line: string): string[] {
  const [, mask = 0] = SECCOMP_CALLS[syscall] ?? [];
  const args = callArgs(line);
  const out: string[] = [];
  for (let i = 0; i < 6; i++) {
    if (mask & (1 << i)) out.push(...quoted(args[i] ?? ''));
    if (mask & (1 << (8 + i))) out.push(fdPath(args[i]) ?? '?');
  }
  return out;
}
let seccompKill: string | null | undefined;
/**
 * The seccomp-kill binary (built with cc once per source, kept in the suite's cache: test-cache.ts),
 * or null when it cannot be built or this kernel or arch cannot run it: kill runs then use strace.
 */
function seccompKillBin(): string | null {
  if (seccompKill !== undefined) return seccompKill;
  seccompKill = null;
  if (process.env.YEP_EXT_KILL_WITH === 'strace' || process.arch !== 'x64' || process.platform !== 'linux') return null;
  const src = readFileSync(SECCOMP_KILL_SRC);
  const bin = testCacheDir(`seccomp-kill-${process.arch}-${createHash('sha256').update(src).digest('hex').slice(0, 12)}`);
  if (!existsSync(bin)) {
    mkdirSync(dirname(bin), { recursive: true });
    const tmp = `${bin}.${process.pid}.tmp`;
    if (spawnSync('cc', ['-O2', '-o', tmp, SECCOMP_KILL_SRC], { stdio: 'ignore' }).status !== 0) return null;
    renameSync(tmp, bin);
  }
  if (spawnSync(bin, ['--probe'], { stdio: 'ignore' }).status === 0) seccompKill = bin;
  return seccompKill;
}
/** What kills the kill runs here: seccomp-kill (test/helpers/seccomp-kill.c), or strace where it cannot. */
function killer(): 'seccomp' | 'strace' {
  return seccompKillBin() === null ? 'strace' : 'seccomp';
}

/** Whether `snapshotRun` works here (seccomp-kill runs on this kernel and arch). */
export function canSnapshot(): boolean {
  return killer() === 'seccomp';
}

export interface SnapshotRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** Per point (by index): the paths of the call it was taken at, or undefined when no call reached it or the copy failed. */
  taken: Array<string[] | undefined>;
  /** Per point: why its copy failed (`<errno name> <path>`, seccomp-kill's first failure), when it did. */
  failed: Array<string | undefined>;
}

/**
 * Run `yep-ext args` to completion under seccomp-kill's --snapshot mode: at each point's
 * call (the same call a kill run at it dies at: the Nth of its thread) the caller is held
 * while `dir` is copied to the point's `copy`, with every call of the command that can
 * change a file held meanwhile: each copy is the disk a kill at that point leaves
 * (test/helpers/seccomp-kill.c). One start of the CLI for every point. Only where `canSnapshot()`.
 */
export async function snapshotRun(
  args: string[],
  options: {
    env: Record<string, string>;
    dir: string;
    points: Array<{ point: Pick<KillPoint, 'syscall' | 'n'>; copy: string }>;
    log: string;
    input?: string;
    timeoutMs?: number;
  },
): Promise<SnapshotRun> {
  const bin = seccompKillBin();
  if (bin === null) throw new Error('snapshotRun needs seccomp-kill (canSnapshot())');
  const specs = options.points.map(({ point, copy }) => `${callId(point.syscall)}:${point.n}:${SECCOMP_CALLS[point.syscall]?.[1]}:${copy}`);
  rmSync(options.log, { force: true });
  const run = await runSupervised(bin, ['--snapshot', options.dir, options.log, ...specs, '--', process.execPath, BIN, ...args], {
    cwd: REPO_ROOT,
    env: withSeams({ ...options.env, ...HELD_ENV }),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const log = existsSync(options.log) ? readFileSync(options.log, 'utf8').split('\n') : [];
  // `<tid> <call> #<k> "<path>"... SNAPSHOT` (or `SNAPSHOT FAILED <errno> <path>`): the call numbered k.
  const at = (point: Pick<KillPoint, 'syscall' | 'n'>, how: RegExp) =>
    log.find((l) => how.test(l) && l.split(' ')[1] === callId(point.syscall) && l.split(' ')[2] === `#${point.n}`);
  const taken = options.points.map(({ point }) => {
    const line = at(point, / SNAPSHOT$/);
    return line === undefined ? undefined : quoted(line);
  });
  const failed = options.points.map(({ point }) => at(point, / SNAPSHOT FAILED /)?.replace(/^.* SNAPSHOT FAILED /, ''));
  return { status: run.code, signal: run.signal, stderr: run.stderr, taken, failed };
}

/**
 * Run a supervisor (seccomp-kill, strace) over the CLI: stdin given then closed, stdout
 * dropped, stderr kept; killed after `timeoutMs` (a hang's limit). A killed CLI closes its
 * pipe, so EPIPE on stdin is expected.
 */
function runSupervised(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/** The quoted strings of a call's text (strace's escapes left as they are). */
const quoted = (text: string): string[] => [...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] as string);

/** The call a kill run died at, from its log (seccomp-kill's `KILLED` line, or strace's last call of the syscall). */
function killedCall(trace: string, kill: { syscall: string; n: number }, how: 'seccomp' | 'strace'): TracedRun['killed'] {
  if (!/\+\+\+ killed by SIGKILL/.test(trace)) return undefined;
  if (how === 'seccomp') {
    const line = trace.split('\n').find((l) => l.endsWith(' KILLED'));
    return line === undefined ? undefined : { ...kill, paths: quoted(line) };
  }
  const calls = trace.split('\n').filter((l) => ENTRY.exec(l)?.[2] === kill.syscall);
  const last = calls[calls.length - 1];
  if (last === undefined) return undefined;
  // fsync(3</a/file>): strace -y decodes the descriptor.
  const fds = [...last.matchAll(/\(\d+<([^>]*)>/g)].map((m) => m[1] as string);
  return { ...kill, paths: [...quoted(last), ...fds] };
}

export interface TraceOptions {
  env: Record<string, string>;
  /** Where strace writes its log (overwritten). */
  traceFile: string;
  syscalls?: string[];
  /**
   * Trace every system call, with file descriptors decoded to their paths (`-y`): the
   * record `equivalentPoints` needs to tell which kill points leave the same disk.
   */
  everything?: boolean;
  /**
   * With `everything`: calls left out of the record, which no kill point is and which can
   * change no file (kill-equivalence.ts's INERT_SYSCALLS). The tracee is not stopped at them
   * at all, where every other call of a traced run costs it a stop.
   */
  omit?: readonly string[];
  /** Kill at the `n`th call of `syscall` (1-based). */
  kill?: { syscall: string; n: number };
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

/**
 * The environment of every traced, killed or held run. UV_THREADPOOL_SIZE=1: one pool thread
 * (see the header). NODE_DISABLE_COMPILE_CACHE: on Node 22.1+ bin/run.js turns V8's compile
 * cache on, whose directory is made by a mkdir on the main thread; strace counts calls per
 * thread, so that one would make the installer lock's mkdir (in the pool) unreachable by
 * when=N. The cache is not state; the kill points are the same with it off.
 * UV_USE_IO_URING=0: a libuv that submits file operations through io_uring makes no system
 * call per operation, and neither strace nor the seccomp filter would see them.
 */
const HELD_ENV = { UV_THREADPOOL_SIZE: '1', NODE_DISABLE_COMPILE_CACHE: '1', UV_USE_IO_URING: '0' };

/** Run `yep-ext args` under strace (asynchronously: a test's own servers keep answering). */
export async function tracedRun(args: string[], options: TraceOptions): Promise<TracedRun> {
  // A killed run needs to stop only at the call it kills at (strace decodes and logs less).
  const syscalls = options.syscalls ?? (options.kill ? [options.kill.syscall] : STATE_SYSCALLS);
  // `?`: a name this strace or arch does not know is no error (it is not called then either).
  const filter = options.everything
    ? ['-y', ...(options.omit?.length ? ['-e', `trace=!${options.omit.map((c) => `?${c}`).join(',')}`] : [])]
    : ['-e', `trace=${syscalls.join(',')}`];
  const inject = options.kill ? ['-e', `inject=${options.kill.syscall}:signal=KILL:when=${options.kill.n}`] : [];
  rmSync(options.traceFile, { force: true });
  const how = options.kill && SECCOMP_CALLS[options.kill.syscall] !== undefined ? killer() : 'strace';
  if (options.kill && how === 'strace' && IN_PLACE_SYSCALLS.includes(options.kill.syscall))
    throw new Error(`a kill at ${options.kill.syscall} needs seccomp-kill (canSnapshot()): strace's when=N counts every call of it`);
  const command =
    options.kill && how === 'seccomp'
      ? [seccompKillBin(), [callId(options.kill.syscall), String(options.kill.n), options.traceFile, '--', process.execPath, BIN, ...args]]
      : // --seccomp-bpf: the tracee stops only at the calls traced (a seccomp filter hands the kernel's
        // decision to strace for those alone), not at every call of every thread. Not for a kill: with it
        // strace 6.1 never delivers signal=KILL (see the header). -y: the killed fsync's file.
        [
          'strace',
          ['-f', '-qq', ...(options.kill ? ['-y'] : ['--seccomp-bpf']), '-o', options.traceFile, ...filter, ...inject, process.execPath, BIN, ...args],
        ];
  const run = await runSupervised(command[0] as string, command[1] as string[], {
    cwd: options.cwd ?? REPO_ROOT,
    env: withSeams({
      ...options.env,
      ...HELD_ENV,
      ...(how === 'seccomp' && options.kill ? { SECCOMP_KILL_ARGS: String(SECCOMP_CALLS[options.kill.syscall]?.[1]) } : {}),
    }),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const trace = existsSync(options.traceFile) ? readFileSync(options.traceFile, 'utf8') : '';
  // strace exits with the tracee's status; a tracee killed by a signal is reported as 128+n by strace itself.
  const killed = /\+\+\+ killed by (SIG\w+)/.exec(trace)?.[1] as NodeJS.Signals | undefined;
  const at = options.kill ? killedCall(trace, options.kill, how) : undefined;
  return { status: killed ? null : run.code, signal: killed ?? run.signal, stderr: run.stderr, trace, ...(at ? { killed: at } : {}) };
}

export interface Call {
  tid: string;
  syscall: string;
  line: string;
  /** Its place among every call the trace records (entry order, all threads and processes). */
  seq: number;
}

/** A call's entry line: `<tid> <syscall>(`. Resumed halves (`<tid> <... x resumed>`), signals and exits do not match. */
export const ENTRY = /^(\d+)\s+(\w+)\(/;

/**
 * The traced calls of `syscalls` in a trace, in order; of an in-place syscall, only the calls
 * seccomp-kill counts (`inPlaceKind`).
 */
export function parseCalls(trace: string, syscalls: string[] = STATE_SYSCALLS): Call[] {
  const calls: Call[] = [];
  let seq = 0;
  for (const l of trace.split('\n')) {
    const m = ENTRY.exec(l);
    if (m === null) continue;
    if (syscalls.includes(m[2] as string) && inPlaceKind(m[2] as string, l)) calls.push({ tid: m[1] as string, syscall: m[2] as string, line: l, seq });
    seq++;
  }
  return calls;
}

/**
 * Whether a kill at `call` (an in-place syscall's) can find a file in the middle of a change
 * in place, in `dir`: an open that may truncate or write a file there, a truncation of one,
 * or a write to one that this run did not create for itself (O_CREAT|O_EXCL: a temp file,
 * nothing reads it until it is renamed into place). A write through a temp's descriptor
 * after the rename is in place: the rename ends the temp's freshness. `fresh`: the paths
 * opened O_EXCL before the call (kill-equivalence.ts's `freshFiles`).
 */
export function inPlaceCall(call: Call, dir: string, fresh: (seq: number) => Set<string>): boolean {
  const [target] = targetsOf(call.syscall, call.line);
  if (target === undefined || !(target === dir || target.startsWith(`${dir}/`))) return false;
  if (call.syscall === 'open' || call.syscall === 'openat' || call.syscall === 'creat' || call.syscall === 'truncate') return true;
  return !fresh(call.seq).has(target);
}

export interface KillPoint {
  syscall: string;
  /** strace's when=N. */
  n: number;
  /** The call it kills at (from the completed run's trace). */
  call: Call;
}

/**
 * The kill points of a completed run's calls. strace counts each syscall per
 * thread, so when=N kills at the first call (in time) that is the Nth of its
 * thread: for a syscall made from one thread that is every call, in turn; for one
 * made from two (the unpacker's synchronous mkdirs on the main thread beside the
 * fs/promises calls on libuv's one worker thread), the calls no N reaches are
 * returned as `unreachable` for the caller to judge.
 */
export function killPlan(calls: Call[]): { points: KillPoint[]; unreachable: Call[] } {
  const points: KillPoint[] = [];
  const unreachable: Call[] = [];
  for (const syscall of [...new Set(calls.map((c) => c.syscall))]) {
    const mine = calls.filter((c) => c.syscall === syscall);
    const perThread = new Map<string, number>();
    const index = mine.map((c) => {
      const i = (perThread.get(c.tid) ?? 0) + 1;
      perThread.set(c.tid, i);
      return i;
    });
    const max = Math.max(...perThread.values());
    const hit = new Set<number>();
    for (let n = 1; n <= max; n++) {
      const at = index.indexOf(n);
      hit.add(at);
      points.push({ syscall, n, call: mine[at] as Call });
    }
    mine.forEach((c, i) => {
      if (!hit.has(i)) unreachable.push(c);
    });
  }
  return { points, unreachable };
}

/** A tiny semaphore: at most `limit` tasks at once across every caller (the machine has 2 cores). */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await task();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

/**
 * A path (or one component of it) with what differs between two runs of the same command masked:
 * pids, clocks and counters (tokens with a digit). A staging directory's name
 * (`<pid>-<ms in base 36>-<n>-<label>`, staging.ts) is masked by its shape first: its clock token
 * has no digit in about a quarter of the milliseconds of some hours (`mxacynqo`), and two runs'
 * names then differed there.
 */
export function maskVolatile(s: string): string {
  return s.replace(/(^|\/)\d+-[0-9a-z]+-\d+-/gi, '$1#-#-#-').replace(/[0-9a-z]*\d[0-9a-z]*/gi, '#');
}

/** One path component of two runs: equal once `maskVolatile` and mkdtemp's six letters are masked. */
function sameComponent(a: string, b: string): boolean {
  if (a === b || maskVolatile(a) === maskVolatile(b)) return true;
  const temp = /^(.*[-.])[A-Za-z0-9]{6}$/;
  const ta = temp.exec(a);
  const tb = temp.exec(b);
  return ta !== null && tb !== null && ta[1] === tb[1];
}

/**
 * Why a kill run did not die at `point`'s call of the completed run (null when it did):
 * the same syscall and per-thread number, and the same paths, component by component
 * (the two runs live in different temp homes and name their temp files by pid).
 */
export function killedElsewhere(point: KillPoint, killed: TracedRun['killed']): string | null {
  if (killed === undefined) return 'no call was killed';
  if (killed.syscall !== point.syscall || killed.n !== point.n) return `killed at ${killed.syscall} #${killed.n}`;
  const planned = IN_PLACE_SYSCALLS.includes(point.syscall)
    ? targetsOf(point.syscall, point.call.line)
    : [...quoted(point.call.line), ...[...point.call.line.matchAll(/\(\d+<([^>]*)>/g)].map((m) => m[1] as string)];
  const same = (a: string, b: string) => {
    const x = a.split('/');
    const y = b.split('/');
    return x.length === y.length && x.every((c, i) => sameComponent(c, y[i] as string));
  };
  if (planned.length !== killed.paths.length || !planned.every((p, i) => same(p, killed.paths[i] as string)))
    return `killed at ${killed.syscall} #${killed.n} on ${JSON.stringify(killed.paths)}, planned on ${JSON.stringify(planned)}`;
  return null;
}
