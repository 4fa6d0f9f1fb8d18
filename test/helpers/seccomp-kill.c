/*
 * Kill a command at the Nth call of one system call, counted per thread, as strace's
 * `-e inject=<call>:signal=KILL:when=N` does, without ptrace (test/helpers/syscall-kill.ts
 * builds it with cc and uses it for crash tests' kill runs; strace where it cannot).
 *
 *   seccomp-kill <call> <n> <log> -- <command> [args...]
 *   seccomp-kill --snapshot <dir> <log> <call>:<n>:<mask>:<copy>... -- <command> [args...]
 *   seccomp-kill --probe        exit 0 when this kernel can do it
 *
 * <call>: a syscall number, every call of it counted; or <nr>/<kind>, only the calls of it
 * that may change a file in place counted (the others let through uncounted):
 *   <nr>/1   an open that may write a file already there: O_TRUNC, or O_CREAT without
 *            O_EXCL (the flags of open, argument 1; of openat, argument 2; creat: every call);
 *   <nr>/1i  (i a digit: 10 + i) a call whose descriptor argument i is open on a file (its
 *            /proc link an absolute path outside /dev): a write, not one to a pipe, socket,
 *            eventfd or terminal (those are timing's: libuv's wake-ups).
 *
 * A seccomp filter, installed in the child just before it execs the command and
 * inherited by every thread and process it starts, hands only that one syscall to
 * this supervisor (SECCOMP_RET_USER_NOTIF, Linux 5.0; the CONTINUE answer, 5.5):
 * every other call runs at full speed, where ptrace stops the tracee at every call of
 * every thread. The calling thread waits in the kernel, before the call runs, until
 * the supervisor answers. The supervisor counts calls per thread (strace's when=N
 * counter is per thread too); at the Nth it sends SIGKILL to the caller's process and
 * does not answer: the fatal signal ends the wait and the call is skipped, as when
 * strace's injected SIGKILL ends the syscall-entry stop. The others are let through.
 *
 * Why not `strace --seccomp-bpf`: the call then stops as a PTRACE_EVENT_SECCOMP stop,
 * and a signal passed when restarting from an event stop is dropped by the kernel, so
 * strace 6.1's `signal=KILL` never fires there (error= injection does).
 *
 * The log: one line per call of the syscall, `<tid> #<k> "<path>"...` (the path
 * arguments read from the caller's memory, a descriptor argument as its /proc link),
 * counted calls only, the killed one ending in ` KILLED`, then `+++ killed by SIGKILL +++` or
 * `+++ exited with <n> +++`. The exit status is the command's (128 + signal if killed).
 * The caller says which arguments are paths (mask bit i: argument i is a path;
 * bit 8+i: argument i is a descriptor) with the environment variable SECCOMP_KILL_ARGS.
 * x86_64 only (the filter checks the audit arch); elsewhere --probe fails.
 *
 * --snapshot: the disk a kill at each of several points would leave, from one run that is
 * not killed. A kill at the entry of a call leaves every change of the calls before it and
 * none after (test/helpers/kill-equivalence.ts); here, at the Nth call (per thread, as above)
 * of syscall <nr>, the caller is held before the call runs while the home <dir> is copied to
 * <copy> (as `cp -a` copies it), then let through. The filter hands this supervisor every
 * call that can change a file (the state syscalls, opens, writes, truncation, modes, links, times, copies, new
 * threads and processes) and it answers them one at a time, so while it copies, no thread of
 * the command changes a file: the copy is the disk of a kill at that instant. The log: the
 * counted calls of the points' calls as `<tid> <call> #<k> "<path>"...` (<mask> says which
 * arguments are paths), a snapshot's line ending in ` SNAPSHOT`, or in
 * ` SNAPSHOT FAILED <errno name> <path>` when the copy failed (the first failure); then how
 * the command ended.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <dirent.h>
#include <limits.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE 1
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif

static int install_filter(int nr) {
  struct sock_filter prog[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog fprog = { sizeof prog / sizeof prog[0], prog };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
}

/* Append `"<string at addr in tid>"` to the log. */
static void put_string(FILE *log, pid_t tid, unsigned long long addr) {
  char path[64], buf[4097];
  snprintf(path, sizeof path, "/proc/%d/mem", tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof buf - 1, (off_t)addr);
  if (n <= 0 && fd >= 0) n = pread(fd, buf, 4096 - (addr % 4096), (off_t)addr); /* not across the page */
  if (fd >= 0) close(fd);
  if (n <= 0) {
    fputs(" \"?\"", log);
    return;
  }
  buf[n] = 0;
  fprintf(log, " \"%s\"", buf);
}

