/**
 * The tar state machine behind unpackArchive: fed inflated chunks in order (any sizes),
 * it decodes headers strictly, applies the per-entry policy (unpack-policy's EntryRules,
 * which every archive format shares) and writes regular files
 * and directories under `into` as it goes: directories and big files with
 * synchronous calls, and (with `asyncWrites(true)`, as unpackCrate does) files up
 * to 256 KiB gathered into one buffer each and created on the thread pool by a
 * FileWriter (bounded queue and descriptors; callbacks, not one promise per file,
 * which is what makes node-tar's async extraction several times slower than GNU tar), or
 * (`asyncWrites(true, true)`) on one worker thread by a WorkerWriter, in batches.
 * Directories are always made here, before any file under them is handed over, so
 * a file written here (a big one, or the writer's queue was full) never waits for
 * the other thread.
 * Every policy decision is still made here, in archive order, before a file is
 * handed to the pool. Nothing else is buffered beyond one header, one extended
 * header (<= 64 KiB) and the chunk at hand.
 */
import { chmodSync, closeSync, constants as fsConstants, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import type { ContentHashStream } from '../package/content-hash-stream.js';
import { FileWriter } from './file-writer.js';
import { WorkerWriter } from './worker-writer.js';
import { sanitize } from '../text/sanitize.js';
import {
  BLOCK,
  TarFormatError,
  decodeHeader,
  decodePath,
  describeType,
  isZeroBlock,
  parseLongName,
  parsePaxRecords,
  parsePaxSize,
  type TarHeader,
} from './tar-header.js';
import { EntryRules, PolicyViolation, normalizeMode, type ExtractLimits, type OtherKinds } from './unpack-policy.js';

export type { ExtractLimits, OtherKinds };

/** Hard and symbolic links, character and block devices, FIFOs: a header and no data of their own. */
const BODYLESS = new Set(['1', '2', '3', '4', '6']);

/** Which files of the archive are written (all when absent): the others are checked like them, then read past. */
export type KeepFile = (rel: string, size: number) => boolean;

const MiB = 1024 * 1024;
/** A PAX header carries a path and a few numbers; anything bigger is not for us. */
const MAX_PAX_BYTES = 64 * 1024;
/** Extended headers allowed in front of one entry (PAX + GNU long name is 2). */
const MAX_META_PER_ENTRY = 4;
/** Files up to this size are gathered and created on the thread pool (FileWriter) when writes are async. */
const POOLED_FILE_MAX = 256 * 1024;
const EMPTY = Buffer.alloc(0);
/** Zero padding tolerated after the end-of-archive marker (GNU tar pads to 10 KiB). */
const MAX_TRAILING_BYTES = MiB;

/** An archive path, quoted and with control characters neutralised, for messages. */
export function showPath(path: string): string {
  return JSON.stringify(sanitize(path, { max: 200 }));
}

enum State {
  Header,
  FileData,
  Meta,
  Skip,
  End,
}

const OPEN_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0);

function readUmask(): number {
  try {
    return process.umask();
  } catch {
    return 0o777; // unknown: always chmod
  }
}

/** The tar state machine: fed inflated chunks in order, it writes as it goes. */
export class TarExtractor {
  private state = State.Header;
  private readonly header = Buffer.alloc(BLOCK);
  private headerFill = 0;
  private fd = -1;
  /** The file open on `fd` is bigger than the pool takes (not a small one written here because the queue was full). */
  private bigFile = false;
  /** The current file's bytes, gathered for the FileWriter (async mode, small files). */
  private fileBuf: Buffer | undefined;
  private fileFill = 0;
  private filePath = '';
  private fileMode = 0;
  private writer: FileWriter | WorkerWriter | undefined;
  private pooled = false;
  private remaining = 0; // data bytes left in the current file or meta body
  private skip = 0; // bytes to discard (padding, ignored data)
  private meta: Buffer = Buffer.alloc(0);
  private metaFill = 0;
  private metaType = '';
  private metaCount = 0;
  private paxPath: Buffer | undefined;
  private paxSize: number | undefined;
  private longName: Buffer | undefined;
  private trailing = 0;
  private sawBlock = false;
  private readonly rules: EntryRules;
  /** chmod after create only when the umask would strip bits we want. */
  private readonly chmodFiles: boolean;
  private readonly chmodDirs: boolean;
  /** The entry being processed and the one before it, for messages. */
  current: string | undefined;
  last: string | undefined;

