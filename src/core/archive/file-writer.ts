/**
 * Creates the extractor's small files on libuv's thread pool, a few at a time,
 * while the main thread goes on parsing and hashing and zlib inflates the next
 * chunk. Creating a file (open with O_CREAT|O_EXCL) is the
 * disk's cost, kernel time for each: 5,000 of them on the main
 * thread, one after the other, were most of a 5,000-file install. GNU tar pays it
 * too, but in a process of its own beside gzip; here up to MAX_ACTIVE files are
 * open/write/close chains on the pool at once (2 cores, 4 pool threads, one of
 * them inflating).
 *
 * Callbacks, not promises: one promise per file is what made node-tar's async
 * extraction slow. Bounded: at most MAX_ACTIVE descriptors are open, and files
 * wait in a queue only up to MAX_QUEUED_BYTES / MAX_QUEUED_FILES; past that the
 * caller writes synchronously (`full()`) and the unpack loop waits for `room()`
 * before inflating more. The first error wins: nothing more is started, and
 * `settle()` waits for what is in flight, so the caller removes a tree nobody
 * is still writing into.
 */
import { close, fchmod, open, write } from 'node:fs';
import { bufferGarbageMeter } from '../fs/buffer-garbage.js';
import { WakeList } from './wake-list.js';

const MAX_ACTIVE = 3;
/** Enough to keep three creators busy; small, because every byte queued is resident (a longer queue adds its size, several times over, to the 5,000-file install's peak RSS; 128 files: what a 32 KiB slice of small files inflates to fits in the half left free). */
const MAX_QUEUED_BYTES = 512 * 1024;
const MAX_QUEUED_FILES = 128;

interface Job {
  path: string;
  flags: number;
  mode: number;
  data: Buffer;
}

export class FileWriter {
  private active = 0;
  private readonly queue: Job[] = [];
  private head = 0;
  private queuedBytes = 0;
  private failure: { error: unknown } | undefined;
  private stopped = false;
  private readonly wakes = new WakeList();
  /** Each file's buffer is garbage once written: collected every 4 MiB, not at V8's ~32 MiB. */
  private readonly garbage = bufferGarbageMeter();

  constructor(private readonly chmod: boolean) {}

  /** A buffer for the next file's `size` bytes: hand it, filled, to `add`. */
  buffer(size: number): Buffer {
    this.garbage(size);
    return Buffer.allocUnsafe(size);
  }

  /** Nothing is batched here: every file starts as soon as a descriptor is free. */
  flushIdle(): void {}

  /** Too much is waiting: write this file synchronously instead (memory stays bounded). */
  full(): boolean {
    return this.queuedBytes >= MAX_QUEUED_BYTES || this.queue.length - this.head >= MAX_QUEUED_FILES;
  }

  /** Create `path` (O_EXCL) holding `data`, with `mode`; errors surface through `check()`/`settle()`. */
  add(path: string, flags: number, mode: number, data: Buffer): void {
    if (this.stopped) return;
    this.queue.push({ path, flags, mode, data });
    this.queuedBytes += data.length;
    this.pump();
  }

  /** Throw the first write error, if any (called at each entry, so a failure stops the archive early). */
  check(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Resolves when the queue is at most half full (the unpack loop's back-pressure). */
  async room(): Promise<void> {
    while (!this.stopped && (this.queuedBytes > MAX_QUEUED_BYTES / 2 || this.queue.length - this.head > MAX_QUEUED_FILES / 2)) await this.wakes.next();
  }

  /** Everything queued is written (or the first error stopped it): then throws that error, if any. */
  async drain(): Promise<void> {
    while (this.active > 0 || this.queue.length > this.head) await this.wakes.next();
    this.check();
  }

  /** Stop starting files and wait for those in flight to be closed; never throws. */
  async settle(): Promise<void> {
    this.stopped = true;
    this.dropQueue();
    this.wakes.wakeAll();
    while (this.active > 0) await this.wakes.next();
  }

  private dropQueue(): void {
    this.queue.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
  }

  private pump(): void {
    while (this.active < MAX_ACTIVE && this.queue.length > this.head && !this.stopped) {
      const job = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Job;
      if (this.head === this.queue.length) {
        this.queue.length = 0;
        this.head = 0;
      }
      this.queuedBytes -= job.data.length;
      this.active++;
      this.run(job);
    }
  }

  private run(job: Job): void {
    open(job.path, job.flags, job.mode, (openError, fd) => {
      if (openError) return this.done(openError, -1);
      if (this.chmod) fchmod(fd, job.mode, (e) => (e ? this.done(e, fd) : this.writeAll(job, fd, 0)));
      else this.writeAll(job, fd, 0);
    });
  }

  private writeAll(job: Job, fd: number, from: number): void {
    if (from >= job.data.length || this.stopped) {
      this.done(null, fd);
      return;
    }
    write(fd, job.data, from, job.data.length - from, null, (e, n) => (e ? this.done(e, fd) : this.writeAll(job, fd, from + n)));
  }

  private done(error: NodeJS.ErrnoException | null, fd: number): void {
    if (error && !this.failure) {
      this.failure = { error };
      this.stopped = true;
      this.dropQueue();
    }
    const finish = (): void => {
      this.active--;
      this.pump();
      this.wakes.wakeAll();
    };
    if (fd === -1) {
      finish();
      return;
    }
    close(fd, (e) => {
      if (e && !this.failure) {
        this.failure = { error: e };
        this.stopped = true;
        this.dropQueue();
      }
      finish();
    });
  }
}