static void put_fd(FILE *log, pid_t tid, unsigned long long fd) {
  char path[64], buf[4097];
  snprintf(path, sizeof path, "/proc/%d/fd/%llu", tid, fd);
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  buf[n < 0 ? 0 : n] = 0;
  fprintf(log, " \"%s\"", n < 0 ? "?" : buf);
}

static pid_t tgid_of(pid_t tid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", tid);
  FILE *f = fopen(path, "re");
  pid_t tgid = tid;
  if (!f) return tid;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "Tgid:", 5) == 0) tgid = (pid_t)atoi(line + 5);
  fclose(f);
  return tgid;
}

/* Whether the call `req` of syscall `nr` is counted by `kind` (see the header). */
static int counted_by(const struct seccomp_notif *req, int kind) {
  if (kind == 0) return 1;
  if (kind == 1) {
    if (req->data.nr == __NR_creat) return 1;
    unsigned long long flags = req->data.nr == __NR_open ? req->data.args[1] : req->data.args[2];
    return (flags & O_TRUNC) || ((flags & O_CREAT) && !(flags & O_EXCL));
  }
  if (kind >= 10 && kind < 16) {
    char path[64], buf[16];
    snprintf(path, sizeof path, "/proc/%d/fd/%llu", (int)req->pid, req->data.args[kind - 10]);
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n <= 0) return 0;
    buf[n] = 0;
    return buf[0] == '/' && strncmp(buf, "/dev/", 5) != 0;
  }
  return 0;
}

/* `<nr>` or `<nr>/<kind>` at `s`; the end of it in *end. */
static int parse_call(const char *s, int *kind, char **end) {
  int nr = (int)strtol(s, end, 10);
  *kind = 0;
  if (**end == '/') *kind = (int)strtol(*end + 1, end, 10);
  return nr;
}

/* Per-thread counts (tids are not reused within a run: a few thousand at most). */
static struct { pid_t tid; long count; } counts[65536];
static long bump(pid_t tid) {
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    if (counts[i].tid == tid) return ++counts[i].count;
    if (counts[i].tid == 0) {
      counts[i].tid = tid;
      return counts[i].count = 1;
    }
  }
  return -1;
}


/* Every x86_64 call that can change a file or start a thread or process (kill-equivalence.ts's
 * "not inert" calls): while the supervisor copies a home it answers none of them. */
static const int FREEZE[] = {
  82, 83, 84, 87, 88, 74, 75, 258, 263, 264, 266, 316, /* the state syscalls */
  2, 257, 437, 85,                                      /* open, openat, openat2, creat */
  1, 18, 20, 296, 328,                                  /* write, pwrite64, writev, pwritev, pwritev2 */
  76, 77, 285,                                          /* truncate, ftruncate, fallocate */
  90, 91, 268, 452, 92, 93, 94, 260,                    /* chmod, fchmod, fchmodat, fchmodat2, chown family */
  86, 265, 133, 259,                                    /* link, linkat, mknod, mknodat */
  132, 235, 261, 280,                                   /* utime, utimes, futimesat, utimensat */
  326, 40, 275, 16,                                     /* copy_file_range, sendfile, splice, ioctl (FICLONE) */
  188, 189, 190, 197, 198, 199,                         /* xattrs */
  56, 435, 57, 58, 59, 322, 426,                        /* clone, clone3, fork, vfork, execve, execveat, io_uring_enter */
};
#define NFREEZE (sizeof FREEZE / sizeof FREEZE[0])