  constructor(
    private readonly into: string,
    /** The directory every entry must be under (stripped), or '' for none (unpack-policy.ts). */
    private readonly root: string,
    private readonly limits: ExtractLimits,
    /** Fed every regular file as it is written: the content hash without a second read of the tree. */
    private readonly hasher?: ContentHashStream,
    private readonly keep?: KeepFile,
    otherKinds: OtherKinds = 'refuse',
  ) {
    this.rules = new EntryRules(root, limits, otherKinds);
    const umask = readUmask();
    this.chmodFiles = (umask & 0o755) !== 0;
    this.chmodDirs = this.chmodFiles;
    if (this.chmodDirs) chmodSync(into, 0o755);
  }

  /**
   * Create small files on the thread pool from now on (unpackCrate does; the default,
   * and `false`, writes every file with sync calls before write() returns). With async
   * writes the caller must `await drain()` before `finish()`, and `await abandon()`
   * before removing the tree.
   */
  asyncWrites(on: boolean, worker = false): void {
    if (on) this.writer ??= worker ? new WorkerWriter(this.chmodFiles) : new FileWriter(this.chmodFiles);
    this.pooled = on;
  }

  /**
   * In the data of a file written with sync calls: nothing goes to the pool until it
   * ends. With `bigOnly`, only a file bigger than the pool takes counts, not a small
   * one written here because the queue was full (see unpack.ts: on a busy machine the
   * loop asks this way, so the queue is not flooded with the rest of a read).
   */
  inSyncFile(bigOnly = false): boolean {
    return this.fd !== -1 && (!bigOnly || this.bigFile);
  }

  /** Back-pressure for the unpack loop: resolves when the pool's queue has room. */
  room(): Promise<void> {
    // Between files, what is batched goes to the worker now rather than after more inflating.
    if (this.fileBuf === undefined) this.writer?.flushIdle();
    return this.writer?.room() ?? Promise.resolve();
  }

  /** Every file handed to the pool is written and closed; throws the first write error. */
  async drain(): Promise<void> {
    await this.writer?.drain();
  }

