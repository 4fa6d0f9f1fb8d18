/**
 * A server started ahead of the code that will drive it (otherwise `doctor` pays
 * two Node start-ups in series, its own and then the server's). The CLI starts
 * it from a small bundle before it loads doctor's code, so the two start-ups
 * overlap; the first ServerProcess doctor makes then adopts it, but only when the
 * spawn it would make is exactly this one: the same command, argv, cwd,
 * environment (the run tag chosen here is the one it gets) and spawn options, all
 * built by serverSpawnArgs. Anything else (another command or environment, a
 * failed check so that nothing is spawned, an error before doctor runs) discards
 * it: killed and reaped, with everything it started, as a ServerProcess's own
 * clean-up does, before the caller writes anything or exits.
 *
 * Until it is adopted nothing reads its pipes (what it writes waits in them) and
 * its 'spawn', 'error' and 'exit' events are recorded here for the adopter.
 */
import type { ChildProcess } from 'node:child_process';
import { systemSpawn } from '../spawn.js';
import { PROC_TRACKING, ProcessTracker, listPids, serverRunTag } from './process-tree.js';
import { signalGroup } from './process-group.js';
import { serverSpawnArgs, type ServerLaunch } from './server-launch.js';
import { ServerProcess, type AdoptableServer, type AdoptedChild, type EarlyOutput } from './server-process.js';

/** Bytes of output kept for a server not yet adopted before its pipes are paused. */
const KEEP_BYTES = 16 * 1024 * 1024;

/** Stable text of one spawn (command, argv, options with the env in its order) for an exact comparison. */
function spawnKey(s: ReturnType<typeof serverSpawnArgs>): string {
  return JSON.stringify([s.command, s.args, { ...s.options, env: Object.entries(s.options.env) }]);
}

/** What doctor is handed: servers to adopt, each at most once, and the clean-up of the rest. */
export interface EarlyServers extends AdoptableServer {
  /** Kill and reap every one not adopted; resolves when they are gone. Safe to call any number of times. */
  discard(): Promise<void>;
  /** True after a Ctrl-C that came while they were pending (its servers are killed then). */
  readonly interrupted: boolean;
}

/**
 * Early servers neither adopted nor known gone: what a signal or this process's
 * exit must take down with it. They run in sessions of their own, so nothing
 * else would: the CLI would die of a SIGTERM or SIGHUP (no handler of its own),
 * and of a Ctrl-C before doctor's code (cli-context.ts) has installed its
 * handler, which until this start no server was running to outlive. While any is
 * pending: Ctrl-C kills them and is remembered, for doctor to stop with
 * E_INTERRUPTED as if it had come a moment later; SIGTERM and SIGHUP kill them and
 * then end this process by the same signal, as they did before. The handlers go
 * once none is pending, so nothing changes after.
 */
const pending = new Set<EarlyServer>();
let interrupted = false;
const killPending = (): void => {
  for (const s of pending) s.killNow();
};
const onInterrupt = (): void => {
  interrupted = true;
  killPending();
};
const onTerminate = (signal: NodeJS.Signals): void => {
  killPending();
  pending.clear();
  unwatch();
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
};
let listening = false;
/**
 * The handlers, installed before a server is spawned: Node takes over a signal from the
 * system's default only while a listener is installed, so a Ctrl-C between the spawn and
 * `watch` ended this process at once and left the server, in a session of its own, running.
 */
function listen(): void {
  if (listening) return;
  listening = true;
  process.on('exit', killPending);
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  process.on('SIGHUP', onTerminate);
}
/** A server that started: pending from now on (a Ctrl-C met while it was spawned is handled once this tick ends, and finds it). */
function watch(s: EarlyServer): void {
  pending.add(s);
}
function settle(s: EarlyServer): void {
  if (pending.delete(s) && pending.size === 0) unwatch();
}
function unwatch(): void {
  listening = false;
  process.removeListener('exit', killPending);
  process.removeListener('SIGINT', onInterrupt);
  process.removeListener('SIGTERM', onTerminate);
  process.removeListener('SIGHUP', onTerminate);
}

/**
 * Doctor's two runs of one launch, both spawned at once: faster than spawning
 * the second once the first is adopted, since the second server's start-up is
 * then off the path to the end. Each is adopted at most once, in order.
 */
export class EarlyServerSet implements EarlyServers {
  private constructor(private readonly servers: readonly EarlyServer[]) {}

  /** Spawn `runs` servers of `launch` now. Throws only what spawn throws synchronously (then nothing is left running). */
  static start(launch: ServerLaunch, runs: number): EarlyServerSet {
    const servers: EarlyServer[] = [];
    // Every process there before the spawns is older than the servers: their trackers' first
    // looks need not read those (see TrackerOptions.olderPids).
    const olderPids = listPids();
    try {
      for (let i = 0; i < runs; i++) servers.push(EarlyServer.start(launch, olderPids));
    } catch (e) {
      void Promise.all(servers.map((s) => s.discard()));
      throw e;
    }
    return new EarlyServerSet(servers);
  }