static int install_freeze_filter(void) {
  struct sock_filter prog[NFREEZE + 6];
  size_t k = 0;
  prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (size_t i = 0; i < NFREEZE; i++) /* matched: jump to the USER_NOTIF return after the list */
    prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)FREEZE[i], (unsigned char)(NFREEZE - i), 0);
  prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  struct sock_fprog fprog = { (unsigned short)k, prog };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
}

struct point { int nr; int kind; long n; unsigned mask; const char *copy; int done; };

/* Per-thread, per-call counts (`nr` here: the syscall number * 100 + the kind). */
static struct { pid_t tid; int nr; long count; } counts2[65536];
static long bump2(pid_t tid, int nr) {
  for (size_t i = 0; i < sizeof counts2 / sizeof counts2[0]; i++) {
    if (counts2[i].tid == tid && counts2[i].nr == nr) return ++counts2[i].count;
    if (counts2[i].tid == 0) {
      counts2[i].tid = tid;
      counts2[i].nr = nr;
      return counts2[i].count = 1;
    }
  }
  return -1;
}

/* Copy the tree at `from` to `to` as `cp -a` would (modes, times; symlinks as links; no
 * hardlinks kept: the one place yep-ext makes them is its download cache, only listed here),
 * in this process: no cp to start at every point. */
static int copy_errno;
static char copy_err_path[PATH_MAX];
/* The first failure of a copy: its errno and the path it was at. */
static int copy_failed(const char *path) {
  if (copy_errno == 0) {
    copy_errno = errno ? errno : EIO;
    snprintf(copy_err_path, sizeof copy_err_path, "%s", path);
  }
  return -1;
}
static int copy_tree(const char *from, const char *to) {
  struct stat st;
  if (lstat(from, &st) != 0) return copy_failed(from);
  int rc = 0;
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlink(from, target, sizeof target - 1);
    if (n < 0) return copy_failed(from);
    target[n] = 0;
    if (symlink(target, to) != 0) return copy_failed(to);
    struct timespec times[2] = { st.st_atim, st.st_mtim };
    utimensat(AT_FDCWD, to, times, AT_SYMLINK_NOFOLLOW);
    return 0;
  }
  if (S_ISDIR(st.st_mode)) {
    if (mkdir(to, 0700) != 0) return copy_failed(to);
    DIR *d = opendir(from);
    if (!d) return copy_failed(from);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char a[PATH_MAX], b[PATH_MAX];
      snprintf(a, sizeof a, "%s/%s", from, e->d_name);
      snprintf(b, sizeof b, "%s/%s", to, e->d_name);
      if (copy_tree(a, b) != 0) rc = -1;
    }
    closedir(d);
  } else if (S_ISREG(st.st_mode)) {
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (in < 0 || out < 0) {
      if (in >= 0) close(in);
      return copy_failed(in < 0 ? from : to);
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(out, buf, (size_t)n) != n) {
        rc = copy_failed(to);
        break;
      }
    if (n < 0) rc = copy_failed(from);
    close(in);
    close(out);
  } else
    { errno = EINVAL; return copy_failed(from); } /* a fifo, socket or device: no home holds one */
  if (chmod(to, st.st_mode & 07777) != 0) rc = copy_failed(to);
  struct timespec times[2] = { st.st_atim, st.st_mtim };
  if (utimensat(AT_FDCWD, to, times, 0) != 0) rc = copy_failed(to);
  return rc;
}

/* Fork `cmd` with the filter (install_filter(nr), or the freeze filter when nr < 0) installed just
 * before its exec; the supervisor's listener descriptor, or -1. */
