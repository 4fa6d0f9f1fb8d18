/**
 * Every process a server started, not only the ones left in its process group.
 * A server can leave its group (`setsid sleep 300 &`), and a
 * double fork hands the grandchild to init, which cuts the parent chain. On
 * Linux the tracker reads /proc and claims a process for the server when any of
 * these holds:
 *   - its parent is the server or a process already claimed (the parent chain);
 *   - it is in the server's session (the server is spawned as a session leader,
 *     so a double fork without setsid stays there);
 *   - it carries the run's tag in its environment (inherited through setsid and
 *     double forks alike);
 *   - it holds one of the server's stdio pipes (a daemon keeping them open; Node's
 *     'pipe' stdio are socketpairs, so a socket counts as well).
 * Session, tag and pipe claims only consider processes started no earlier than
 * the server. Snapshots are taken while the server runs (a timer) and again at
 * stop, so a chain broken between two snapshots is usually caught by another
 * mark. What cannot be caught: a descendant that calls setsid, clears its
 * environment and closes the pipes before the next snapshot (docs/reliability.md).
 *
 * pid reuse: every claimed pid is remembered with its start time (field 22 of
 * /proc/<pid>/stat); a pid whose start time changed is another process and is
 * never signalled. Elsewhere than Linux the tracker claims nothing, and the
 * process-group rules of process-group.ts are all there is.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { errnoCode } from '../errors.js';

export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  state: string;
  /** Clock ticks after boot (field 22): with the pid, the identity of a process. */
  startTime: number;
  comm: string;
}

/** A claimed process. */
export interface TrackedProcess {
  pid: number;
  startTime: number;
  /** Its command line (or `[comm]`), as last read. */
  command: string;
  /** How it was claimed. */
  via: 'parent' | 'session' | 'tag' | 'pipe';
}

/** A claimed process still alive, with where it is now. */
export interface LiveDescendant extends TrackedProcess {
  pgrp: number;
  session: number;
}

export const PROC_TRACKING = process.platform === 'linux';

/** Parse /proc/<pid>/stat; undefined when the process is gone. */
export function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return parseProcStat(text);
}

/** Parse the text of a /proc/<pid>/stat file. comm may contain spaces and parentheses. */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open === -1 || close === -1) return undefined;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state): field N is f[N - 3].
  const stat: ProcStat = {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: f[0] ?? '?',
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    startTime: Number(f[19]),
  };
  return Number.isFinite(stat.pid) && Number.isFinite(stat.startTime) ? stat : undefined;
}

const dead = (s: ProcStat): boolean => s.state === 'Z' || s.state === 'X' || s.state === 'x';

/** The command line of `pid` joined with spaces, or `[comm]` for a process without one. */
function readCommand(pid: number, comm = '?'): string {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const parts = raw.split('\0').filter((p) => p !== '');
    if (parts.length) return parts.join(' ');
  } catch {
    // gone, or not ours
  }
  return `[${comm}]`;
}

/** True while `pid` is the same live (non-zombie) process that started at `startTime`. */
export function isSameProcess(pid: number, startTime: number): boolean {
  const s = readProcStat(pid);
  return s !== undefined && s.startTime === startTime && !dead(s);
}

/** The pipes and sockets among `pid`'s fds (0-2 only, without `only`); undefined when they cannot be read (gone, not ours, mid-exec). */
function pipesOf(pid: number, only?: ReadonlySet<string>): Set<string> | undefined {
  const out = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  for (const fd of fds) {
    if (only === undefined && Number(fd) > 2) continue;
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    // Node gives a child socketpairs, not pipes, for stdio 'pipe': both count.
    if ((target.startsWith('pipe:') || target.startsWith('socket:')) && (only === undefined || only.has(target))) out.add(target);
  }
  return out;
}

/** Whether `pid`'s environment holds `tag`; undefined when it cannot be read. */
function hasTag(pid: number, tag: string): boolean | undefined {
  try {
    // `\0NAME=value\0` anywhere, or at the start.
    const env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    return env.startsWith(`${tag}\0`) || env.includes(`\0${tag}\0`) || env === tag;
  } catch {
    return undefined;
  }
}

/** How often a look re-reads every process, older ones included (to notice a reused pid). */
const FULL_EVERY_MS = 2000;

export interface TrackerOptions {
  /** `NAME=value` set in the server's environment (see serverRunTag). */
  tag?: string;
  /**
   * Claim processes holding the root's stdio pipes (default true). Right for a server,
   * whose pipes are made for it; wrong for a root whose stdio it shares with others.
   */
  stdio?: boolean;
  /**
   * Pids /proc listed before the root was spawned (listPids): older than it, so its
   * first look reads only the others (~100 fewer files on a desktop) and the next full
   * look (FULL_EVERY_MS later, or a `full` one before a verdict) reads them all again,
   * as for any process older than the server.
   */
  olderPids?: readonly number[];
}

/** The pids in /proc now (Linux; undefined elsewhere or when /proc cannot be read). */
export function listPids(): number[] | undefined {
  if (!PROC_TRACKING) return undefined;
  try {
    return readdirSync('/proc').flatMap((e) => (e.charCodeAt(0) >= 48 && e.charCodeAt(0) <= 57 ? [Number(e)] : []));
  } catch {
    return undefined;
  }
}

