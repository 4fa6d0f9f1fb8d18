/**
 * The process half of a YEP client: spawns a capability server the way the
 * host does (server-launch.ts), owns its pipes and its stderr tail, and ends
 * it, with everything it started. The protocol half is rpc-session.ts;
 * client.ts joins the two.
 *
 * What it guarantees, whatever the server does (hardening F39-F46):
 * - no unhandled 'error' event (spawn failures, EPIPE on stdin);
 * - bounded memory (a byte tail of stderr; stdout goes to the caller as it comes);
 * - the stop sequence (shutdown -> EOF -> SIGTERM -> SIGKILL) acts on the whole
 *   process group, each step bounded;
 * - after stop(), kill(), an abort, or this process exiting, nothing the server
 *   started is left: its process group, and on Linux every descendant found
 *   through /proc (process-tree.ts), other sessions and groups included.
 */
import { ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import type { Spawn } from '../context.js';
import { systemClock, type Clock } from '../clock.js';
import { systemSpawn } from '../spawn.js';
import { serverSpawnArgs, spawnServer, type ServerLaunch } from './server-launch.js';
import { ByteTail } from './stderr-tail.js';
import { listGroup, signalGroup, waitGroupGone } from './process-group.js';
import { listPids, PROC_TRACKING, ProcessTracker, serverRunTag, type LiveDescendant } from './process-tree.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (ENOENT, EACCES, ENOEXEC…). */
  spawnError?: { code?: string; message: string };
  /** Milliseconds since start. */
  at: number;
}

/** A process the server started that was still alive after the server itself was gone. */
export interface LeftoverProcess {
  pid: number;
  /** Its command line (as /proc showed it; `[comm]` when it has none). */
  command: string;
  /** True when it had stayed in the server's process group; false when it left it (setsid, setpgid). */
  inGroup: boolean;
}

export interface StopReport {
  /** What ended the process: it had already exited, the shutdown request, EOF on stdin, SIGTERM or SIGKILL. */
  endedBy: 'already' | 'shutdown' | 'eof' | 'sigterm' | 'sigkill' | 'never-started';
  /** How the shutdown request went (when sent). */
  shutdown: 'answered' | 'error' | 'no-answer' | 'not-sent';
  exit?: ExitInfo;
  /** Pids of group members still alive after the server exited (then killed). */
  leftovers: number[];
  /** Every descendant still alive after the server exited, in its group or not (then killed). Linux only; elsewhere the group members. */
  descendants: LeftoverProcess[];
  /** Descendants still alive after SIGKILL (not ours to kill, or stuck). */
  survivors: LeftoverProcess[];
  /** True when the process group is empty at the end. */
  groupGone: boolean;
  durationMs: number;
}

export interface ServerProcessOptions {
  /** Bytes of stderr kept (default 16 KiB). */
  stderrTailBytes?: number;
  /** Values never shown: redacted from the stderr tail, including what a cut leaves of them. */
  secrets?: readonly string[];
  /** How often /proc is read for descendants while the server runs (default 200 ms). */
  trackIntervalMs?: number;
  /** Starts the process (ctx.spawn; default node's child_process.spawn). */
  spawn?: Spawn;
  /**
   * The stop escalation's waits (shutdown answer, EOF, SIGTERM, SIGKILL), the stdout
   * drain bound and the uptime run on it (ctx.clock; default the system clock).
   * The /proc sampling interval stays on real time: it paces reads of the kernel's
   * state, which no fake clock can advance.
   */
  clock?: Clock;
  /**
   * A server already started for this same launch (early-server.ts: doctor starts
   * it before loading its own code). Taken only when the spawn this would make is
   * exactly the one that started it (command, argv, cwd, env, options, spawner);
   * otherwise this spawns as usual and the early one is discarded.
   */
  adopt?: AdoptableServer;
}

