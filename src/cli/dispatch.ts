/**
 * The one road from argv to a command: `runCli(argv, io)` finds the command in
 * the table (command-table.ts: ids, aliases, `topic command` words), parses its
 * arguments with oclif's own parser and the command's own definitions, builds
 * its Context on first use (cli-context.ts), loads and runs its handler, prints
 * the --json document, and reports a failure as every yep-ext error is reported
 * (report-error.ts). It returns the exit status and never exits the process:
 * bin/run.js does that, and tests call it in-process (test/helpers/in-process.ts).
 *
 * Help (`help`, `--help`, `-h`, no arguments, a bare topic) is oclif's, loaded
 * only then (help.ts); so is everything about an unknown command (unknown-command.ts).
 */
import { parse } from '@oclif/core/parser';
import type { Interfaces } from '@oclif/core';
import type { Context } from '../core/context.js';
import { isYepError, type YepError } from '../core/errors.js';
import { redactUrls, redactValue } from '../core/text/redact.js';
import { VERSION } from '../core/version.js';
import { colorOff, OUTPUT_FAILED, type CliIo } from './cli-io.js';
import { ExitStatus, type CommandDefinition, type CommandIo, type Parsed } from './command.js';
import { callableIds, findCommand, topicNames } from './command-table.js';
import { contextFlagsOf, makeCliContext } from './cli-context.js';
import { globalFlags } from './common-flags.js';
import { writeError } from './report-error.js';
import { clearStatus } from './status-area.js';
import { setStdoutStyle } from './style.js';

/** `yep-ext --version`'s line (bin/run.js answers the plain `--version` itself, with the same words). */
function versionLine(): string {
  return `yep-ext/${VERSION} ${process.platform}-${process.arch} node-${process.version}`;
}

/** Help is asked for: no arguments, or --help / -h before any `--` (oclif's rule). */
function wantsHelp(argv: readonly string[]): boolean {
  if (argv.length === 0) return true;
  for (const a of argv) {
    if (a === '--help' || a === '-h') return true;
    if (a === '--') return false;
  }
  return false;
}

/**
 * The command id in argv and the arguments after it, as oclif reads `topic command`
 * words: each word that extends a known id (or the start of one) is taken; a flag,
 * a `key=value`, or any word after a command that takes arguments ends the id; an
 * unknown word is taken too (`instal lsp` → `instal:lsp`, which is then unknown).
 */
function splitCommand(argv: readonly string[]): [id: string, rest: string[]] {
  if (argv.length === 0) return ['', []];
  if (argv.length === 1 || argv[0]!.includes(':')) return [argv[0]!, argv.slice(1)];
  const usable = new Set(callableIds().flatMap((id) => id.split(':').map((_, i, a) => a.slice(0, i + 1).join(':'))));
  const words: string[] = [];
  const join = (extra?: string): string => (extra === undefined ? words : [...words, extra]).join(':');
  const takesArgs = (): boolean => {
    const found = words.length > 0 ? findCommand(join()) : undefined;
    return Boolean(found && (found.def.strict === false || Object.keys(found.def.args ?? {}).length > 0));
  };
  for (const a of argv) {
    if (usable.has(join(a))) words.push(a);
    else if (a.includes('=') || a.startsWith('-') || takesArgs()) break;
    else words.push(a);
  }
  if (words.length === 0) return [argv[0]!, argv.slice(1)];
  return [join(), argv.slice(words.length)];
}

/** True when `flag` comes before any `--` in argv (as oclif's own jsonEnabled decides for --json). */
function flagBeforeDashDash(argv: readonly string[], flag: string): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes(flag);
}

/**
 * --json read before parsing: here, not beside the unknown-command error, so that a command that
 * runs does not load that module and the edit-distance library it uses.
 */
const jsonRequested = (argv: readonly string[]): boolean => flagBeforeDashDash(argv, '--json');

/** --no-color before any `--`: taken before parsing, so an error of the parse itself is plain too. */
const noColorRequested = (argv: readonly string[]): boolean => flagBeforeDashDash(argv, '--no-color');

/**
 * The global flags (common-flags.ts), typed before the command as cargo (`cargo -q build`)
 * and npm (`npm --json ls`) take them: moved after it (before any `--`), so `yep-ext --json
 * list` is `yep-ext list --json`. `-v` first stays the version (npm's), so only the long
 * spellings and the other short ones move.
 */
const BEFORE_COMMAND = new Set(
  Object.entries(globalFlags).flatMap(([name, f]) => [`--${name}`, ...('char' in f && f.char && f.char !== 'v' ? [`-${f.char}`] : [])]),
);