/** Claims and kills the descendants of one server (see the header). */
export class ProcessTracker {
  private readonly claimed = new Map<number, TrackedProcess>();
  /** pid -> start time of processes checked for the costly marks and found not ours. */
  private readonly notOurs = new Map<number, number>();
  /** pid -> start time of processes older than the server: never ours, not re-read but on a full pass. */
  private readonly older = new Map<number, number>();
  private rootStart?: number;
  /** Whether the processes older than the root have been noted (on the first snapshot that knows its start). */
  private olderSorted = false;
  private pipes?: Set<string>;
  private lastAt = 0;
  private lastFullAt = 0;
  /** Every process the last full look read (what `look` answers a group from). */
  private lastFull: ProcStat[] = [];
  /** Processes in the last look whose marks could not be read (mid-exec, gone): neither claimed nor cleared. */
  private undecided = 0;

  constructor(
    readonly rootPid: number,
    private readonly options: TrackerOptions = {},
  ) {
    if (options.olderPids) {
      for (const pid of options.olderPids) if (pid !== rootPid) this.older.set(pid, -1);
      this.lastFullAt = Date.now();
    }
    // The root's identity now, zombie or not: a tracker is made synchronously after the
    // spawn, when the child cannot have been reaped yet (Node reaps on a later turn of the
    // loop), so the pid is still the server's. Waiting to first see it alive in a snapshot
    // lost a server that exits at once on a loaded machine: never seen alive, nothing it
    // started (a daemon in its own session, found by the run tag) was ever claimed.
    const root = PROC_TRACKING ? readProcStat(rootPid) : undefined;
    if (root) this.identifyRoot(root);
  }

  private identifyRoot(root: ProcStat): number {
    this.rootStart = root.startTime;
    // A zombie's fds are gone: then no pipe can be matched, and the tag and session remain.
    this.pipes = this.options.stdio === false ? new Set() : (pipesOf(this.rootPid) ?? new Set());
    return root.startTime;
  }

  /**
   * Read /proc and claim new descendants; a no-op off Linux, or when the last
   * look is younger than `maxAgeMs`. Processes older than the server are read
   * again only every FULL_EVERY_MS (a reused pid is noticed then) or on a `full`
   * look (the final ones before a verdict).
   */
  snapshot(options: { maxAgeMs?: number; full?: boolean } = {}): void {
    if (!PROC_TRACKING) return;
    if (!options.full && options.maxAgeMs && Date.now() - this.lastAt < options.maxAgeMs) return;
    this.lastAt = Date.now();
    const full = options.full === true || this.lastFullAt === 0 || Date.now() - this.lastFullAt >= FULL_EVERY_MS;
    if (full) this.lastFullAt = Date.now();
    const procs = this.scan(full);
    if (full) this.lastFull = procs;
    this.undecided = 0;
    const byPid = new Map(procs.map((p) => [p.pid, p]));
    const root = byPid.get(this.rootPid);
    // Not readable when the tracker was made (off /proc, or a root already gone): only a root
    // seen alive is known to be ours.
    const rootStart = this.rootStart ?? (root && !dead(root) ? this.identifyRoot(root) : undefined);
    if (rootStart === undefined) return;
    if (!this.olderSorted) {
      this.olderSorted = true;
      for (const p of procs) if (p.startTime < rootStart) this.older.set(p.pid, p.startTime);
    }
    const rootAlive = root !== undefined && root.startTime === this.rootStart && !dead(root);
    const isOurs = (p: ProcStat): boolean => {
      if (p.pid === this.rootPid) return rootAlive;
      const c = this.claimed.get(p.pid);
      return c !== undefined && c.startTime === p.startTime;
    };
    const claim = (p: ProcStat, via: TrackedProcess['via']): void => {
      const old = this.claimed.get(p.pid);
      if (old && old.startTime === p.startTime) return;
      this.claimed.set(p.pid, { pid: p.pid, startTime: p.startTime, command: readCommand(p.pid, p.comm), via });
    };
    const candidate = (p: ProcStat): boolean => p.pid !== this.rootPid && !isOurs(p) && !dead(p) && p.startTime >= rootStart;
    // The parent chain, to a fixed point (a child listed before its parent).
    const chain = (): void => {
      for (let changed = true; changed; ) {
        changed = false;
        for (const p of procs) {
          if (!candidate(p)) continue;
          const parent = byPid.get(p.ppid);
          if (parent && isOurs(parent)) {
            claim(p, 'parent');
            changed = true;
          }
        }
      }
    };
    chain();
    // After the server died its pid may be reused, and a new session leader would carry the same id.
    // Gone entirely, the id is still ours: Linux does not reuse a pid while a session or group
    // carries it. Listed (alive or a zombie), it is ours only with the server's start time.
    const sessionIsOurs = !root || root.startTime === rootStart;
    let more = false;
    for (const p of procs) {
      if (!candidate(p)) continue;
      if (sessionIsOurs && p.session === this.rootPid) {
        claim(p, 'session');
        more = true;
        continue;
      }
      // The costly marks only where a chain was cut: a process whose parent is older than the
      // server (init or a subreaper took it) or gone. One that is not ours never becomes ours,
      // so each is looked at once.
      const parent = byPid.get(p.ppid);
      if (parent && parent.startTime >= rootStart) continue;
      if (this.notOurs.get(p.pid) === p.startTime) continue;
      const tagged = this.options.tag ? hasTag(p.pid, this.options.tag) : false;
      const pipes = this.pipes && this.pipes.size > 0 ? pipesOf(p.pid, this.pipes) : new Set<string>();
      if (tagged) claim(p, 'tag');
      else if (pipes && pipes.size > 0) claim(p, 'pipe');
      else {
        // Only a clean "no" is remembered: /proc may refuse a read for a moment (mid-exec).
        if (tagged === false && pipes !== undefined) {
          if (this.notOurs.size > 10_000) this.notOurs.clear();
          this.notOurs.set(p.pid, p.startTime);
        } else this.undecided++;
        continue;
      }
      more = true;
    }
    if (more) chain();
  }

