/**
 * Which kill points leave the same disk (test/faults/crash-points.test.ts). strace's
 * `inject=<call>:signal=KILL:when=N` kills at the call's entry, before the kernel runs
 * it, so a process killed at the call in trace position `i` has made every change of
 * the calls before `i` and none after. Two kill points whose positions have the same
 * calls that can change a file before them (none in between) therefore leave the same
 * bytes on disk, and what the test checks after a kill (the agent's view, recovery's
 * result, stray files) is a function of those bytes: killing at one of them is killing
 * at the other. The calls that cannot change a file are few and named here: a call
 * that failed, fsync/fdatasync (no content or name changes; the test kills processes,
 * it does not cut power), reads, stats, memory, signals, threads, pipes and sockets,
 * opens without O_CREAT/O_TRUNC, writes to pipes, sockets and /dev. Every other call,
 * including any this list does not know and any new process (a child may outlive the
 * kill), counts as a change. The record is one completed run traced with every call
 * and file descriptors decoded (`tracedRun(..., { everything: true })`).
 */
import { callArgs, ENTRY, STATE_SYSCALLS, type KillPoint } from './syscall-kill.js';

export interface Entry {
  tid: string;
  syscall: string;
  /** The call as strace wrote it, its resumed half joined on. */
  text: string;
  seq: number;
  failed: boolean;
}

/** Every call of a trace in entry order, with `<unfinished ...>` calls joined to their `<... resumed>` halves. */
export function parseEntries(trace: string): Entry[] {
  const entries: Entry[] = [];
  const pending = new Map<string, Entry>();
  const result = (e: Entry): void => {
    e.failed = /\)\s+= -1 E[A-Z0-9]+/.test(e.text);
  };
  for (const l of trace.split('\n')) {
    const resumed = /^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$/.exec(l);
    if (resumed) {
      const e = pending.get(resumed[1] as string);
      if (e && e.syscall === resumed[2]) {
        e.text += resumed[3];
        result(e);
        pending.delete(e.tid);
      }
      continue;
    }
    const m = ENTRY.exec(l);
    if (m === null) continue;
    const e: Entry = { tid: m[1] as string, syscall: m[2] as string, text: l.replace(/\s*<unfinished \.\.\.>$/, ''), seq: entries.length, failed: false };
    if (l.endsWith('<unfinished ...>')) pending.set(e.tid, e);
    else result(e);
    entries.push(e);
  }
  return entries;
}

/**
 * Calls that change no file whatever their arguments (process-local state, reads, waits): a
 * record may leave them out (syscall-kill.ts's `omit`), as they count as no change either way.
 */
export const INERT_SYSCALLS: readonly string[] =
  `read pread64 readv preadv preadv2 close close_range fstat newfstatat stat lstat statx statfs fstatfs lseek access faccessat faccessat2
  readlink readlinkat getdents getdents64 getcwd chdir fchdir umask getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr
  futex epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 poll ppoll select pselect6 eventfd2 timerfd_create timerfd_settime
  mmap munmap mprotect madvise mremap brk membarrier mlock munlock
  rt_sigaction rt_sigprocmask rt_sigreturn sigaltstack kill tgkill tkill
  getpid getppid gettid getuid geteuid getgid getegid getgroups getpgid getpgrp getsid setpgid setsid capget getresuid getresgid
  clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday sched_yield sched_getaffinity sched_setaffinity sched_getparam sched_getscheduler
  prlimit64 getrlimit getrusage times uname sysinfo personality getrandom arch_prctl prctl set_robust_list get_robust_list rseq set_tid_address
  fcntl flock dup dup2 dup3 pipe pipe2 socket socketpair connect listen accept accept4 shutdown sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg
  getsockopt setsockopt getsockname getpeername wait4 waitid exit exit_group getitimer setitimer inotify_init1 inotify_add_watch inotify_rm_watch`.split(/\s+/);