/** What an adopted server had already done before it was adopted. */
export interface AdoptedChild {
  child: ChildProcess;
  tag: { name: string; value: string } | undefined;
  /** Date.now() at its spawn. */
  startedAt: number;
  spawned: boolean;
  /** Its descendants, tracked from its spawn (process-tree.ts); the adopter keeps it. */
  tracker?: ProcessTracker;
  error?: NodeJS.ErrnoException;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  /**
   * Stops keeping its output and hands over what it wrote so far. (It must be read
   * from the start: at its exit Node resumes any pipe nobody reads, and what was in
   * it would be lost.)
   */
  release(): EarlyOutput;
}

/** What an early server wrote before it was adopted. */
export interface EarlyOutput {
  stdout: Buffer[];
  stderr: Buffer[];
  stdoutEnded: boolean;
  stderrEnded: boolean;
}

export interface AdoptableServer {
  /** The child, when `launch` (with its run tag) spawns exactly what it spawned; at most once. */
  claim(launch: ServerLaunch): AdoptedChild | undefined;
}

export interface ServerProcessEvents {
  stdout(chunk: Buffer): void;
  /** stdout reached EOF (not called when it is cut off at exit). */
  stdoutEnd(): void;
  /** Writing to stdin failed: the server closed it. */
  stdinError(reason: string): void;
  /** The server is gone (after stdout drained, or a bounded wait for it); before `exited` resolves. */
  exit(info: ExitInfo): void;
}

/** The outcome of asking the server to exit (the `shutdown` request), from the session. */
export type ShutdownOutcome = 'answered' | 'error' | 'no-answer';

const live = new Set<ServerProcess>();
/** How long the look at exit that found nothing stands in for reap()'s own (they are microtasks apart). */
const CLEAR_FRESH_MS = 50;
let exitHookInstalled = false;

/** How long a server that answered shutdown gets to exit by itself (see doStop). */
export function shutdownCreditMs(graceMs: number, load = loadavg()[0] ?? 0, cores = availableParallelism()): number {
  return Math.round(Math.min(graceMs, 1000, Math.max(100, 100 * (load / Math.max(1, cores)))));
}

