/*
 * Kill a command at the Nth call of one system call, counted per thread, as strace's
 * `-e inject=<call>:signal=KILL:when=N` does, without ptrace (test/helpers/syscall-kill.ts
 * builds it with cc and uses it for crash tests' kill runs; strace where it cannot).
 *
 *   seccomp-kill <syscall-number> <n> <log> -- <command> [args...]
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

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
    pid_t pid = fork();
    if (pid == 0) _exit(install_filter(__NR_mkdirat) >= 0 ? 0 : 1);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
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
  int ready[2], go_on[2]; /* child -> parent: the listener's number; parent -> child: go */
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(go_on, O_CLOEXEC) != 0) return 2;
  pid_t child = fork();
  if (child == 0) {
    int listener = install_filter(nr);
    if (listener < 0) {
      perror("seccomp-kill: seccomp");
      _exit(127);
    }
    /* Tell the parent the listener's number; it takes the descriptor with pidfd_getfd. */
    if (write(ready[1], &listener, sizeof listener) != sizeof listener) _exit(127);
    char go;
    if (read(go_on[0], &go, 1) != 1) _exit(127); /* the parent has it */
    close(listener);
    execvp(argv[5], argv + 5);
    perror("seccomp-kill: exec");
    _exit(127);
  }
  close(ready[1]);
  ready[1] = -1;
  int child_fd = -1;
  if (read(ready[0], &child_fd, sizeof child_fd) != sizeof child_fd) {
    int status;
    waitpid(child, &status, 0);
    return 127;
  }
  int pidfd = (int)syscall(__NR_pidfd_open, child, 0);
  int listener = pidfd < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, pidfd, child_fd, 0);
  if (listener < 0) {
    perror("seccomp-kill: pidfd_getfd");
    kill(child, SIGKILL);
    return 127;
  }
  close(pidfd);
  if (write(go_on[1], "g", 1) != 1) return 127;
  close(ready[0]);
  close(go_on[0]);
  close(go_on[1]);

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