  get pids(): (number | undefined)[] {
    return this.servers.map((s) => s.pid);
  }

  claim(launch: ServerLaunch): AdoptedChild | undefined {
    return this.servers.find((s) => !s.settled)?.claim(launch);
  }

  async discard(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.discard()));
  }

  get interrupted(): boolean {
    return interrupted;
  }
}

export class EarlyServer implements EarlyServers {
  private readonly key: string;
  private readonly state: AdoptedChild;
  /** Adopted, or discarded: never handed out again. */
  settled = false;
  private adopted = false;
  private discarding?: Promise<void>;

  private constructor(
    private readonly launch: ServerLaunch,
    olderPids?: readonly number[],
  ) {
    const tag = PROC_TRACKING ? serverRunTag() : undefined;
    const s = serverSpawnArgs(launch, tag);
    this.key = spawnKey(s);
    listen();
    let child: ChildProcess;
    try {
      child = systemSpawn(s.command, s.args, s.options);
    } catch (e) {
      if (pending.size === 0) unwatch();
      throw e;
    }
    const state: AdoptedChild = { child, tag, startedAt: Date.now(), spawned: false, release: () => out };
    this.state = state;
    // Tracked from its spawn, as a ServerProcess's own child is: the tracker reads the
    // server's identity (its start time) as it is made, while the child cannot have been
    // reaped, so a server gone before doctor has loaded its code and checked the manifest
    // still has what it started (a daemon in its own session, by the run tag) claimed.
    // The first look is taken here too, synchronously: the 'spawn' event comes on a later
    // tick, after bin/run.js has loaded doctor's code.
    const tracker =
      child.pid !== undefined && tag ? new ProcessTracker(child.pid, { tag: `${tag.name}=${tag.value}`, ...(olderPids ? { olderPids } : {}) }) : undefined;
    if (tracker) {
      state.tracker = tracker;
      tracker.snapshot();
    }
    child.once('spawn', () => {
      state.spawned = true;
      tracker?.snapshot();
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (child.pid === undefined) state.error ??= e;
    });
    child.once('exit', (code, signal) => (state.exit = { code, signal }));
    child.stdin?.on('error', () => {});
    // Its output, kept from the start (see AdoptedChild.release); past a bound the pipe
    // is paused, so that a flood waits in the server instead of in this process.
    const out: EarlyOutput = { stdout: [], stderr: [], stdoutEnded: false, stderrEnded: false };
    let kept = 0;
    const listeners = (['stdout', 'stderr'] as const).map((which) => {
      const stream = child[which];
      const data = (chunk: Buffer): void => {
        out[which].push(chunk);
        kept += chunk.length;
        if (kept > KEEP_BYTES) stream?.pause();
      };
      const end = (): void => {
        out[which === 'stdout' ? 'stdoutEnded' : 'stderrEnded'] = true;
      };
      stream?.on('data', data);
      stream?.once('end', end);
      stream?.on('error', () => {});
      return () => {
        stream?.removeListener('data', data);
        stream?.removeListener('end', end);
      };
    });
    state.release = () => {
      for (const off of listeners) off();
      return out;
    };
    if (child.pid !== undefined) watch(this);
    else if (pending.size === 0) unwatch();
  }

  /** SIGKILL its process group now, unless it is known gone (then its pid may be another's). Synchronous. */
  killNow(): void {
    const pid = this.state.child.pid;
    if (pid !== undefined && !this.state.exit) signalGroup(pid, 'SIGKILL');
  }

  get interrupted(): boolean {
    return interrupted;
  }

  /** Spawn `launch` now (`olderPids`: listPids() from before it). Throws only what spawn throws synchronously (then nothing is running). */
  static start(launch: ServerLaunch, olderPids?: readonly number[]): EarlyServer {
    return new EarlyServer(launch, olderPids);
  }

  get pid(): number | undefined {
    return this.state.child.pid;
  }

  claim(launch: ServerLaunch): AdoptedChild | undefined {
    if (this.settled) return undefined;
    if (spawnKey(serverSpawnArgs(launch, this.state.tag)) !== this.key) {
      void this.discard();
      return undefined;
    }
    this.settled = true;
    this.adopted = true;
    // From here its ServerProcess answers for it (its own exit hook and the abort signal).
    settle(this);
    return this.state;
  }

  /**
   * Kill and reap it (and whatever it started) unless it was adopted; resolves
   * when it is gone. Safe to call any number of times.
   */
  discard(): Promise<void> {
    if (this.adopted) return Promise.resolve();
    this.settled = true;
    this.discarding ??= (async () => {
      const state = this.state;
      const p = new ServerProcess(
        this.launch,
        { adopt: { claim: () => state } },
        { stdout: () => {}, stdoutEnd: () => {}, stdinError: () => {}, exit: () => {} },
      );
      p.kill();
      await p.stop({ graceMs: 0 });
      settle(this);
    })();
    return this.discarding;
  }
}