  /**
   * One full look, answering two questions from the same read of /proc: the live
   * (non-zombie) members of process group `pgid` (what listGroup reads /proc for
   * again) and the claimed processes alive now. `decided` is false when some
   * process's marks could not be read (it may be ours; look again before
   * concluding that nothing is left). Linux only: elsewhere nothing is read and
   * the answer is empty.
   */
  look(pgid: number): { group: number[]; alive: LiveDescendant[]; decided: boolean } {
    this.snapshot({ full: true });
    const group = this.lastFull.filter((p) => p.pgrp === pgid && p.state !== 'Z' && p.state !== 'X').map((p) => p.pid);
    const alive = this.alive();
    // A process of ours may have forked after /proc was listed and died before its stat was
    // read: its child is in no listing of this look. So list /proc again; any pid the first
    // listing did not have (a process started meanwhile, or a pid reused) leaves the look
    // undecided, and the caller looks again the slow way.
    const seen = new Set(this.lastFull.map((p) => p.pid));
    const now = listPids();
    const fresh = now === undefined || now.some((pid) => !seen.has(pid));
    return { group, alive, decided: this.undecided === 0 && !fresh };
  }

  /** Every process but the older ones this tracker already knows (all of them on a full pass). */
  private scan(full: boolean): ProcStat[] {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      return [];
    }
    if (full) this.older.clear();
    const out: ProcStat[] = [];
    for (const e of entries) {
      if (e.charCodeAt(0) < 48 || e.charCodeAt(0) > 57) continue;
      const pid = Number(e);
      if (!full && this.older.has(pid) && pid !== this.rootPid) continue;
      const s = readProcStat(pid);
      if (!s) continue;
      if (this.rootStart !== undefined && s.startTime < this.rootStart && pid !== this.rootPid) this.older.set(pid, s.startTime);
      out.push(s);
    }
    return out;
  }

  /** Claimed processes (not the server itself) that are still alive. */
  alive(): LiveDescendant[] {
    const out: LiveDescendant[] = [];
    for (const c of this.claimed.values()) {
      const s = readProcStat(c.pid);
      if (s && s.startTime === c.startTime && !dead(s)) {
        // Read again: claimed between fork and exec, it showed its parent's command line.
        c.command = readCommand(c.pid, s.comm);
        out.push({ ...c, pgrp: s.pgrp, session: s.session });
      } else this.claimed.delete(c.pid); // gone: its pid may be reused, forget it
    }
    return out;
  }

  /** SIGKILL every live claimed process, synchronously (safe in an 'exit' handler). */
  killAlive(): LiveDescendant[] {
    const live = this.alive();
    for (const p of live) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch (e) {
        if (errnoCode(e) !== 'ESRCH' && errnoCode(e) !== 'EPERM') throw e;
      }
    }
    return live;
  }

  /**
   * Kill every descendant until none is left: snapshot, SIGKILL, repeat (a
   * descendant may fork while we kill). Returns the ones still alive after
   * `timeoutMs` (not ours to kill, or stuck in the kernel).
   */
  async killAll(timeoutMs = 2000, intervalMs = 20): Promise<LiveDescendant[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.snapshot({ full: true });
      const live = this.killAlive();
      if (live.length === 0) return [];
      if (Date.now() >= deadline) return this.alive();
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/**
 * Kill (SIGKILL) every process whose environment carries `tag` (`NAME=value`): what a stopped
 * program left running, such as git's `git-remote-http` helper after git itself was stopped
 * (Ctrl-C, a timeout): killing git alone orphans it. Linux only (elsewhere nothing is found).
 * Returns the pids signalled.
 */
export function killTagged(tag: string): number[] {
  const killed: number[] = [];
  for (const pid of listPids() ?? []) {
    if (pid === process.pid || hasTag(pid, tag) !== true) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return killed;
}

/** A fresh `YEP_EXT_SERVER_RUN=<random>` for one server run (see the header). */
export function serverRunTag(): { name: string; value: string } {
  const value = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  return { name: 'YEP_EXT_SERVER_RUN', value };
}
