/**
 * The Context of a CLI run, built once from the command's parsed flags and the
 * run's io (the environment, the terminals): the dispatcher hands it to the
 * handler through CommandIo.context(), and nothing changes it afterwards. A flag
 * that reaches core travels here: a command that declares --index, --yes,
 * --quiet/--verbose, --git-mirror, --min-age or --allow-fresh gets it in its
 * Context, without a line of its own.
 */
import { createContext, type Context } from '../core/context.js';
import { YepError } from '../core/errors.js';
import type { CooldownOptions } from '../core/sources/crates-io/cooldown-options.js';
import { GIT_MIRROR_ENV } from '../core/sources/mirror/git-mirror-url.js';
import type { CliIo } from './cli-io.js';
import { stderrLogger } from './stderr-logger.js';
import { seamOptions, testSeams } from './test-seams.js';

/** The parsed flags the Context is made of (each present only for the commands that declare it). */
export interface ContextFlags {
  json?: boolean | undefined;
  index?: string | undefined;
  yes?: boolean | undefined;
  quiet?: boolean | undefined;
  verbose?: boolean | undefined;
  'git-mirror'?: string | undefined;
  'min-age'?: string | undefined;
  'allow-fresh'?: boolean | undefined;
}

/** --min-age and --allow-fresh as the run's cooldown, or undefined when the command has neither. */
function cooldownOf(flags: ContextFlags): CooldownOptions | undefined {
  if (flags['min-age'] === undefined && flags['allow-fresh'] === undefined) return undefined;
  return { ...(flags['min-age'] !== undefined ? { minAge: flags['min-age'] } : {}), ...(flags['allow-fresh'] ? { allowFresh: true } : {}) };
}

/**
 * The Context for these flags, frozen: what a run needs is set here, and a command
 * that tried to change it afterwards would fail at once (an operation that needs
 * another view derives a copy, as policy-gate.ts does for the policy's cooldown).
 * Prompts need stdin and stderr terminals, and neither --yes nor --json (stdout is
 * then for the JSON document). The first Ctrl-C aborts `abort` (its handler is this
 * run's: io.onInterrupt).
 */
export function makeCliContext(io: CliIo, flags: ContextFlags, abort: AbortController): Context {
  const cooldown = cooldownOf(flags);
  const ctx = createContext({
    // Test seams first: nothing below can be replaced by them (src/cli/test-seams.ts).
    ...seamOptions(),
    env: flags['git-mirror'] !== undefined ? { ...io.env, [GIT_MIRROR_ENV]: flags['git-mirror'] } : io.env,
    log: stderrLogger({ debug: Boolean(io.env.YEP_EXT_DEBUG), quiet: Boolean(flags.quiet), verbose: Boolean(flags.verbose), out: io.stderr }),
    interactive: !flags.yes && !flags.json && io.stdin.isTTY && io.stderr.isTTY,
    ...(flags.index ? { indexUrl: flags.index } : {}),
    signal: abort.signal,
    ...(cooldown ? { cooldown } : {}),
  });
  io.onInterrupt(() => abort.abort(new YepError('E_INTERRUPTED', 'Interrupted.')));
  return Object.freeze(ctx);
}

/** The crash-test pause point hook, for a command that builds no Context (`new`). */
export function cliCheckpoint(): Context['checkpoint'] {
  return testSeams()?.checkpoint;
}
