/**
 * The CLI's one test-only entry: seams a test preload installs before the CLI
 * starts (`node --require test/helpers/seams-preload.cjs bin/run.js …`), which
 * processIo() hands to the run as `io.testSeams` (an in-process test gives its
 * run's own there), read here, in the CLI layer, and only when the Context is
 * built. Core never looks for them and reads no test-only environment variable.
 *
 * Why this is safe: the seams live on a global symbol that only code running
 * inside this process can set. Whoever can pass `--import` (or NODE_OPTIONS) to
 * node already runs code of their choosing in the process, so honouring what
 * such code installs grants nothing new; an environment variable naming a
 * module to import would, to anyone who could set a variable. The same goes for
 * a CliIo: only code in this process builds one.
 */
import type { ContextOptions } from '../core/context.js';

const TEST_SEAMS_KEY = Symbol.for('yep-ext.test-seams');

export interface TestSeams {
  /** Crash-test pause points (ctx.checkpoint). */
  checkpoint?: ContextOptions['checkpoint'];
  http?: ContextOptions['http'];
  keychain?: ContextOptions['keychain'];
  clock?: ContextOptions['clock'];
  spawn?: ContextOptions['spawn'];
  git?: ContextOptions['git'];
  /** Shorter waits on other processes (the installer lock, `yolop --version`). */
  waits?: ContextOptions['waits'];
  /** Called with the pids of the servers doctor started before loading its code (doctor-early.ts). */
  earlyServer?: (pids: (number | undefined)[]) => void;
}

/** The seams a preload installed in this process, or undefined (every production run): processIo() reads them. */
export function installedSeams(): TestSeams | undefined {
  return (globalThis as Record<symbol, TestSeams | undefined>)[TEST_SEAMS_KEY];
}

/** The run's seams, or undefined (every production run). */
export function testSeams(io: { testSeams?: TestSeams | undefined }): TestSeams | undefined {
  return io.testSeams;
}

/** The run's seams as createContext options: only the keys that are set. */
export function seamOptions(io: { testSeams?: TestSeams | undefined }): Partial<ContextOptions> {
  const seams = testSeams(io);
  if (!seams) return {};
  const out: Partial<ContextOptions> = {};
  if (seams.checkpoint) out.checkpoint = seams.checkpoint;
  if (seams.http) out.http = seams.http;
  if (seams.keychain) out.keychain = seams.keychain;
  if (seams.clock) out.clock = seams.clock;
  if (seams.spawn) out.spawn = seams.spawn;
  if (seams.git) out.git = seams.git;
  if (seams.waits) out.waits = seams.waits;
  return out;
}
