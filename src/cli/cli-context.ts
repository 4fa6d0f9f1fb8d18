/**
 * The Context a CLI run gets. Shared by BaseCommand and the oclif-free fast path
 * (src/cli/fast-path.ts) so both build exactly the same one.
 */
import { isatty } from 'node:tty';
import { createContext, type Context } from '../core/context.js';
import type { CooldownOptions } from '../core/sources/crates-io/cooldown-options.js';
import { ERROR_CODES, YepError } from '../core/errors.js';
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
  /** --git-mirror (wins over YEP_EXT_GIT_MIRROR, which createContext reads). */
  gitMirror?: string | undefined;
  /** --build (true) / --no-build (false) / neither. */
  build?: boolean | undefined;
  /** --allow-build: consent to building a crate from source in this run. */
  allowBuild?: boolean | undefined;
  /** The yes/no question a build from source is asked with at a terminal (prompts.ts `confirm`, passed by the commands that may build). */
  confirm?: ((question: string) => Promise<boolean>) | undefined;
  /** --min-age / --allow-fresh of the commands that resolve versions. */
  cooldown?: CooldownOptions | undefined;
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
  const interactive = !options.yes && isatty(0) && isatty(2) && !options.json;
  // A bad --timeout is a usage error before anything is read or sent.
  const totalMs = options.timeout !== undefined ? parseTimeout(options.timeout) : undefined;
  const seams = seamOptions();
  const ctx = createContext({
    // Test seams first: nothing below can be replaced by them (src/cli/test-seams.ts).
    ...seams,
    ...(totalMs !== undefined ? { http: { ...seams.http, limits: { ...seams.http?.limits, totalMs } } } : {}),
    env: process.env,
    log: stderrLogger({ debug: Boolean(process.env.YEP_EXT_DEBUG), quiet: Boolean(options.quiet), verbose: Boolean(options.verbose) }),
    interactive,
    ...(options.index ? { indexUrl: options.index } : {}),
    signal: options.abort.signal,
    ...(options.gitMirror !== undefined ? { gitMirror: options.gitMirror } : {}),
    packageCode: {
      build: options.build === undefined ? 'auto' : options.build ? 'force' : 'never',
      // --build asks for a build by name: that is the opt-in. --yes is not (docs/binaries.md).
      allowBuild: options.allowBuild === true || options.build === true,
      ...(interactive && options.confirm ? { confirm: options.confirm } : {}),
    },
    ...(options.cooldown ? { cooldown: options.cooldown } : {}),
  });
  onCtrlC(options.abort);
  return ctx;
}

/**
 * Ctrl-C: the first stops the run (its signal aborts: nothing new starts, what is in flight
 * rolls back, exit 130); a second quits at once (exit 130; an interrupted change is finished
 * or undone by the next command, docs/reliability.md). A lasting listener, not `once`:
 * signal-exit (proper-lockfile's, registered when the installer lock is taken) re-raises a
 * SIGINT when it finds itself the only listener, and a `once` listener registered before it
 * has removed itself by then: the process died of the signal instead of stopping.
 */
function onCtrlC(abort: AbortController): void {
  process.on('SIGINT', () => {
    if (abort.signal.aborted) process.exit(ERROR_CODES.E_INTERRUPTED);
    abort.abort(new YepError('E_INTERRUPTED', 'Interrupted.'));
  });
}

/** The crash-test pause point hook, for a command that builds no Context (`new`). */
export function cliCheckpoint(): Context['checkpoint'] {
  return testSeams()?.checkpoint;
}
