/**
 * What a command is: its words for people (summary, description, examples), its
 * arguments and flags (oclif's own Args and Flags, so oclif's parser reads them
 * and its help and manifest show them), and its handler. Each src/commands file
 * exports one, the table (command-table.ts) lists them, and the dispatcher
 * (dispatch.ts) is the one road from argv to a handler.
 *
 * A handler imports what it needs inside its body (`await import(...)`): the table
 * is loaded on every run, a handler's code only when its command runs.
 */
import type { Interfaces } from '@oclif/core';
import type { Context } from '../core/context.js';
import type { YepError } from '../core/errors.js';
import type { CliIo } from './cli-io.js';

/** The parsed arguments a handler gets: what oclif's parser returned for this command's definition. */
export interface Parsed<F = Record<string, unknown>, A = Record<string, string | undefined>> {
  /** The command's own flags and the global ones (common-flags.ts globalFlags), which every command has. */
  flags: F & { json: boolean | undefined; quiet: boolean | undefined; verbose: boolean | undefined };
  args: A;
  /** The arguments in their order on the command line (for commands that take a list: strict false). */
  argv: string[];
}

/** A handler's way out: lines, the --json document, the Context, and the process around it. */
export interface CommandIo {
  /** --json: results are the returned value; log and logToStderr print nothing. */
  json: boolean;
  /** A result line on stdout (clears the live progress display first). Nothing with --json. */
  log(message: string): void;
  /** A message line on stderr (clears the live progress display first). Nothing with --json. */
  logToStderr(message: string): void;
  /** Print a JSON document on stdout now (the answer of a command that then exits non-zero). */
  logJson(value: unknown): void;
  /**
   * The run's Context, built on first call from the parsed flags (--index, --yes,
   * --quiet, --verbose, --git-mirror, --min-age, --allow-fresh) and the environment:
   * the same object on every call, never changed afterwards (cli-context.ts).
   */
  context(): Context;
  /** The environment, directory and streams of this run. */
  io: CliIo;
}

/** Thrown by a handler that has said everything it had to and ends with this exit status. */
export class ExitStatus extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export interface CommandDefinition<F extends Interfaces.FlagInput = Interfaces.FlagInput, A extends Interfaces.ArgInput = Interfaces.ArgInput> {
  summary: string;
  description?: string;
  examples: string[];
  aliases?: string[];
  /** false: any number of arguments (argv). */
  strict?: boolean;
  args?: A;
  flags?: F;
  /** A parse error in this command's own words, or undefined for the usual wording (usage-errors.ts). */
  parseError?: (err: Error) => YepError | undefined;
  /** Runs the command; the returned value is the --json document. */
  run(io: CommandIo, parsed: Parsed<Interfaces.InferredFlags<F>, Interfaces.InferredArgs<A>>): Promise<unknown>;
}

/** Typed identity: infers the flags and arguments a handler receives from their definitions. */
export function defineCommand<F extends Interfaces.FlagInput = Record<never, never>, A extends Interfaces.ArgInput = Record<never, never>>(
  def: CommandDefinition<F, A>,
): CommandDefinition {
  return def as unknown as CommandDefinition;
}
