/**
 * What a CLI run gets from the process around it: the environment, the working
 * directory, the three standard streams with their TTY-ness and width, and the
 * Ctrl-C hook. runCli (dispatch.ts) and everything below it read these, never
 * `process.*`, so a test can run a command in-process with its own (test/helpers/
 * in-process.ts); processIo() below is the real process's, which bin/run.js passes.
 */
import { fstatSync, type Stats, statSync, writeSync } from 'node:fs';
import { builtin } from '../core/builtin.js';
import { installedSeams, type TestSeams } from './test-seams.js';

export type Env = Record<string, string | undefined>;

/** An output stream as the CLI writes to it: whole strings, and whether it is a terminal. */
export interface OutStream {
  write(text: string): void;
  /** A terminal (decides colour, live progress and fitted tables). */
  readonly isTTY: boolean;
  /** Its width when it is a terminal (0 otherwise or unknown). */
  readonly columns: number;
  /** Colour on this stream: a terminal (or FORCE_COLOR), and NO_COLOR / TERM=dumb / FORCE_COLOR=0 / --no-color not set. */
  readonly color: boolean;
}

/** The input stream: a terminal (prompts), or bytes (set-secret --stdin). */
export interface InStream extends AsyncIterable<Buffer | string> {
  readonly isTTY: boolean;
}

export interface CliIo {
  env: Env;
  cwd: string;
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
  /**
   * The streams as Node streams, for the few libraries that want one (the @inquirer
   * prompts, the live progress display). Only on a terminal, so a test's io leaves them out.
   */
  ttyStreams?: () => { stdin: NodeJS.ReadStream; stderr: NodeJS.WriteStream };
  /** Call `listener` on each Ctrl-C (SIGINT) of this run; returns how to stop listening. */
  onInterrupt(listener: () => void): () => void;
  /** Test seams (test-seams.ts): a test preload's, or an in-process test's; never in production. */
  testSeams?: TestSeams;
}

/** Colour on a terminal unless the environment turns it off (node, npm and chalk read the same variables). */
export function colorAllowed(env: Env): boolean {
  return !('NO_COLOR' in env && env.NO_COLOR !== '') && env.TERM !== 'dumb' && !['0', 'false'].includes(env.FORCE_COLOR ?? '');
}

/**
 * FORCE_COLOR set to anything but 0 or false: colour even where the stream is no
 * terminal (a pager, a CI log), as node, npm and chalk read it; NO_COLOR still wins.
 */
function colorForced(env: Env): boolean {
  return env.FORCE_COLOR !== undefined && !['0', 'false'].includes(env.FORCE_COLOR);
}

/** `io` with no colour on stdout and stderr (`--no-color`); everything else as it was. */
export function colorOff(io: CliIo): CliIo {
  const plain = (s: OutStream): OutStream => Object.create(s, { color: { value: false } }) as OutStream;
  return { ...io, stdout: plain(io.stdout), stderr: plain(io.stderr) };
}

/** COLUMNS, when set to a positive integer: the user's (or the shell's) word on the width. */
export function columnsFromEnv(env: Env): number | undefined {
  const n = Number(env.COLUMNS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * Write to a file descriptor directly: touching process.stdout builds Node's
 * stream stack (several milliseconds of a quick command's start-up). Handles
 * partial writes and a non-blocking pipe (EAGAIN: wait and retry). A closed
 * pipe (EPIPE) is ignored, as Node ignores it for console.log; any other
 * failure (ENOSPC) is thrown, marked, and the run crashes with status 1
 * (docs/exit-codes.md) instead of reporting it as a yep-ext error.
 */
function writeFd(fd: number, text: string): void {
  let buf = Buffer.from(text, 'utf8');
  while (buf.length > 0) {
    try {
      buf = buf.subarray(writeSync(fd, buf));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw Object.assign(e as Error, { [OUTPUT_FAILED]: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
}

/** Set on an error from writing to stdout or stderr: the dispatcher lets it crash the run. */
export const OUTPUT_FAILED = Symbol.for('yep-ext.output-failed');

/**
 * Whether a file descriptor is a terminal. Only a character device can be one, which
 * one fstat tells; node:tty (which loads Node's net and stream modules) is loaded
 * only for a character device other than /dev/null: a pipe, a file or /dev/null (what
 * scripts, CI and service managers give; `< /dev/null` is the usual way to say "no input")
 * never loads it.
 */
function isTerminal(fd: number): boolean {
  try {
    const info = fstatSync(fd);
    if (!info.isCharacterDevice() || isDevNull(info)) return false;
  } catch {
    return false;
  }
  return builtin<typeof import('node:tty')>('node:tty').isatty(fd);
}

/** /dev/null's device number, asked once (null where there is none). */
let devNullRdev: number | null | undefined;

/** Whether a character device is the null device (the same device number as /dev/null). */
function isDevNull(info: Stats): boolean {
  if (devNullRdev === undefined) {
    const devNull = statSync('/dev/null', { throwIfNoEntry: false });
    devNullRdev = devNull?.isCharacterDevice() ? devNull.rdev : null;
  }
  return devNullRdev === info.rdev;
}

/** stdout or stderr of this process (no Node stream is built to ask). */
function fdStream(fd: 1 | 2, env: Env): OutStream {
  const tty = isTerminal(fd);
  const color = (tty || colorForced(env)) && colorAllowed(env);
  return {
    write: (text) => writeFd(fd, text),
    isTTY: tty,
    // process.stdout/stderr are built only on a terminal, where their width is needed.
    get columns() {
      return tty ? ((fd === 1 ? process.stdout : process.stderr).columns ?? 0) : 0;
    },
    color,
  };
}

/** This process's environment, directory and streams: what bin/run.js hands to runCli. */
export function processIo(): CliIo {
  const env = process.env;
  const stdinTty = isTerminal(0);
  const seams = installedSeams();
  return {
    ...(seams ? { testSeams: seams } : {}),
    env,
    cwd: process.cwd(),
    stdin: {
      isTTY: stdinTty,
      [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator](),
    },
    stdout: fdStream(1, env),
    stderr: fdStream(2, env),
    ttyStreams: () => ({ stdin: process.stdin, stderr: process.stderr }),
    // A lasting listener, not `once`: signal-exit (proper-lockfile's, registered when the
    // installer lock is taken) re-raises a SIGINT when it finds itself the only listener,
    // and a `once` listener has removed itself by then: the process would die of the signal.
    onInterrupt(listener) {
      process.on('SIGINT', listener);
      return () => process.removeListener('SIGINT', listener);
    },
  };
}
