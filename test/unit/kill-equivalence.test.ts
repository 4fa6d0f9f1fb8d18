/**
 * The merging of crash points (test/helpers/kill-equivalence.ts): two points are merged
 * only when every call between them (the first one's own call included) cannot change a
 * file, judged on a trace written the way strace writes one (`-f -y`, threads interleaved).
 */
import { describe, expect, it } from 'vitest';
import { equivalentPoints, freshFiles, mutation, parseEntries } from '../helpers/kill-equivalence.js';
import { IN_PLACE_SYSCALLS, inPlaceCall, killPlan, parseCalls, STATE_SYSCALLS } from '../helpers/syscall-kill.js';

const plan = (trace: string) => {
  const { points } = killPlan(parseCalls(trace));
  const { kill, same } = equivalentPoints(trace, points);
  const name = (p: { syscall: string; n: number }) => `${p.syscall}#${p.n}`;
  return { kill: kill.map(name).sort(), same: same.map((m) => `${name(m.point)}=${name(m.as)}`).sort() };
};

describe('crash points with the same disk', () => {
  it('merges an fsync and failed calls into the call that changes the disk next', () => {
    const trace = [
      '10 mkdir("/h/a", 0777) = -1 EEXIST (File exists)',
      '10 openat(AT_FDCWD</w>, "/h/a/.f.tmp", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 18</h/a/.f.tmp>',
      '11 write(18</h/a/.f.tmp>, "x", 1) = 1',
      '11 fsync(18</h/a/.f.tmp>) = 0',
      '11 close(18</h/a/.f.tmp>) = 0',
      '10 futex(0x1, FUTEX_WAKE_PRIVATE, 1) = 1',
      '11 write(1<pipe:[77]>, "ok\\n", 3) = 3',
      '11 rename("/h/a/.f.tmp", "/h/a/f") = 0',
      '11 unlink("/h/a/gone") = -1 ENOENT (No such file or directory)',
      '11 rmdir("/h/a/lock") = 0',
    ].join('\n');
    // mkdir#1 is before the open that creates the temp: its own point. fsync#1 merges into rename#1
    // (close, futex and a pipe write in between); unlink#1 (failed) into rmdir#1.
    expect(plan(trace)).toEqual({ kill: ['mkdir#1', 'rename#1', 'rmdir#1'], same: ['fsync#1=rename#1', 'unlink#1=rmdir#1'] });
  });

  it('keeps points apart when a write to a file, a truncating open, an unknown call or a new process comes between', () => {
    for (const between of [
      '11 write(18</h/a/.f.tmp>, "y", 1) = 1',
      '11 pwrite64(18</h/a/f>, "y", 1, 0) = 1',
      '11 openat(AT_FDCWD</w>, "/h/a/g", O_WRONLY|O_TRUNC) = 19</h/a/g>',
      '11 fchmod(18</h/a/.f.tmp>, 0644) = 0',
      '11 utimensat(AT_FDCWD</w>, "/h/a/lock", [{tv_sec=1, tv_nsec=0}, {tv_sec=1, tv_nsec=0}], 0) = 0',
      '11 ftruncate(18</h/a/.f.tmp>, 0) = 0',
      '10 clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f, stack_size=0x9000}, 88) = 4242',
      '10 ioctl(18</h/a/f>, FICLONE, 19) = 0',
    ]) {
      const trace = ['11 fsync(18</h/a/.f.tmp>) = 0', between, '11 rename("/h/a/.f.tmp", "/h/a/f") = 0'].join('\n');
      expect(plan(trace), between).toEqual({ kill: ['fsync#1', 'rename#1'], same: [] });
    }
  });

  it('does not merge past a call that changes the disk, even an unreachable one of another thread', () => {
    const trace = ['11 mkdir("/h/y", 0777) = 0', '11 fsync(18</h/x>) = 0', '10 mkdir("/h/.yep-staging/s/d", 0777) = 0', '11 rename("/h/a", "/h/b") = 0'].join(
      '\n',
    );
    // mkdir is made by two threads: 10's first mkdir is no when=N's first hit (11's came first), unreachable.
    expect(killPlan(parseCalls(trace)).unreachable.map((c) => c.tid)).toEqual(['10']);
    expect(plan(trace)).toEqual({ kill: ['fsync#1', 'mkdir#1', 'rename#1'], same: [] });
  });

  it('joins unfinished calls to their resumed halves (a failed call counts as failed)', () => {
    const trace = [
      '11 mkdir("/h/a", 0777 <unfinished ...>',
      '10 read(3</w/x>, "", 10) = 0',
      '11 <... mkdir resumed>) = -1 EEXIST (File exists)',
      '11 openat(AT_FDCWD</w>, "/h/b", O_WRONLY|O_CREAT, 0666 <unfinished ...>',
      '10 close(3</w/x>) = 0',
      '11 <... openat resumed>) = -1 EACCES (Permission denied)',
      '11 symlink("v", "/h/c") = 0',
    ].join('\n');
    const entries = parseEntries(trace);
    expect(entries.map((e) => [e.syscall, e.failed])).toEqual([
      ['mkdir', true],
      ['read', false],
      ['openat', true],
      ['close', false],
      ['symlink', false],
    ]);
    expect(entries.map((e) => mutation(e))).toEqual([null, null, null, null, 'symlink']);
    expect(plan(trace)).toEqual({ kill: ['symlink#1'], same: ['mkdir#1=symlink#1'] });
  });

  it('threads are not processes: a thread made in between does not keep points apart', () => {
    const trace = [
      '11 fsync(18</h/x>) = 0',
      '10 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f, parent_tid=0x7f, exit_signal=0, stack=0x7f, stack_size=0x7ff, tls=0x7f} => {parent_tid=[12]}, 88) = 12',
      '11 rename("/h/a", "/h/b") = 0',
    ].join('\n');
    expect(plan(trace)).toEqual({ kill: ['rename#1'], same: ['fsync#1=rename#1'] });
  });

  it("a caller's unobserved directories: calls that change only files named inside them split no group", () => {
    const trace = [
      '11 fsync(18</r/yolop/x>) = 0',
      '11 mkdir("/r/home/.cache", 0777) = 0',
      '11 openat(AT_FDCWD</w>, "/r/home/.cache/yep-ext/tmp/a", O_WRONLY|O_CREAT, 0666) = 19</r/home/.cache/yep-ext/tmp/a>',
      '11 write(19</r/home/.cache/yep-ext/tmp/a>, "crate", 5) = 5',
      '11 rename("/r/home/.cache/yep-ext/tmp/a", "/r/home/.cache/yep-ext/content/a") = 0',
      '11 symlink("../yolop/v", "/r/home/l") = 0',
      '11 rename("/r/yolop/a", "/r/yolop/b") = 0',
    ].join('\n');
    const { points } = killPlan(parseCalls(trace));
    const names = (ps: Array<{ syscall: string; n: number }>) => ps.map((p) => `${p.syscall}#${p.n}`).sort();
    const seen = equivalentPoints(trace, points, ['/r/home']);
    expect(names(seen.kill)).toEqual(['rename#2']);
    expect(names(seen.same.map((m) => m.point))).toEqual(['fsync#1', 'mkdir#1', 'rename#1', 'symlink#1']);
    // Without it, each change is its own state (the fsync goes with the mkdir after it).
    expect(names(equivalentPoints(trace, points).kill)).toEqual(['mkdir#1', 'rename#1', 'rename#2', 'symlink#1']);
    // A path outside it, a relative one, or a rename out of it, is seen.
    for (const call of [
      '11 rename("/r/home/a", "/r/yolop/a") = 0',
      '11 mkdir("home/b", 0777) = 0',
      '11 write(19</r/homework/a>, "x", 1) = 1',
      '11 symlink("/r/home/z", "/r/yolop/l") = 0',
    ]) {
      const t = ['11 fsync(18</r/yolop/x>) = 0', call, '11 rmdir("/r/yolop/lock") = 0'].join('\n');
      // The fsync may go with the call after it when that is a kill point itself, never with the rmdir.
      expect(
        equivalentPoints(t, killPlan(parseCalls(t)).points, ['/r/home'])
          .kill.map((p) => p.syscall)
          .sort(),
        call,
      ).toEqual(call.includes('write') ? ['fsync', 'rmdir'] : [call.split(' ')[1]?.split('(')[0], 'rmdir'].sort());
    }
  });

  it('in-place points: a truncating open and the writes after it in the home; no write to a fresh temp, a pipe or an eventfd', () => {
    const trace = [
      '10 openat(AT_FDCWD</w>, "/h/.s.tmp", O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 18</h/.s.tmp>',
      '10 write(18</h/.s.tmp>, "a, b", 4) = 4',
      '10 write(7<anon_inode:[eventfd]>, "\\1\\0\\0\\0\\0\\0\\0\\0", 8) = 8',
      '10 rename("/h/.s.tmp", "/h/s") = 0',
      '10 write(18</h/s>, "late", 4) = 4',
      '10 openat(AT_FDCWD</w>, "/h/settings.toml", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644) = 19</h/settings.toml>',
      '10 write(1<pipe:[77]>, "ok\\n", 3) = 3',
      '10 write(19</h/settings.toml>, "[x]\\n", 4) = 4',
      '10 openat(AT_FDCWD</w>, "/elsewhere/f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 20</elsewhere/f>',
      '10 write(20</elsewhere/f>, "y", 1) = 1',
      '10 ftruncate(19</h/settings.toml>, 0) = 0',
    ].join('\n');
    const { points } = killPlan(parseCalls(trace, [...STATE_SYSCALLS, ...IN_PLACE_SYSCALLS]));
    const fresh = freshFiles(trace);
    const kept = points.filter((p) => !IN_PLACE_SYSCALLS.includes(p.syscall) || inPlaceCall(p.call, '/h', fresh));
    // Counted as seccomp-kill counts: the opens that may write a file there, the writes to files (not the eventfd, not the pipe).
    expect(points.map((p) => `${p.syscall}#${p.n}`)).toEqual(['write#1', 'write#2', 'write#3', 'write#4', 'rename#1', 'openat#1', 'openat#2', 'ftruncate#1']);
    // By place in the trace: the write through the temp's descriptor after its rename, the write after the
    // truncating open, the rename, that open, the ftruncate; not the temp's own write, nor anything outside /h.
    expect(kept.map((p) => p.call.seq)).toEqual([4, 7, 3, 5, 10]);
  });
});
