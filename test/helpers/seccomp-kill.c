/*
 * Kill a command at the Nth call of one system call, counted per thread, as strace's
 * `-e inject=<call>:signal=KILL:when=N` does, without ptrace (test/helpers/syscall-kill.ts
 * builds it with cc and uses it for crash tests' kill runs; strace where it cannot).
 *
 *   seccomp-kill <syscall-number> <n> <log> -- <command> [args...]
 *   seccomp-kill --snapshot <dir> <log> <nr>:<n>:<mask>:<copy>... -- <command> [args...]
 *   seccomp-kill --probe        exit 0 when this kernel can do it
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
 * the killed one ending in ` KILLED`, then `+++ killed by SIGKILL +++` or
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
 * counted calls of the points' syscalls as above (<mask> says which arguments are paths),
 * a snapshot's line ending in ` SNAPSHOT`; then how the command ended.
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

struct point { int nr; long n; unsigned mask; const char *copy; int done; };

/* Per-thread, per-syscall counts. */
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
static int copy_tree(const char *from, const char *to) {
  struct stat st;
  if (lstat(from, &st) != 0) return -1;
  int rc = 0;
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlink(from, target, sizeof target - 1);
    if (n < 0) return -1;
    target[n] = 0;
    if (symlink(target, to) != 0) return -1;
    struct timespec times[2] = { st.st_atim, st.st_mtim };
    utimensat(AT_FDCWD, to, times, AT_SYMLINK_NOFOLLOW);
    return 0;
  }
  if (S_ISDIR(st.st_mode)) {
    if (mkdir(to, 0700) != 0) return -1;
    DIR *d = opendir(from);
    if (!d) return -1;
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
      return -1;
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(out, buf, (size_t)n) != n) {
        rc = -1;
        break;
      }
    if (n < 0) rc = -1;
    close(in);
    close(out);
  } else
    return -1; /* a fifo, socket or device: no home holds one */
  if (chmod(to, st.st_mode & 07777) != 0) rc = -1;
  struct timespec times[2] = { st.st_atim, st.st_mtim };
  if (utimensat(AT_FDCWD, to, times, 0) != 0) rc = -1;
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
    fprintf(stderr, "usage: seccomp-kill <syscall-number> <n> <log> -- <command> [args...]\n");
    return 2;
  }
  int nr = atoi(argv[1]);
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

static int snapshot_main(int argc, char **argv) {
  static struct point points[4096];
  int npoints = 0, dash = -1;
  for (int i = 4; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  if (argc < 6 || dash < 0 || dash + 1 >= argc) {
    fprintf(stderr, "usage: seccomp-kill --snapshot <dir> <log> <nr>:<n>:<mask>:<copy>... -- <command> [args...]\n");
    return 2;
  }
  const char *dir = argv[2];
  for (int i = 4; i < dash && npoints < 4096; i++) {
    char *end;
    struct point *p = &points[npoints++];
    p->nr = (int)strtol(argv[i], &end, 10);
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
    int counted = 0;
    for (int i = 0; i < npoints && !counted; i++) counted = points[i].nr == req.data.nr;
    if (counted) {
      pid_t tid = (pid_t)req.pid;
      long k = bump2(tid, req.data.nr);
      struct point *hit = NULL;
      unsigned mask = 0;
      for (int i = 0; i < npoints; i++) {
        if (points[i].nr != req.data.nr) continue;
        mask = points[i].mask;
        if (points[i].n == k && !points[i].done) hit = &points[i];
      }
      fprintf(log, "%d %d #%ld", tid, req.data.nr, k);
      for (int i = 0; i < 6; i++) {
        if (mask & (1u << i)) put_string(log, tid, req.data.args[i]);
        if (mask & (1u << (8 + i))) put_fd(log, tid, req.data.args[i]);
      }
      if (hit) {
        hit->done = 1;
        fputs(copy_tree(dir, hit->copy) == 0 ? " SNAPSHOT\n" : " SNAPSHOT FAILED\n", log);
        /* Every point at this call (the same nr and n) is this one copy's. */
        for (int i = 0; i < npoints; i++)
          if (points[i].nr == hit->nr && points[i].n == hit->n) points[i].done = 1;
      } else
        fputc('\n', log);
      fflush(log);
    }
    struct seccomp_notif_resp resp = { req.id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE };
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
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