  write(chunk: Buffer): void {
    const len = chunk.length;
    let pos = 0;
    while (pos < len) {
      switch (this.state) {
        case State.Header: {
          if (this.headerFill === 0 && len - pos >= BLOCK) {
            this.onHeader(chunk, pos);
            pos += BLOCK;
          } else {
            const n = Math.min(BLOCK - this.headerFill, len - pos);
            chunk.copy(this.header, this.headerFill, pos, pos + n);
            this.headerFill += n;
            pos += n;
            if (this.headerFill === BLOCK) {
              this.headerFill = 0;
              this.onHeader(this.header, 0);
            }
          }
          break;
        }
        case State.FileData: {
          const n = Math.min(this.remaining, len - pos);
          this.hasher?.data(chunk, pos, pos + n);
          const buf = this.fileBuf;
          if (buf !== undefined) {
            chunk.copy(buf, this.fileFill, pos, pos + n);
            this.fileFill += n;
            pos += n;
            this.remaining -= n;
            if (this.remaining === 0) {
              this.fileBuf = undefined;
              this.writer!.add(this.filePath, OPEN_FLAGS, this.fileMode, buf);
              this.state = this.skip > 0 ? State.Skip : State.Header;
            }
            break;
          }
          let done = 0;
          while (done < n) done += writeSync(this.fd, chunk, pos + done, n - done);
          pos += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            closeSync(this.fd);
            this.fd = -1;
            this.state = this.skip > 0 ? State.Skip : State.Header;
          }
          break;
        }
        case State.Meta: {
          const n = Math.min(this.remaining, len - pos);
          chunk.copy(this.meta, this.metaFill, pos, pos + n);
          this.metaFill += n;
          pos += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            this.onMeta();
            this.state = this.skip > 0 ? State.Skip : State.Header;
          }
          break;
        }
        case State.Skip: {
          const n = Math.min(this.skip, len - pos);
          pos += n;
          this.skip -= n;
          if (this.skip === 0) this.state = State.Header;
          break;
        }
        case State.End: {
          // After the end-of-archive marker only zero padding may follow: a reader
          // that ignores the marker must not find entries we never looked at.
          for (let i = pos; i < len; i++) {
            if (chunk[i] !== 0) {
              throw new TarFormatError('after-end', 'data follows the end-of-archive marker');
            }
          }
          this.trailing += len - pos;
          if (this.trailing > MAX_TRAILING_BYTES) throw new TarFormatError('after-end', 'more than 1 MiB of padding follows the end-of-archive marker');
          pos = len;
          break;
        }
      }
    }
  }

  /** The whole stream has been read: it must have ended cleanly and held a file. */
  finish(): void {
    if (this.state === State.Header && this.headerFill === 0 && !this.sawBlock) {
      throw new TarFormatError('no-content', `no installable content: the archive is empty`);
    }
    if (this.state !== State.End) {
      const between = this.state === State.Header && this.headerFill === 0;
      throw new TarFormatError(
        'truncated',
        between ? 'the archive is truncated (no end-of-archive marker)' : 'the archive is truncated in the middle of an entry',
      );
    }
    if (this.rules.files === 0) {
      throw new TarFormatError('no-content', `no installable content: the archive has no regular file${this.root === '' ? '' : ` under ${this.root}/`}`);
    }
  }

  /** Release the open file, if any, and wait for the pool's writes in flight, before the caller removes the tree. */
  async abandon(): Promise<void> {
    this.fileBuf = undefined;
    if (this.fd !== -1) {
      try {
        closeSync(this.fd);
      } catch {
        // already failing; the directory is removed next
      }
      this.fd = -1;
    }
    await this.writer?.settle();
  }

  /** Where in the archive a structural error was found. */
  where(): string {
    if (this.current !== undefined) return ` (in entry ${showPath(this.current)})`;
    if (this.last !== undefined) return ` (after entry ${showPath(this.last)})`;
    return '';
  }

  private onHeader(buf: Buffer, off: number): void {
    // A file the pool failed to create stops the archive here, as a sync write would have.
    this.writer?.check();
    this.sawBlock = true;
    if (this.current !== undefined) {
      this.last = this.current;
      this.current = undefined;
    }
    if (isZeroBlock(buf, off)) {
      if (this.metaCount > 0) throw new TarFormatError('dangling-header', 'an extended header is not followed by an entry');
      this.state = State.End;
      return;
    }
    const h = decodeHeader(buf, off);
    if (h.type === 'x' || h.type === 'g' || h.type === 'L') {
      this.startMeta(h);
      return;
    }

    const { path, size } = this.takeEntry(h);

    const isDir = h.type === '5';
    if (!isDir && h.type !== '0') {
      this.rules.otherKind(path, `a ${describeType(h.type)}`, BODYLESS.has(h.type));
      this.skip = size + ((BLOCK - (size % BLOCK)) % BLOCK);
      this.state = this.skip > 0 ? State.Skip : State.Header;
      return;
    }
    if (h.linkname.length > 0) throw new PolicyViolation('link-target', path, 'it carries a link target, which only links have');

    if (isDir) {
      // Directory entries have no body; a size would make readers disagree on where the next header is.
      if (size !== 0) throw new PolicyViolation('dir-size', path, `it is a directory with ${size} bytes of data`);
      for (const rel of this.rules.directory(path)) this.makeDir(rel);
      return;
    }

    const placed = this.rules.file(path, size);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (placed) for (const dir of placed.dirs) this.makeDir(dir);
    if (!placed || (this.keep !== undefined && !this.keep(placed.rel, size))) {
      this.skip = size + pad;
      this.state = this.skip > 0 ? State.Skip : State.Header;
      return;
    }
    this.startFile(placed.rel, size, pad, normalizeMode(h.mode, false));
  }

  /** The entry's path and size, from its header and the extended headers before it (which it uses up). */
  private takeEntry(h: TarHeader): { path: string; size: number } {
    const nameBytes = this.paxPath ?? this.longName ?? h.name;
    if (this.paxPath && this.longName && !this.paxPath.equals(this.longName)) {
      throw new TarFormatError('name-conflict', 'a PAX path and a GNU long name give the entry two different names');
    }
    const path = decodePath(nameBytes);
    this.current = path;
    let size = h.size;
    if (this.paxSize !== undefined) {
      // Readers disagree on which size wins; a real writer never makes them differ.
      if (h.size !== 0 && h.size !== this.paxSize) throw new TarFormatError('size-conflict', 'the PAX size and the header size differ');
      size = this.paxSize;
    }
    this.paxPath = undefined;
    this.paxSize = undefined;
    this.longName = undefined;
    this.metaCount = 0;
    return { path, size };
  }

  /** Create the regular file `rel` and get ready for its body: on the pool when it is small and there is room, else with sync calls. */
  private startFile(rel: string, size: number, pad: number, mode: number): void {
    if (this.pooled && size <= POOLED_FILE_MAX && !this.writer!.full()) {
      this.hasher?.beginFile(rel, size);
      if (size === 0) {
        this.writer!.add(`${this.into}/${rel}`, OPEN_FLAGS, mode, EMPTY);
        this.state = State.Header;
        return;
      }
      this.fileBuf = this.writer!.buffer(size);
      this.fileFill = 0;
      this.filePath = `${this.into}/${rel}`;
      this.fileMode = mode;
      this.remaining = size;
      this.skip = pad;
      this.state = State.FileData;
      return;
    }
    const fd = openSync(`${this.into}/${rel}`, OPEN_FLAGS, mode);
    if (this.chmodFiles) {
      try {
        fchmodSync(fd, mode);
      } catch (e) {
        closeSync(fd);
        throw e;
      }
    }
    this.hasher?.beginFile(rel, size);
    if (size === 0) {
      closeSync(fd);
      this.state = State.Header;
      return;
    }
    this.fd = fd;
    this.bigFile = size > POOLED_FILE_MAX;
    this.remaining = size;
    this.skip = pad;
    this.state = State.FileData;
  }

  private makeDir(rel: string): void {
    const dir = `${this.into}/${rel}`;
    mkdirSync(dir, { mode: 0o755 });
    if (this.chmodDirs) chmodSync(dir, 0o755);
  }

  private startMeta(h: TarHeader): void {
    if (++this.metaCount > MAX_META_PER_ENTRY) throw new TarFormatError('too-many-headers', 'too many extended headers in a row');
    const cap = h.type === 'L' ? this.limits.maxPathBytes + 1 : MAX_PAX_BYTES;
    if (h.size > cap) {
      throw h.type === 'L'
        ? new TarFormatError('path-length', `a GNU long name record of ${h.size} bytes exceeds the path limit (${this.limits.maxPathBytes} bytes)`)
        : new TarFormatError('pax-too-large', `a PAX header of ${h.size} bytes (at most ${MAX_PAX_BYTES} are accepted)`);
    }
    this.metaType = h.type;
    this.meta = Buffer.allocUnsafe(h.size);
    this.metaFill = 0;
    this.remaining = h.size;
    this.skip = (BLOCK - (h.size % BLOCK)) % BLOCK;
    if (h.size === 0) {
      this.onMeta();
      this.state = State.Header;
    } else {
      this.state = State.Meta;
    }
  }

  private onMeta(): void {
    const data = this.meta;
    this.meta = Buffer.alloc(0);
    if (this.metaType === 'L') {
      this.longName = parseLongName(data);
      return;
    }
    const records = parsePaxRecords(data);
    const global = this.metaType === 'g';
    for (const [key, value] of records) {
      if (key.startsWith('GNU.sparse.')) throw new TarFormatError('sparse', `a PAX header declares a sparse file (${key})`);
      if (key === 'linkpath') throw new TarFormatError('link-target', 'a PAX header carries a link target');
      if (key === 'path' || key === 'size') {
        // A global header would rename or resize every later entry: no real crate does that.
        if (global) throw new TarFormatError('pax-global', `a PAX global header sets "${key}"`);
        if (key === 'path') this.paxPath = value;
        else this.paxSize = parsePaxSize(value);
      }
      // Everything else (mtime, uid, uname, comment, xattrs...) is not applied.
    }
  }
}