static int spawn_supervised(char **cmd, int nr, pid_t *out) {
  /* child -> parent: the listener's number (sent with send(): the freeze filter holds write); parent -> child: go */
  int ready[2], go_on[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) != 0 || pipe2(go_on, O_CLOEXEC) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    int listener = nr < 0 ? install_freeze_filter() : install_filter(nr);
    if (listener < 0) {
      perror("seccomp-kill: seccomp");
      _exit(127);
    }
    /* Tell the parent the listener's number; it takes the descriptor with pidfd_getfd. */
    if (send(ready[1], &listener, sizeof listener, 0) != sizeof listener) _exit(127);
    char go;
    if (read(go_on[0], &go, 1) != 1) _exit(127); /* the parent has it */
    close(listener);
    execvp(cmd[0], cmd);
    perror("seccomp-kill: exec");
    _exit(127);
  }
  close(ready[1]);
  ready[1] = -1;
  int child_fd = -1;
  if (read(ready[0], &child_fd, sizeof child_fd) != sizeof child_fd) {
    int status;
    waitpid(child, &status, 0);
    return -1;
  }
  int pidfd = (int)syscall(__NR_pidfd_open, child, 0);
  int listener = pidfd < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, pidfd, child_fd, 0);
  if (listener < 0) {
    perror("seccomp-kill: pidfd_getfd");
    kill(child, SIGKILL);
    return -1;
  }
  close(pidfd);
  if (write(go_on[1], "g", 1) != 1) return -1;
  close(ready[0]);
  close(go_on[0]);
  close(go_on[1]);
  *out = child;
  return listener;
}

static int snapshot_main(int argc, char **argv);

/* Wait for the traced child, log how it ended (as strace does), close the log; the exit status to pass on. */
static int reap_and_log(pid_t child, FILE *log) {
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    fprintf(log, "+++ killed by %s +++\n", WTERMSIG(status) == SIGKILL ? "SIGKILL" : "another signal");
    fclose(log);
    return 128 + WTERMSIG(status);
  }
  fprintf(log, "+++ exited with %d +++\n", WEXITSTATUS(status));
  fclose(log);
  return WEXITSTATUS(status);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    pid_t pid = fork();
    if (pid == 0) _exit(install_filter(__NR_mkdirat) >= 0 ? 0 : 1);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  if (argc >= 2 && strcmp(argv[1], "--snapshot") == 0) return snapshot_main(argc, argv);
  if (argc < 6 || strcmp(argv[4], "--") != 0) {
    fprintf(stderr, "usage: seccomp-kill <call> <n> <log> -- <command> [args...]\n");
    return 2;
  }
  int kind;
  char *end;
  int nr = parse_call(argv[1], &kind, &end);
  long n = atol(argv[2]);
  const char *mask_env = getenv("SECCOMP_KILL_ARGS");
  unsigned mask = mask_env ? (unsigned)strtoul(mask_env, NULL, 0) : 0;
  FILE *log = fopen(argv[3], "we");
  if (!log) {
    perror("seccomp-kill: log");
    return 2;
  }
  pid_t child;
  int listener = spawn_supervised(argv + 5, nr, &child);
  if (listener < 0) return 127;
  int killed = 0;
  for (;;) {
    struct pollfd p = { listener, POLLIN, 0 };
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (!(p.revents & POLLIN)) break; /* POLLHUP: no task uses the filter any more */
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) continue; /* the caller died meanwhile */
    if (!counted_by(&req, kind)) {
      struct seccomp_notif_resp pass = { req.id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE };
      ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &pass);
      continue;
    }
    long k = bump((pid_t)req.pid);
    fprintf(log, "%d #%ld", req.pid, k);
    for (int i = 0; i < 6; i++) {
      if (mask & (1u << i)) put_string(log, (pid_t)req.pid, req.data.args[i]);
      if (mask & (1u << (8 + i))) put_fd(log, (pid_t)req.pid, req.data.args[i]);
    }
    if (k == n && !killed) {
      killed = 1;
      fputs(" KILLED\n", log);
      fflush(log);
      kill(tgid_of((pid_t)req.pid), SIGKILL);
      continue; /* no answer: the fatal signal ends the wait, and the call is skipped */
    }
    fputc('\n', log);
    struct seccomp_notif_resp resp = { req.id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE };
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  return reap_and_log(child, log);
}