function withLeadingFlagsMoved(argv: readonly string[]): readonly string[] {
  let n = 0;
  while (n < argv.length && BEFORE_COMMAND.has(argv[n]!)) n++;
  if (n === 0 || n === argv.length || argv[n]!.startsWith('-')) return argv;
  const rest = argv.slice(n);
  const end = rest.indexOf('--');
  return end === -1 ? [...rest, ...argv.slice(0, n)] : [...rest.slice(0, end), ...argv.slice(0, n), ...rest.slice(end)];
}

/** Run the yep-ext command line `argv` (without the program); the exit status. */
export async function runCli(typed: readonly string[], given: CliIo): Promise<number> {
  const argv = withLeadingFlagsMoved(typed);
  const io = noColorRequested(argv) ? colorOff(given) : given;
  setStdoutStyle(io.stdout);
  // -v as npm spells it, -V as cargo does (after a command, -v is --verbose, as in cargo).
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === '-V') {
    io.stdout.write(`${versionLine()}\n`);
    return 0;
  }
  try {
    if (argv[0] === '__complete') {
      const text = await (await import('./complete-run.js')).completionOutput(argv.slice(1), io.env);
      if (text) io.stdout.write(`${text}\n`);
      return 0;
    }
    if (wantsHelp(argv)) return await (await import('./help.js')).showHelp(io, argv, jsonRequested(argv));
    const [id, rest] = splitCommand(argv);
    const found = findCommand(id);
    if (!found) {
      if (topicNames().includes(id)) return await (await import('./help.js')).showHelp(io, [id], false);
      const { unknownCommandError } = await import('./unknown-command.js');
      return writeError(unknownCommandError(id), jsonRequested(argv), io);
    }
    return await runCommand(found.id, found.def, rest, io);
  } catch (e) {
    if ((e as Record<symbol, unknown>)?.[OUTPUT_FAILED]) throw e;
    return writeError(e, jsonRequested(argv), io);
  }
}

async function runCommand(id: string, def: CommandDefinition, argv: string[], io: CliIo): Promise<number> {
  let parsed: Parsed;
  try {
    const out = await parse(argv, {
      flags: { ...globalFlags, ...(def.flags ?? {}) } as Interfaces.FlagInput,
      args: (def.args ?? {}) as Interfaces.ArgInput,
      strict: def.strict !== false,
    });
    parsed = { flags: out.flags as Parsed['flags'], args: out.args, argv: out.argv as string[] };
  } catch (e) {
    if (!isParseError(e)) throw e;
    // Nothing parsed: --json is read as oclif reads it for its own errors (before any `--`).
    return writeError(await usageError(id, def, argv, e as Error), jsonRequested(argv), io);
  }
  const json = parsed.flags.json === true;
  const abort = new AbortController();
  let ctx: Context | undefined;
  // Every line and document shows URLs one way (text/redact.ts: no userinfo, whoever wrote the lock).
  const line = (stream: CliIo['stdout']) => (message: string) => {
    if (json) return;
    clearStatus();
    stream.write(`${redactUrls(message)}\n`);
  };
  const commandIo: CommandIo = {
    json,
    log: line(io.stdout),
    logToStderr: line(io.stderr),
    logJson: (value) => io.stdout.write(`${JSON.stringify(redactValue(value, []), null, 2)}\n`),
    context: () => {
      ctx ??= makeCliContext(io, contextFlagsOf(def.flags, parsed.flags), abort);
      return ctx;
    },
    io,
  };
  try {
    const result = await def.run(commandIo, parsed as never);
    if (result && json) commandIo.logJson(result);
    return 0;
  } catch (e) {
    if (e instanceof ExitStatus) return e.code;
    if ((e as Record<symbol, unknown>)?.[OUTPUT_FAILED]) throw e;
    return writeError(await withSuggestion(e, argv, io), json, io);
  }
}

/** oclif's parse and validation errors carry oclif's usage exit status (2). */
function isParseError(e: unknown): boolean {
  return (e as { oclif?: { exit?: number } })?.oclif?.exit !== undefined && !isYepError(e);
}

/** A parse error in our words (usage-errors.ts), or the command's own (set-secret's). */
async function usageError(id: string, def: CommandDefinition, argv: string[], err: Error): Promise<YepError> {
  const own = def.parseError?.(err);
  if (own) return own;
  const usage = await import('./usage-errors.js');
  const shape = (await import('./command-shape.js')).commandShape(id, def, argv);
  return usage.translateParseError(err, shape) ?? usage.genericUsageError(err, shape.id);
}

/** "Did you mean `lsp`?" on a not-installed name (name-suggestion.ts). */
async function withSuggestion(e: unknown, argv: string[], io: CliIo): Promise<unknown> {
  if (!isYepError(e)) return e;
  const { mayHaveNameSuggestion, withNameSuggestion } = await import('./name-suggestion.js');
  return mayHaveNameSuggestion(e) ? withNameSuggestion(e, argv, io) : e;
}
