/**
 * The Context a CLI run gets. Shared by BaseCommand and the oclif-free fast path
 * (src/cli/fast-path.ts) so both build exactly the same one.
 */
import { isatty } from 'node:tty';
import { createContext, type Context } from '../core/context.js';
import { YepError } from '../core/errors.js';
import { parseTimeout } from '../core/text/duration.js';
import { stderrLogger } from './stderr-logger.js';
import { seamOptions, testSeams } from './test-seams.js';

export interface CliContextOptions {
  index?: string | undefined;
  /** --yes: never prompt. */
  yes?: boolean;
  /** --json: never prompt (stdout is for the JSON document). */
  json: boolean;
  /** Aborted on the first Ctrl-C. */
  abort: AbortController;
  /** --quiet: no progress, no info lines (warnings and errors only). */
  quiet?: boolean;
  /** --verbose: request-level detail (and line-per-step logs without a terminal). */
  verbose?: boolean;
  /** --timeout as typed: the total a network command waits on a server (docs/configuration.md). */
  timeout?: string | undefined;
}

/**
 * Prompts need stdin and stderr TTYs, and neither --yes nor --json. Asked with
 * isatty(): the same answer as process.stdin.isTTY / process.stderr.isTTY
 * without building those streams (Node's net and stream stack, several ms of
 * every command's start-up).
 */
export function makeCliContext(options: CliContextOptions): Context {
  const interactive = !options.yes && isatty(0) && isatty(2);
  // A bad --timeout is a usage error before anything is read or sent.
  const totalMs = options.timeout !== undefined ? parseTimeout(options.timeout) : undefined;
  const seams = seamOptions();
  const ctx = createContext({
    // Test seams first: nothing below can be replaced by them (src/cli/test-seams.ts).
    ...seams,
    ...(totalMs !== undefined ? { http: { ...seams.http, limits: { ...seams.http?.limits, totalMs } } } : {}),
    env: process.env,
    log: stderrLogger({ debug: Boolean(process.env.YEP_EXT_DEBUG), quiet: Boolean(options.quiet), verbose: Boolean(options.verbose) }),
    interactive: interactive && !options.json,
    ...(options.index ? { indexUrl: options.index } : {}),
    signal: options.abort.signal,
  });
  process.once('SIGINT', () => {
    options.abort.abort(new YepError('E_INTERRUPTED', 'Interrupted.'));
  });
  return ctx;
}

/** The crash-test pause point hook, for a command that builds no Context (`new`). */
export function cliCheckpoint(): Context['checkpoint'] {
  return testSeams()?.checkpoint;
}
