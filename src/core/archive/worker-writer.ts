/**
 * Creates the extractor's small files on ONE worker thread (node:worker_threads)
 * with synchronous calls, in batches. The main
 * thread keeps every decision (parse, policy, directories, big files, the content
 * hash, in archive order); the worker only runs open(O_EXCL)/fchmod/write/close
 * for files the extractor has already accepted, whose bytes the extractor copies
 * straight into a 256 KiB batch buffer. A batch (up to BATCH_FILES files or
 * BATCH_FLUSH bytes) is posted with its buffer transferred, not copied; the worker
 * acknowledges it and transfers the buffer back for reuse. No callback per file:
 * libuv's pool with a callback per file loses on a quiet machine (each callback
 * costs the main thread more than the kernel work it moves off it).
 *
 * Same contract as FileWriter (the extractor uses either): bounded (at most
 * MAX_INFLIGHT bytes posted and not yet written; past that the caller writes the
 * file synchronously, which is safe because directories are made on the main
 * thread before any file under them is handed over), the first error wins and
 * surfaces through `check()`/`drain()` as the errno error the sync call would have
 * thrown, and `settle()` returns only once the worker has stopped touching the tree.
 *
 * The worker is started at the archive's 16th small file (a crate of one big file
 * never pays for it: an isolate's RSS and start-up CPU); its start-up overlaps the
 * next files, written on the main thread until it says it is ready. It is kept,
 * unreferenced, for the next unpack of the process.
 */
import { Worker } from 'node:worker_threads';
import { WakeList } from './wake-list.js';

/** Bytes of one batch buffer: a pooled file (<= 256 KiB) always fits in a fresh one. */
const BATCH_BYTES = 256 * 1024;
/** Post a batch once it holds this many files or bytes (keeps the worker fed without a message per file). */
const BATCH_FILES = 64;
const BATCH_FLUSH = 128 * 1024;
/** Bytes posted and not yet written, past which files are written synchronously (memory stays bounded). */
const MAX_INFLIGHT = 1024 * 1024;
/** Small files written on the main thread before the worker is started (see `full`). */
const START_AFTER = 16;