/** Kill every live server (group and descendants) if this process exits with servers still running. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.kill();
  });
}

export class ServerProcess {
  /** Resolves when the server is running, false when it could not start. Never rejects. */
  readonly spawned: Promise<boolean>;
  /** Resolves once the process has exited or failed to start. Never rejects. */
  readonly exited: Promise<ExitInfo>;

  private readonly child: ChildProcess;
  private readonly clock: Clock;
  private readonly started: number;
  private readonly stderr: ByteTail;
  private readonly secrets: readonly string[];
  private readonly tracker?: ProcessTracker;
  /** Date.now() at the spawn of an adopted (early-started) server; undefined for its own spawn. */
  readonly earlyStartedAt: number | undefined;
  private trackTimer?: NodeJS.Timeout;
  private exitInfo?: ExitInfo;
  private stdinIsOpen = true;
  private stdoutEnded = false;
  private stderrEnded = false;
  /** An adopted child's stdout until it is replayed (see the constructor). */
  private stdoutHeld?: (Buffer | 'end')[];
  private drainWaiter?: () => void;
  /** Bytes read from the server's stdout and stderr so far: whether a turn of the loop brought more. */
  private pipeBytes = 0;
  /** performance.now() of a look after the exit that found nothing of the server's alive (onExit): monotonic, as a clock stepped back must not make it fresh. */
  private clearAt?: number;
  private stopping?: Promise<StopReport>;
  private resolveExited!: (info: ExitInfo) => void;

  constructor(
    launch: ServerLaunch,
    options: ServerProcessOptions,
    private readonly events: ServerProcessEvents,
  ) {
    this.clock = options.clock ?? systemClock;
    // Only for the production spawner: a test's spawn seam must see every spawn.
    const adopted = !options.spawn || options.spawn === systemSpawn ? options.adopt?.claim(launch) : undefined;
    this.started = adopted ? this.clock.now() - (Date.now() - adopted.startedAt) : this.clock.now();
    this.stderr = new ByteTail(options.stderrTailBytes ?? 16 * 1024);
    this.secrets = options.secrets ?? [];
    this.exited = new Promise((r) => (this.resolveExited = r));
    installExitHook();
    const tag = adopted ? adopted.tag : PROC_TRACKING ? serverRunTag() : undefined;
    let syncError: NodeJS.ErrnoException | undefined;
    // The pids alive before the spawn are older than the server: its tracker's first look need
    // not read their stat files (TrackerOptions.olderPids, as an early server's does).
    let olderPids: number[] | undefined;
    if (adopted) this.child = adopted.child;
    else {
      if (tag) olderPids = listPids();
      try {
        this.child = spawnServer(options.spawn ?? systemSpawn, serverSpawnArgs(launch, tag));
      } catch (e) {
        // Invalid argv/env (a NUL byte from a manifest or a config value) throws synchronously:
        // report it like any other failure to start.
        syncError = e as NodeJS.ErrnoException;
        this.child = new ChildProcess();
      }
    }
    if (adopted?.tracker) this.tracker = adopted.tracker;
    else if (this.child.pid !== undefined && tag)
      this.tracker = new ProcessTracker(this.child.pid, { tag: `${tag.name}=${tag.value}`, ...(olderPids ? { olderPids } : {}) });
    this.earlyStartedAt = adopted?.startedAt;
    live.add(this);
    this.spawned = new Promise((resolve) => {
      if (syncError) {
        resolve(false);
        queueMicrotask(() => this.onExit(null, null, { ...(syncError.code ? { code: syncError.code } : {}), message: syncError.message }));
        return;
      }
      const failed = (e: NodeJS.ErrnoException): void => {
        // With a pid, the process did start (this is a failed kill): the exit path still runs.
        if (this.child.pid !== undefined) return;
        resolve(false);
        this.onExit(null, null, { ...(e.code ? { code: e.code } : {}), message: e.message });
      };
      // An adopted child's 'spawn' or 'error' may have fired already.
      if (adopted?.spawned) {
        this.startTracking(options.trackIntervalMs ?? 200);
        resolve(true);
      } else if (adopted?.error) {
        const e = adopted.error;
        queueMicrotask(() => failed(e));
      } else {
        this.child.once('spawn', () => {
          this.startTracking(options.trackIntervalMs ?? 200);
          resolve(true);
        });
      }
      // `on`, not `once`: a second 'error' with no listener would crash us.
      this.child.on('error', failed);
    });
    this.wireStreams();
    if (adopted) {
      const pre = adopted.release();
      for (const chunk of pre.stderr) this.stderr.push(chunk);
      if (pre.stderrEnded) this.stderrEnded = true;
      // Its listeners are on now; a stream paused to bound what was kept flows again.
      this.child.stdout?.resume();
      this.child.stderr?.resume();
      // Its stdout is replayed (with what comes meanwhile, held back in order) on the next
      // turn of the event loop: after the caller's first request, written in the
      // microtasks after this constructor, as a server spawned now could not have
      // answered before it. So the message records come in the order they would have.
      this.stdoutHeld = [...pre.stdout];
      if (pre.stdoutEnded) this.stdoutHeld.push('end');
      const early = adopted.exit;
      setImmediate(() => {
        const held = this.stdoutHeld ?? [];
        this.stdoutHeld = undefined;
        for (const item of held) {
          if (item === 'end') this.onStdoutEnd();
          else this.events.stdout(item);
        }
        // It exited before it was adopted: its 'exit' has fired already.
        if (early) this.onExit(early.code, early.signal);
      });
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The server's process group id (its pid: it is spawned as a group leader). */
  get pgid(): number | undefined {
    return this.child.pid;
  }

  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  get running(): boolean {
    return this.child.pid !== undefined && this.exitInfo === undefined;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  get stdinOpen(): boolean {
    return this.stdinIsOpen && !!this.child.stdin && !this.child.stdin.destroyed;
  }

  /** The last bytes the server wrote to stderr, secrets redacted (also what a cut left of one). */
  stderrTail(): string {
    return this.stderr.text(this.secrets);
  }

  get stderrBytes(): number {
    return this.stderr.total;
  }

  /** Milliseconds since start. */
  elapsed(): number {
    return this.clock.now() - this.started;
  }

  /** How the process is doing, as a phrase after "the server". */
  describeExit(): string {
    const x = this.exitInfo;
    if (!x) return this.child.pid === undefined ? 'is not running' : 'is running';
    if (x.spawnError) return `could not be started (${x.spawnError.code ?? x.spawnError.message})`;
    return x.signal ? `was killed by ${x.signal}` : `exited with code ${x.code}`;
  }

  /** Write to stdin; false when it is closed (nothing written). */
  write(data: string): boolean {
    if (!this.stdinOpen) return false;
    this.child.stdin!.write(data);
    return true;
  }

  closeStdin(): void {
    if (!this.stdinIsOpen) return;
    this.stdinIsOpen = false;
    this.child.stdin?.end();
  }

  /**
   * The live members of group `pgid` and the live descendants (Linux), from one full
   * read of /proc (the tracker's look); off Linux, the group as listGroup sees it.
   */
  private look(pgid: number): { group: number[]; alive: LiveDescendant[]; decided: boolean } {
    if (!this.tracker || !PROC_TRACKING) return { group: listGroup(pgid), alive: [], decided: false };
    return this.tracker.look(pgid);
  }

  /** Descendants alive now (Linux), after a look at /proc (`full`: every process re-read). */
  descendants(look: { maxAgeMs?: number; full?: boolean } = {}): LiveDescendant[] {
    if (!this.tracker) return [];
    this.tracker.snapshot(look);
    return this.tracker.alive();
  }

  /** SIGKILL the whole process group and every tracked descendant now. Synchronous: safe in an 'exit' handler. */
  kill(): void {
    const pgid = this.pgid;
    if (pgid === undefined) return;
    // Once the server has exited and everything it started is known gone, its pgid may be reused: never signal it then.
    if (this.exitInfo && !live.has(this)) return;
    signalGroup(pgid, 'SIGKILL');
    if (this.tracker) {
      this.tracker.snapshot({ full: true });
      this.tracker.killAlive();
    }
  }

  /**
   * Graceful stop: `askToExit` (the session's shutdown request) -> close stdin
   * -> SIGTERM -> SIGKILL, each step with a grace period, on the whole process
   * group; then whatever the server started and left running (its group, other
   * groups and sessions) is killed and reported.
   */
  stop(options: { graceMs?: number; askToExit?: () => Promise<ShutdownOutcome> } = {}): Promise<StopReport> {
    this.stopping ??= this.doStop(options);
    return this.stopping;
  }

  private async doStop(options: { graceMs?: number; askToExit?: () => Promise<ShutdownOutcome> }): Promise<StopReport> {
    const t0 = this.clock.now();
    const grace = options.graceMs ?? 2000;
    const pgid = this.pgid;
    if (pgid === undefined) {
      await this.exited;
      return {
        endedBy: 'never-started',
        shutdown: 'not-sent',
        ...(this.exitInfo ? { exit: this.exitInfo } : {}),
        leftovers: [],
        descendants: [],
        survivors: [],
        groupGone: true,
        durationMs: this.clock.now() - t0,
      };
    }
    const exitedWithin = async (ms: number): Promise<boolean> => {
      if (this.exitInfo) return true;
      let cancel = (): void => {};
      const timedOut = new Promise<false>((r) => (cancel = this.clock.timeout(() => r(false), ms, { unref: true })));
      try {
        if (await Promise.race([this.exited.then(() => true as const), timedOut])) return true;
      } finally {
        cancel();
      }
      // It exited within the bound, and only its pipes are still being drained (a process it
      // started holds them; afterDrainBound reads on up to 2 s): it did exit, so it is graded
      // by what made it exit, not sent a signal; the drain ends before the stop goes on.
      if (!this.exitInfo) return false;
      await this.exited;
      return true;
    };
    this.tracker?.snapshot();
    let endedBy: StopReport['endedBy'] = 'already';
    let shutdown: StopReport['shutdown'] = 'not-sent';
    if (this.running) {
      if (options.askToExit && this.stdinOpen) {
        shutdown = await options.askToExit();
        endedBy = 'shutdown';
        // A server that answers and then exits by itself should get the credit for it. 100 ms
        // covers an interpreter's teardown on a quiet machine; on a loaded one the teardown
        // waits for a CPU in proportion to the run queue (a Python scaffold at a load average of
        // 24 on 2 cores took longer, and was graded "exited once stdin closed"), so the window
        // grows with the load per core, up to 1 s and never past the grace.
        if (shutdown === 'answered') await exitedWithin(shutdownCreditMs(grace));
      }
      if (!this.exitInfo) {
        endedBy = 'eof';
        this.tracker?.snapshot({ maxAgeMs: 50 });
        this.closeStdin();
        if (!(await exitedWithin(grace))) {
          endedBy = 'sigterm';
          this.tracker?.snapshot();
          signalGroup(pgid, 'SIGTERM');
          if (!(await exitedWithin(grace))) {
            endedBy = 'sigkill';
            signalGroup(pgid, 'SIGKILL');
            await exitedWithin(5000);
          }
        }
      }
    }
    return { endedBy, shutdown, ...(this.exitInfo ? { exit: this.exitInfo } : {}), ...(await this.reap(pgid)), durationMs: this.clock.now() - t0 };
  }

  /** After the server exited: find, kill and report what it left running. */
  private async reap(pgid: number): Promise<Pick<StopReport, 'leftovers' | 'descendants' | 'survivors' | 'groupGone'>> {
    // The look the exit already took, when it found nothing and is fresh (see onExit), else one now.
    const look = this.clearAt !== undefined && performance.now() - this.clearAt <= CLEAR_FRESH_MS ? { group: [], alive: [], decided: true } : this.look(pgid);
    const leftovers = look.group;
    const descendants: LeftoverProcess[] = look.alive.map((p) => ({ pid: p.pid, command: p.command, inGroup: p.pgrp === pgid }));
    // Off Linux (no tracker) the group is all we know of.
    for (const pid of leftovers) if (!descendants.some((d) => d.pid === pid)) descendants.push({ pid, command: '?', inGroup: true });
    if (leftovers.length > 0) signalGroup(pgid, 'SIGKILL');
    // A full look found nothing alive: the group is empty, and an empty group stays empty (a
    // process joins a group only from inside its session, and every live process of the
    // server's session is claimed); no descendant is alive to start another. So nothing is
    // left to kill or to wait for, and /proc is not read three more times to say so.
    const clear = this.tracker !== undefined && look.decided && leftovers.length === 0 && descendants.length === 0;
    const stuck = clear ? [] : this.tracker ? await this.tracker.killAll(2000) : [];
    const groupGone = clear ? true : await waitGroupGone(pgid, 2000);
    this.stopTracking();
    live.delete(this);
    const survivors = stuck.map((p) => ({ pid: p.pid, command: p.command, inGroup: p.pgrp === pgid }));
    return { leftovers, descendants, survivors, groupGone };
  }

  private startTracking(intervalMs: number): void {
    if (!this.tracker || intervalMs <= 0) return;
    this.tracker.snapshot();
    this.trackTimer = setInterval(() => this.tracker!.snapshot(), intervalMs);
    this.trackTimer.unref();
  }

  private stopTracking(): void {
    if (this.trackTimer) clearInterval(this.trackTimer);
    this.trackTimer = undefined;
  }

  private wireStreams(): void {
    const { stdin, stdout, stderr } = this.child;
    // EPIPE/ECONNRESET when the server is gone: never let it crash us.
    stdin?.on('error', (e: NodeJS.ErrnoException) => {
      this.stdinIsOpen = false;
      this.events.stdinError(e.code ?? e.message);
    });
    stderr?.on('data', (chunk: Buffer) => {
      this.pipeBytes += chunk.length;
      this.stderr.push(chunk);
    });
    stderr?.on('error', () => {});
    stderr?.on('end', () => {
      this.stderrEnded = true;
      this.drainWaiter?.();
    });
    stdout?.on('data', (chunk: Buffer) => {
      this.pipeBytes += chunk.length;
      if (this.stdoutHeld) this.stdoutHeld.push(chunk);
      else this.events.stdout(chunk);
    });
    stdout?.on('error', () => {});
    stdout?.on('end', () => {
      if (this.stdoutHeld) this.stdoutHeld.push('end');
      else this.onStdoutEnd();
    });
    this.child.on('exit', (code, signal) => this.onExit(code, signal));
  }

  private onStdoutEnd(): void {
    this.events.stdoutEnd();
    this.stdoutEnded = true;
    this.drainWaiter?.();
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, spawnError?: ExitInfo['spawnError']): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal, ...(spawnError ? { spawnError } : {}), at: this.elapsed() };
    this.stdinIsOpen = false;
    // The server is gone: a last look for what it left behind before the chain to it is lost.
    this.tracker?.snapshot();
    const finish = (): void => {
      this.drainWaiter = undefined;
      this.events.exit(this.exitInfo!);
      // A forked child may still hold stdout open: stop reading, the session is over.
      this.child.stdout?.destroy();
      this.child.stderr?.destroy();
      this.resolveExited(this.exitInfo!);
      // Keep the exit hook (and the tracking) until nothing the server started is alive (stop() removes it).
      const look = this.child.pid === undefined ? undefined : this.look(this.child.pid);
      if (!look || (look.group.length === 0 && look.alive.length === 0)) {
        this.stopTracking();
        live.delete(this);
        // A look after the exit that found nothing, for reap() to use if it comes at once.
        if (look?.decided) this.clearAt = performance.now();
      }
    };
    // 'exit' can come before the last stdout and stderr bytes are read (an adopted child's
    // always does): let the pipes drain (bounded, because a grandchild holding one keeps it open).
    const drained = (): boolean => (this.stdoutEnded || this.child.stdout === null) && (this.stderrEnded || this.child.stderr === null);
    if (drained() || spawnError) finish();
    else {
      const cancel = this.clock.timeout(() => this.afterDrainBound(finish), 250);
      this.drainWaiter = () => {
        if (!drained()) return;
        cancel();
        finish();
      };
    }
  }

  /**
   * The drain bound ran out. It is judged on the clock, and a process short of CPU
   * runs its due timers before it reads its pipes: the server's last answer, written
   * before it exited, may be waiting unread (under load, doctor reported "did not
   * answer shutdown" for a server that had answered, in ~1 run in 5). So read on,
   * one turn of the loop at a time (its poll phase reads the pipes), while each turn
   * brings bytes, and finish on the first turn that brings none, or at a hard
   * 2 s bound (a grandchild writing without end to the pipe it inherited).
   */
  private afterDrainBound(finish: () => void): void {
    const until = performance.now() + 2000; // monotonic: a clock stepped back must not stretch it
    const turn = (seen: number): void => {
      setImmediate(() => {
        if (!this.drainWaiter) return; // drained meanwhile: finished already
        if (this.pipeBytes !== seen && performance.now() < until) turn(this.pipeBytes);
        else finish();
      });
    };
    turn(this.pipeBytes);
  }
}
