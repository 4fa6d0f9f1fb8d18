/**
 * Crash points enumerated, not sampled: run the CLI under strace and SIGKILL it
 * at the Nth call of one state-changing system call (`-e inject=<call>:signal=KILL:when=N`).
 * A completed traced run says how many calls of each there are; killing at each
 * of them in turn visits every point where the disk can change.
 *
 * strace counts calls per thread, so a syscall made from two threads could not be
 * enumerated this way: libuv's pool is held to one thread (UV_THREADPOOL_SIZE=1;
 * yep-ext's state writes all go through fs/promises, i.e. that thread), and
 * `countCalls` fails when a syscall comes from more than one thread.
 *
 * Needs strace (ptrace): suites declare it with `straceNeed()` and `describeNeeding`
 * (skipped with the reason shown, or failing when YEP_EXT_REQUIRE_ALL=1, as in CI).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { BIN, REPO_ROOT } from './home.js';
import { withSeams } from './seams.mjs';
import { need, type Need } from './needs.js';

/** Every system call by which a command changes what is on disk. */
export const STATE_SYSCALLS = ['rename', 'renameat', 'renameat2', 'unlink', 'unlinkat', 'rmdir', 'symlink', 'symlinkat', 'fsync', 'fdatasync', 'mkdir', 'mkdirat'];

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
  /** strace's output: one line per traced call, `<tid> <syscall>(...) = ...`. */
  trace: string;
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
  /** Kill at the `n`th call of `syscall` (1-based). */
  kill?: { syscall: string; n: number };
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

/** Run `yep-ext args` under strace (asynchronously: a test's own servers keep answering). */
export function tracedRun(args: string[], options: TraceOptions): Promise<TracedRun> {
  // A killed run needs to stop only at the call it kills at (strace decodes and logs less).
  const syscalls = options.syscalls ?? (options.kill ? [options.kill.syscall] : STATE_SYSCALLS);
  const filter = options.everything ? ['-y'] : ['-e', `trace=${syscalls.join(',')}`];
  const inject = options.kill ? ['-e', `inject=${options.kill.syscall}:signal=KILL:when=${options.kill.n}`] : [];
  rmSync(options.traceFile, { force: true });
  return new Promise((resolve, reject) => {
    // (No --seccomp-bpf: with it strace 6.1 stops counting for when=N after the first call.)
    const child = spawn('strace', ['-f', '-qq', '-o', options.traceFile, ...filter, ...inject, process.execPath, BIN, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      // NODE_DISABLE_COMPILE_CACHE: on Node 22.1+ bin/run.js turns V8's compile cache on, whose
      // directory is made by a mkdir on the main thread; strace counts calls per thread, so that
      // one would make the installer lock's mkdir (in the pool) unreachable by when=N. The cache
      // is not state; the kill points are the same with it off.
      env: withSeams({ ...options.env, UV_THREADPOOL_SIZE: '1', NODE_DISABLE_COMPILE_CACHE: '1' }),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const trace = existsSync(options.traceFile) ? readFileSync(options.traceFile, 'utf8') : '';
      // strace exits with the tracee's status; a tracee killed by a signal is reported as 128+n by strace itself.
      const killed = /\+\+\+ killed by (SIG\w+)/.exec(trace)?.[1] as NodeJS.Signals | undefined;
      resolve({ status: killed ? null : code, signal: killed ?? signal, stderr, trace });
    });
    child.stdin.end(options.input ?? '');
  });
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

/** The traced calls of `syscalls` in a trace, in order. */
export function parseCalls(trace: string, syscalls: string[] = STATE_SYSCALLS): Call[] {
  const calls: Call[] = [];
  let seq = 0;
  for (const l of trace.split('\n')) {
    const m = ENTRY.exec(l);
    if (m === null) continue;
    if (syscalls.includes(m[2] as string)) calls.push({ tid: m[1] as string, syscall: m[2] as string, line: l, seq });
    seq++;
  }
  return calls;
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