const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, writeSync, closeSync, fchmodSync } = require('node:fs');
const stop = new Int32Array(workerData.stop);
parentPort.on('message', (m) => {
  const f = m.files;
  if (Atomics.load(stop, 0) === 0 && f.length > 0) {
    const buf = Buffer.from(m.buf);
    for (let i = 0; i < f.length; i += 4) {
      if (Atomics.load(stop, 0) !== 0) break;
      let fd = -1;
      try {
        fd = openSync(f[i], m.flags, f[i + 1]);
        if (m.chmod) fchmodSync(fd, f[i + 1]);
        let at = f[i + 2];
        const end = at + f[i + 3];
        while (at < end) at += writeSync(fd, buf, at, end - at);
        const c = fd;
        fd = -1;
        closeSync(c);
      } catch (e) {
        if (fd !== -1) try { closeSync(fd); } catch {}
        Atomics.store(stop, 0, 1);
        parentPort.postMessage({ seq: m.seq, used: m.used, buf: m.buf, error: { message: String(e && e.message), code: e && e.code, errno: e && e.errno, syscall: e && e.syscall, path: e && e.path } }, [m.buf]);
        return;
      }
    }
  }
  parentPort.postMessage({ seq: m.seq, used: m.used, buf: m.buf }, [m.buf]);
});
parentPort.postMessage({ ready: true });
`;

interface Ack {
  ready?: boolean;
  seq?: number;
  used?: number;
  buf?: ArrayBuffer;
  error?: { message: string; code?: string; errno?: number; syscall?: string; path?: string };
}

/** A started worker and its stop flag (set by either side: the worker skips the rest of what it was sent). */
interface Thread {
  worker: Worker;
  stop: Int32Array;
  ready: boolean;
  dead: boolean;
  free: ArrayBuffer[];
  onMessage: ((m: Ack) => void) | undefined;
  onGone: ((e: unknown) => void) | undefined;
}

/** One idle worker kept for the next unpack of this process (unreferenced: it never keeps the process alive). */
let idle: Thread | undefined;

function startThread(): Thread {
  const shared = new SharedArrayBuffer(4);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { stop: shared },
    // Not the parent's loaders (tsx under the tests) nor its flags: the worker runs plain fs calls.
    execArgv: [],
    stdout: false,
    stderr: false,
  });
  const t: Thread = { worker, stop: new Int32Array(shared), ready: false, dead: false, free: [], onMessage: undefined, onGone: undefined };
  worker.on('message', (m: Ack) => {
    if (m.ready) t.ready = true;
    t.onMessage?.(m);
  });
  const gone = (e: unknown): void => {
    t.dead = true;
    if (idle === t) idle = undefined;
    t.onGone?.(e);
  };
  worker.on('error', gone);
  worker.on('exit', (code) => gone(new Error(`the unpack worker exited (code ${code})`)));
  return t;
}

/** Files handed to a worker so far in this process (tests: the worker path was taken). */
let handedOver = 0;
export function workerFilesHandedOver(): number {
  return handedOver;
}

/**
 * Start the worker ahead of an unpack (during a download: its start-up then overlaps
 * the transfer); resolves once it is ready (or gone). It waits, unreferenced, for the
 * next WorkerWriter of this process.
 */
export function warmUnpackWorker(): Promise<void> {
  let t = idle && !idle.dead ? idle : undefined;
  if (t === undefined) {
    t = idle = startThread();
    t.worker.unref();
  }
  const thread = t;
  if (thread.ready || thread.dead) return Promise.resolve();
  return new Promise((resolve) => {
    const check = (): void => {
      if (thread.ready || thread.dead) {
        thread.worker.off('message', check);
        thread.worker.off('exit', check);
        resolve();
      }
    };
    thread.worker.on('message', check);
    thread.worker.on('exit', check);
  });
}

function release(t: Thread): void {
  t.onMessage = undefined;
  t.onGone = undefined;
  if (t.dead) return;
  t.worker.unref();
  Atomics.store(t.stop, 0, 0);
  if (idle === undefined) idle = t;
  else void t.worker.terminate();
}

function errnoError(e: NonNullable<Ack['error']>): NodeJS.ErrnoException {
  return Object.assign(new Error(e.message), {
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.errno !== undefined ? { errno: e.errno } : {}),
    ...(e.syscall !== undefined ? { syscall: e.syscall } : {}),
    ...(e.path !== undefined ? { path: e.path } : {}),
  });
}

export class WorkerWriter {
  private t: Thread | undefined;
  private offered = 0;
  private buf: Buffer | undefined;
  private used = 0;
  private files: Array<string | number> = [];
  private inflight = 0;
  private posted = 0;
  private acked = 0;
  private failure: { error: unknown } | undefined;
  private stopped = false;
  private released = false;
  private readonly wakes = new WakeList();
  private flags = 0;

  constructor(private readonly chmod: boolean) {}

  /** Not started yet, or too much is waiting: write this file synchronously instead. */
  full(): boolean {
    const t = this.t;
    if (t === undefined) {
      // Started only once the archive shows many small files: a crate of one big file
      // never pays its start-up or its memory (the 200 MB install's peak RSS row).
      if (++this.offered === START_AFTER) {
        try {
          this.start();
        } catch {
          // No thread to be had (a resource limit): every file stays on the main thread.
        }
      }
      return true;
    }
    return !t.ready || t.dead || this.inflight + this.used >= MAX_INFLIGHT;
  }

  private start(): void {
    const t = idle && !idle.dead ? idle : startThread();
    if (idle === t) idle = undefined;
    this.t = t;
    t.worker.ref();
    t.onMessage = (m) => this.onAck(m);
    t.onGone = (e) => {
      this.fail(e);
      this.acked = this.posted;
      this.inflight = 0;
      this.wakes.wakeAll();
    };
  }

  /** Where the next file's `size` bytes go: hand that buffer, filled, to `add`. */
  buffer(size: number): Buffer {
    if (this.buf === undefined || BATCH_BYTES - this.used < size) {
      this.flush();
      this.buf = this.takeBuffer();
    }
    return this.buf.subarray(this.used, this.used + size);
  }

  /** Create `path` (O_EXCL) holding `data` (from `buffer()`), with `mode`; errors surface through `check()`/`drain()`. */
  add(path: string, flags: number, mode: number, data: Buffer): void {
    if (this.stopped) return;
    if (this.buf === undefined) this.buf = this.takeBuffer();
    if (data.length > 0 && (data.buffer !== this.buf.buffer || data.byteOffset !== this.buf.byteOffset + this.used)) {
      throw new Error('WorkerWriter.add: the data is not the buffer() just handed out');
    }
    this.flags = flags;
    this.files.push(path, mode, this.used, data.length);
    handedOver++;
    this.used += data.length;
    if (this.files.length >= BATCH_FILES * 4 || this.used >= BATCH_FLUSH) this.flush();
  }

  /** Post what is batched (only between files: a file being filled lives in the batch buffer). */
  flushIdle(): void {
    this.flush();
  }

  check(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Resolves when at most half of MAX_INFLIGHT is waiting (the unpack loop's back-pressure). */
  async room(): Promise<void> {
    while (!this.stopped && this.inflight > MAX_INFLIGHT / 2) await this.wakes.next();
  }

  /** Everything handed over is written (or the first error stopped it): then throws that error, if any. */
  async drain(): Promise<void> {
    this.flush();
    while (this.acked < this.posted) await this.wakes.next();
    this.finish();
    this.check();
  }

  /** Stop the worker's writes and wait until it no longer touches the tree; never throws. */
  async settle(): Promise<void> {
    this.stopped = true;
    if (this.t) Atomics.store(this.t.stop, 0, 1);
    this.buf = undefined;
    this.used = 0;
    this.files = [];
    this.wakes.wakeAll();
    while (this.acked < this.posted) await this.wakes.next();
    this.finish();
  }

  private finish(): void {
    if (this.released) return;
    this.released = true;
    if (this.t) release(this.t);
  }

  private flush(): void {
    if (this.files.length === 0 || this.stopped) return;
    const buf = this.buf!;
    const message = { seq: this.posted++, used: this.used, buf: buf.buffer, files: this.files, flags: this.flags, chmod: this.chmod };
    this.inflight += this.used;
    this.buf = undefined;
    this.used = 0;
    this.files = [];
    this.t!.worker.postMessage(message, [buf.buffer as ArrayBuffer]);
  }

  private takeBuffer(): Buffer {
    const free = this.t?.free.pop();
    return free ? Buffer.from(free) : Buffer.allocUnsafeSlow(BATCH_BYTES);
  }

  private onAck(m: Ack): void {
    if (m.seq === undefined) return;
    this.acked++;
    this.inflight -= m.used ?? 0;
    if (m.buf && m.buf.byteLength === BATCH_BYTES && this.t!.free.length < 4) this.t!.free.push(m.buf);
    if (m.error) this.fail(errnoError(m.error));
    this.wakes.wakeAll();
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.stopped = true;
    this.buf = undefined;
    this.used = 0;
    this.files = [];
  }
}