static int snapshot_main(int argc, char **argv) {
  static struct point points[4096];
  int npoints = 0, dash = -1;
  for (int i = 4; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  if (argc < 6 || dash < 0 || dash + 1 >= argc) {
    fprintf(stderr, "usage: seccomp-kill --snapshot <dir> <log> <call>:<n>:<mask>:<copy>... -- <command> [args...]\n");
    return 2;
  }
  const char *dir = argv[2];
  for (int i = 4; i < dash && npoints < 4096; i++) {
    char *end;
    struct point *p = &points[npoints++];
    p->nr = parse_call(argv[i], &p->kind, &end);
    p->n = strtol(end + 1, &end, 10);
    p->mask = (unsigned)strtoul(end + 1, &end, 10);
    p->copy = end + 1;
    p->done = 0;
  }
  FILE *log = fopen(argv[3], "we");
  if (!log) {
    perror("seccomp-kill: log");
    return 2;
  }
  pid_t child;
  int listener = spawn_supervised(argv + dash + 1, -1, &child);
  if (listener < 0) return 127;
  for (;;) {
    struct pollfd p = { listener, POLLIN, 0 };
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (!(p.revents & POLLIN)) break;
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) continue;
    /* Each kind of this syscall that a point counts (a call may be counted by none, or by one). */
    pid_t tid = (pid_t)req.pid;
    int kinds_seen[8], nkinds = 0;
    for (int i = 0; i < npoints; i++) {
      if (points[i].nr != (int)req.data.nr) continue;
      int seen = 0;
      for (int j = 0; j < nkinds; j++) seen |= kinds_seen[j] == points[i].kind;
      if (!seen && nkinds < 8) kinds_seen[nkinds++] = points[i].kind;
    }
    for (int j = 0; j < nkinds; j++) {
      int kind = kinds_seen[j];
      if (!counted_by(&req, kind)) continue;
      long k = bump2(tid, req.data.nr * 100 + kind);
      struct point *hit = NULL;
      unsigned mask = 0;
      for (int i = 0; i < npoints; i++) {
        if (points[i].nr != (int)req.data.nr || points[i].kind != kind) continue;
        mask = points[i].mask;
        if (points[i].n == k && !points[i].done) hit = &points[i];
      }
      if (kind == 0)
        fprintf(log, "%d %d #%ld", tid, req.data.nr, k);
      else
        fprintf(log, "%d %d/%d #%ld", tid, req.data.nr, kind, k);
      for (int i = 0; i < 6; i++) {
        if (mask & (1u << i)) put_string(log, tid, req.data.args[i]);
        if (mask & (1u << (8 + i))) put_fd(log, tid, req.data.args[i]);
      }
      if (hit) {
        hit->done = 1;
        copy_errno = 0;
        if (copy_tree(dir, hit->copy) == 0)
          fputs(" SNAPSHOT\n", log);
        else
          fprintf(log, " SNAPSHOT FAILED %s %s\n", strerrorname_np(copy_errno) ? strerrorname_np(copy_errno) : "?", copy_err_path);
        /* Every point at this call (the same call and n) is this one copy's. */
        for (int i = 0; i < npoints; i++)
          if (points[i].nr == hit->nr && points[i].kind == hit->kind && points[i].n == hit->n) points[i].done = 1;
      } else
        fputc('\n', log);
      fflush(log);
    }
    struct seccomp_notif_resp resp = { req.id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE };
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  return reap_and_log(child, log);
}