const INERT = new Set(INERT_SYSCALLS);
const NO_SYNC = new Set(['fsync', 'fdatasync']);
/** ioctl requests on terminals and descriptors' own flags. */
const INERT_IOCTL = /^ioctl\(\d+(<[^>]*>)?, (TCGETS|TIOCGWINSZ|FIONBIO|FIOCLEX|FIONCLEX|FIONREAD|TIOCGPGRP)\b/;
/** Where a write changes no file: pipes, sockets, anonymous inodes, devices. */
const INERT_TARGET = /^\w+\(\d+<(pipe:|socket:|anon_inode:|UNIX|TCP|UDP|\/dev\/)/;

/** Calls that name the files they change by path (every quoted argument is a path; symlink's first is the link's text). */
const BY_PATH =
  /^(rename|renameat|renameat2|unlink|unlinkat|rmdir|symlink|symlinkat|mkdir|mkdirat|open|openat|openat2|creat|chmod|fchmodat|truncate|link|linkat|utimensat|utimes|utime|setxattr|lsetxattr|removexattr|lremovexattr|mknod|mknodat)$/;
/** Calls that change the file their first argument, a descriptor, is open on. */
const BY_FD = /^(write|pwrite64|writev|pwritev|pwritev2|fchmod|fchown|ftruncate|fallocate|fsetxattr|fremovexattr|utimensat)$/;

/** The files `e` names, or null when one of them is not an absolute path (relative to a descriptor, or not decoded). */
function pathsOf(e: Entry): string[] | null {
  const call = e.text.replace(/^\d+\s+/, '');
  const args = call.slice(call.indexOf('(') + 1);
  if (BY_PATH.test(e.syscall)) {
    const quoted = [...args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] as string);
    const paths = e.syscall.startsWith('symlink') ? quoted.slice(1) : quoted;
    if (paths.length > 0) return paths.every((p) => p.startsWith('/')) ? paths : null;
  }
  if (BY_FD.test(e.syscall)) {
    const fd = /^-?\d+<(\/[^>]*)>/.exec(args);
    return fd ? [fd[1] as string] : null;
  }
  return null;
}

/** Why `e` may change a file outside `unobserved`, or null when it cannot. */
export function mutation(e: Entry, unobserved: string[] = []): string | null {
  const why = change(e);
  if (why === null || unobserved.length === 0) return why;
  const paths = pathsOf(e);
  return paths?.every((p) => unobserved.some((u) => p === u || p.startsWith(`${u}/`))) ? null : why;
}

function change(e: Entry): string | null {
  if (e.failed) return null;
  const call = e.text.replace(/^\d+\s+/, '');
  if (NO_SYNC.has(e.syscall) || INERT.has(e.syscall)) return null;
  if (STATE_SYSCALLS.includes(e.syscall)) return e.syscall;
  if (e.syscall === 'open' || e.syscall === 'openat' || e.syscall === 'openat2')
    return /O_CREAT|O_TRUNC/.test(call) ? `${e.syscall} creating or truncating` : null;
  if (/^(write|pwrite64|writev|pwritev|pwritev2)$/.test(e.syscall)) return INERT_TARGET.test(call) ? null : `${e.syscall} to a file`;
  if (e.syscall === 'ioctl') return INERT_IOCTL.test(call) ? null : 'ioctl';
  // A thread dies with the process; a new process may outlive the kill.
  if ((e.syscall === 'clone' || e.syscall === 'clone3') && call.includes('CLONE_THREAD')) return null;
  return `${e.syscall} (not known to leave every file alone)`;
}

export interface Equivalence {
  /** One kill point per distinct disk state: the ones to run. */
  kill: KillPoint[];
  /** The others, each with the point in `kill` whose disk it leaves, byte for byte. */
  same: Array<{ point: KillPoint; as: KillPoint }>;
}

/**
 * Group kill points by the changes made before them (the number of calls before the
 * point's call that may change a file: two points with the same number have only
 * inert calls between them, their own calls included). Each group is run once, at its
 * last point (the call that changes the disk next, when there is one).
 */
export function equivalentPoints(trace: string, points: KillPoint[], unobserved: string[] = []): Equivalence {
  const entries = parseEntries(trace);
  const changesBefore: number[] = [];
  let n = 0;
  for (const e of entries) {
    changesBefore.push(n);
    if (mutation(e, unobserved) !== null) n++;
  }
  const groups = new Map<number, KillPoint[]>();
  for (const p of points) {
    const e = entries[p.call.seq];
    if (!e?.text.startsWith(p.call.line.replace(/\s*<unfinished \.\.\.>$/, '')))
      throw new Error(`kill point ${p.syscall} #${p.n} is not call ${p.call.seq} of the trace`);
    const k = changesBefore[p.call.seq] as number;
    groups.set(k, [...(groups.get(k) ?? []), p]);
  }
  const kill: KillPoint[] = [];
  const same: Equivalence['same'] = [];
  for (const group of groups.values()) {
    group.sort((a, b) => a.call.seq - b.call.seq);
    const rep = group[group.length - 1] as KillPoint;
    kill.push(rep);
    for (const p of group.slice(0, -1)) same.push({ point: p, as: rep });
  }
  return { kill, same };
}

/**
 * For every call of a trace (by its place): the files this run created with O_CREAT|O_EXCL
 * (temp files, its own until renamed) and has not opened for writing since, nor renamed.
 */
export function freshFiles(trace: string): (seq: number) => Set<string> {
  const at: Array<Set<string>> = [];
  let fresh = new Set<string>();
  for (const e of parseEntries(trace)) {
    at.push(fresh);
    if (e.failed) continue;
    const args = callArgs(e.text);
    const paths = args.flatMap((a) => [...a.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] as string));
    if (e.syscall === 'open' || e.syscall === 'openat' || e.syscall === 'creat') {
      const path = paths[0];
      const flags = args[e.syscall === 'open' ? 1 : 2] ?? '';
      if (path === undefined) continue;
      fresh = new Set(fresh);
      if (e.syscall !== 'creat' && /\bO_CREAT\b/.test(flags) && /\bO_EXCL\b/.test(flags)) fresh.add(path);
      else if (e.syscall === 'creat' || /\bO_(WRONLY|RDWR)\b/.test(flags)) fresh.delete(path);
    } else if (e.syscall.startsWith('rename') && paths.some((p) => fresh.has(p))) {
      fresh = new Set([...fresh].filter((p) => !paths.includes(p)));
    }
  }
  return (seq) => at[seq] ?? new Set();
}
