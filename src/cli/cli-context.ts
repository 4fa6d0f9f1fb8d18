/**
 * The Context of a CLI run, built once from the command's parsed flags and the
 * run's io (the environment, the terminals): the dispatcher hands it to the
 * handler through CommandIo.context(), and nothing changes it afterwards. A flag
 * that reaches core travels here: a command that declares --index, --yes,
 * --quiet/--verbose, --git-mirror, --min-age, --allow-fresh, --timeout, --build
 * or --allow-build gets it in its Context, without a line of its own. Only the
 * shared definitions (common-flags.ts CONTEXT_FLAGS) do: a command's own flag of
 * the same name (doctor's --timeout) is its own business (contextFlagsOf).
 */
import type { Interfaces } from '@oclif/core';
import { createContext, type Context } from '../core/context.js';
import { ERROR_CODES, YepError } from '../core/errors.js';
import { parseDuration, parseTimeout } from '../core/text/duration.js';
import type { CooldownOptions } from '../core/sources/crates-io/cooldown-options.js';
import type { CliIo } from './cli-io.js';
import { CONTEXT_FLAGS } from './common-flags.js';
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
  /** A duration as typed: the total a network command waits on a server (docs/configuration.md). */
  timeout?: string | undefined;
  build?: boolean | undefined;
  'allow-build'?: boolean | undefined;
}

/**
 * The parsed flags that feed the Context: the global ones (--json, -q, -v), --yes, and each flag of CONTEXT_FLAGS
 * that the command declares with that very definition (not merely under that name).
 */
export function contextFlagsOf(defs: Interfaces.FlagInput | undefined, flags: Record<string, unknown>): ContextFlags {
  const out: Record<string, unknown> = {};
  // The global flags (every command has them) and --yes, by name.
  for (const name of ['json', 'quiet', 'verbose', 'yes'] as const) if (flags[name] !== undefined) out[name] = flags[name];
  for (const [name, def] of Object.entries(CONTEXT_FLAGS)) if (defs?.[name] === def && flags[name] !== undefined) out[name] = flags[name];
  return out as ContextFlags;
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
  // A bad --min-age or --timeout is a usage error before anything is read or sent
  // (resolution reads --min-age only when a crate is resolved: a typo beside a path would pass).
  if (flags['min-age'] !== undefined) parseDuration(flags['min-age'], '--min-age');
  const totalMs = flags.timeout !== undefined ? parseTimeout(flags.timeout) : undefined;
  const cooldown = cooldownOf(flags);
  const interactive = !flags.yes && !flags.json && io.stdin.isTTY && io.stderr.isTTY;
  const seams = seamOptions(io);
  const ctx = createContext({
    // Test seams first: nothing below can be replaced by them (src/cli/test-seams.ts).
    ...seams,
    ...(totalMs !== undefined ? { http: { ...seams.http, limits: { ...seams.http?.limits, totalMs } } } : {}),
    // A frozen copy: a command cannot carry a flag to core by writing a variable (the process's own environment stays as it is).
    env: Object.freeze({ ...io.env }),
    cwd: io.cwd,
    log: stderrLogger({ debug: Boolean(io.env.YEP_EXT_DEBUG), quiet: Boolean(flags.quiet), verbose: Boolean(flags.verbose), out: io.stderr }),
    interactive,
    ...(flags.index ? { indexUrl: flags.index } : {}),
    signal: abort.signal,
    ...(flags['git-mirror'] !== undefined ? { gitMirror: flags['git-mirror'] } : {}),
    packageCode: {
      build: flags.build === undefined ? 'auto' : flags.build ? 'force' : 'never',
      // --build asks for a build by name: that is the opt-in. --yes is not (docs/binaries.md).
      allowBuild: flags['allow-build'] === true || flags.build === true,
      // install --frozen never asks (operations/frozen.ts drops the question: it holds for library callers too).
      ...(interactive ? { confirm: async (question: string) => (await import('./prompts.js')).confirm(io, question) } : {}),
    },
    ...(cooldown ? { cooldown: Object.freeze(cooldown) } : {}),
  });
  onCtrlC(io, abort);
  for (const part of [ctx.packageCode, ctx.http.limits, ctx.http, ctx.waits, ctx.keychain]) Object.freeze(part);
  return Object.freeze(ctx);
}

/**
 * Ctrl-C: the first stops the run (its signal aborts: nothing new starts, what is in
 * flight rolls back, exit 130); a second quits at once (exit 130; an interrupted change
 * is finished or undone by the next command, docs/reliability.md).
 */
function onCtrlC(io: CliIo, abort: AbortController): void {
  io.onInterrupt(() => {
    if (abort.signal.aborted) process.exit(ERROR_CODES.E_INTERRUPTED);
    abort.abort(new YepError('E_INTERRUPTED', 'Interrupted.'));
  });
}

/** The crash-test pause point hook, for a command that builds no Context (`new`). */
export function cliCheckpoint(io: CliIo): Context['checkpoint'] {
  return testSeams(io)?.checkpoint;
}
