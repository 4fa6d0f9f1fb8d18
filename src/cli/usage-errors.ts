/**
 * oclif's flag and argument errors, said our way: oclif's parser words them for
 * its own audience ("The following error occurred: All of the following must be
 * provided when using --lockfile: --frozen", "Parsing --limit Expected an
 * integer…", "Missing 2 required args: name …"). This turns each kind into an
 * E_USAGE YepError that names the command as the user typed it (`lock export`,
 * never `lock:export`), says what is wrong in one sentence and what to type
 * instead, with a "did you mean" for a mistyped flag or option value.
 *
 * Pure: the command's shape (flags, args, examples) comes in as data, so the
 * wording is tested without spawning anything. oclif's parser errors are not
 * exported as classes, so they are recognised by their fields and message text
 * (test/cli/mistakes.test.ts fails if an oclif upgrade changes them).
 */
import { YepError } from '../core/errors.js';
import { closestMatches } from '../core/text/closest.js';
import { shownArgument } from '../core/text/redact.js';

const BIN = 'yep-ext';

export interface FlagShape {
  name: string;
  char?: string | undefined;
  type: 'boolean' | 'option';
  options?: readonly string[] | undefined;
  allowNo?: boolean | undefined;
  description?: string | undefined;
  summary?: string | undefined;
  hidden?: boolean | undefined;
}

interface ArgShape {
  name: string;
  description?: string | undefined;
  required?: boolean | undefined;
  options?: readonly string[] | undefined;
}

export interface CommandShape {
  /** As typed: `lock export`. */
  id: string;
  flags: Record<string, FlagShape>;
  args: Record<string, ArgShape>;
  examples: string[];
  /** The other commands and their flags: to say where a flag that is not this command's belongs. */
  others?: Array<{ id: string; flags: string[] }>;
  /** The arguments as given (to recognise `--switch=value`). */
  argv?: string[];
}

/** `lock:export` → `lock export`. */
export function displayId(id: string | undefined): string {
  return (id ?? '').split(':').join(' ');
}

/** oclif example entries (strings or {command}) as plain command lines. */
export function exampleLines(examples: unknown): string[] {
  if (!Array.isArray(examples)) return [];
  return examples
    .map((e) => (typeof e === 'string' ? e : typeof e === 'object' && e && 'command' in e ? String((e as { command: unknown }).command) : ''))
    .map((e) =>
      e
        .replace(/<%=\s*config\.bin\s*%>/g, BIN)
        .replace(/^\$\s*/, '')
        .trim(),
    )
    .filter((e) => e !== '');
}

function usageHint(shape: CommandShape, mentioning: string[] = []): string {
  const example = shape.examples.find((e) => mentioning.every((m) => e.includes(m))) ?? (mentioning.length === 0 ? shape.examples[0] : undefined);
  return example ? `For example: ${example}` : `\`${BIN} ${shape.id} --help\` shows its usage.`;
}

function flagLabel(name: string): string {
  return `--${name.replace(/^-+/, '')}`;
}

function flagCandidates(shape: CommandShape): string[] {
  return Object.values(shape.flags)
    .filter((f) => !f.hidden)
    .flatMap((f) => [f.name, ...(f.allowNo ? [`no-${f.name}`] : [])])
    .concat(['help']);
}

function oneLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.trim();
}

function unknownFlag(shape: CommandShape, raw: string): YepError {
  const bare = raw.replace(/=.*$/, '');
  const name = bare.replace(/^-+/, '');
  const cmd = `\`${BIN} ${shape.id}\``;
  const hints: string[] = [];
  if (bare.startsWith('--')) {
    const [guess] = closestMatches(name, flagCandidates(shape));
    if (guess) hints.push(`Did you mean --${guess}?`);
    else {
      const owners = (shape.others ?? []).filter((o) => o.flags.includes(name)).map((o) => o.id);
      if (owners.length > 0) hints.push(`--${name} is a flag of ${owners.map((o) => `\`${o}\``).join(', ')}, not of \`${shape.id}\`.`);
    }
  } else {
    const chars = Object.values(shape.flags)
      .filter((f) => f.char)
      .map((f) => `-${f.char} (--${f.name})`);
    if (chars.length > 0) hints.push(`Its short flags: ${chars.join(', ')}.`);
  }
  hints.push(`\`${BIN} ${shape.id} --help\` lists its flags.`);
  return new YepError('E_USAGE', `Unknown flag ${bare} for ${cmd}.`, { hint: hints.join(' ') });
}

function argNames(names: string[]): string {
  const upper = names.map((n) => n.toUpperCase());
  return upper.length <= 1 ? (upper[0] ?? '') : `${upper.slice(0, -1).join(', ')} and ${upper.at(-1)}`;
}

function missingArgs(shape: CommandShape, names: string[]): YepError {
  // "needs NAME: extension name (…)": the argument's description as the rest of the sentence.
  const text = names.length === 1 ? oneLine(shape.args[names[0]!]?.description).replace(/\.$/, '') : '';
  const about = text ? `: ${/^[A-Z](?![A-Z])/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text}` : '';
  return new YepError('E_USAGE', `\`${BIN} ${shape.id}\` needs ${argNames(names)}${about}.`, { hint: usageHint(shape) });
}

function unexpectedArgs(shape: CommandShape, extra: string[]): YepError {
  // oclif reads `--verify=false` as the switch --verify plus an argument "false".
  const switchWithValue = (shape.argv ?? []).find((a) => {
    const m = /^--([\w-]+)=(.*)$/s.exec(a);
    return m && shape.flags[m[1]!]?.type === 'boolean' && extra.includes(m[2]!);
  });
  if (switchWithValue) {
    const flag = switchWithValue.slice(0, switchWithValue.indexOf('='));
    const def = shape.flags[flag.slice(2)];
    return new YepError('E_USAGE', `${flag} is a switch: it takes no value (got ${switchWithValue}).`, {
      hint: def?.allowNo ? `Write ${flag} or --no-${flag.slice(2)}.` : `Write ${flag} alone, or leave it out.`,
    });
  }
  const declared = Object.values(shape.args);
  const takes =
    declared.length === 0
      ? 'takes no arguments'
      : `takes ${declared.length === 1 ? 'one argument' : `${declared.length} arguments`} (${argNames(declared.map((a) => a.name))})`;
  const shown = extra.map(shownArgument).join(', ');
  return new YepError('E_USAGE', `\`${BIN} ${shape.id}\` ${takes}; unexpected: ${shown}.`, { hint: usageHint(shape) });
}

function needsTogether(shape: CommandShape, flag: string, needs: string[]): YepError {
  const all = [flag, ...needs].map((n) => flagLabel(n));
  return new YepError('E_USAGE', `${flagLabel(flag)} only works together with ${needs.map((n) => flagLabel(n)).join(' and ')}.`, {
    hint: shape.examples.some((e) => all.every((f) => e.includes(f)))
      ? usageHint(shape, all)
      : `Add ${needs.map((n) => flagLabel(n)).join(' ')}, or drop ${flagLabel(flag)}.`,
  });
}

function notTogether(shape: CommandShape, a: string, b: string): YepError {
  return new YepError('E_USAGE', `${flagLabel(a)} and ${flagLabel(b)} cannot be used together.`, {
    hint: `Keep one of them (\`${BIN} ${shape.id} --help\` says what each does).`,
  });
}

function badOption(shape: CommandShape, flag: string, value: string): YepError {
  const def = shape.flags[flag];
  const options = def?.options ?? [];
  const [guess] = closestMatches(value, options);
  return new YepError('E_USAGE', `--${flag} must be one of ${options.join(', ')} (got ${JSON.stringify(value)}).`, {
    hint: guess ? `Did you mean --${flag} ${guess}?` : `For example: --${flag} ${options[0] ?? '<value>'}`,
  });
}

function badInteger(shape: CommandShape, flag: string, detail: string): YepError {
  const m = /^Expected an integer(?: (greater|less) than or equal to (-?\d+))? but received: ([\s\S]*)$/.exec(detail.trim());
  const got = m?.[3]?.trim() ?? '';
  const message = !m
    ? `--${flag}: ${detail.trim()}`
    : m[1] === 'greater'
      ? `--${flag} must be at least ${m[2]} (got ${got}).`
      : m[1] === 'less'
        ? `--${flag} must be at most ${m[2]} (got ${got}).`
        : `--${flag} needs a whole number, not ${JSON.stringify(got)}.`;
  const about = oneLine(shape.flags[flag]?.summary ?? shape.flags[flag]?.description);
  return new YepError('E_USAGE', message, { hint: `${about ? `--${flag}: ${about} ` : ''}For example: ${BIN} ${shape.id} --${flag} 50` });
}

/**
 * The YepError for an oclif parse failure of `shape`, or undefined when the
 * error is not one of oclif's parse errors (the caller then reports it as is).
 */
export function translateParseError(err: Error & { flags?: unknown; args?: unknown }, shape: CommandShape): YepError | undefined {
  const text = (err.message ?? '').replace(/\n?See more help with --help\s*$/, '');
  // Remove oclif's colouring of the reasons (theme 'dim') before matching.
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\u001b\[[0-9;]*m/g, '');

  if (/^Nonexistent flags?: /.test(plain)) {
    const flags = Array.isArray(err.flags) ? (err.flags as string[]) : plain.replace(/^Nonexistent flags?: /, '').split(', ');
    return unknownFlag(shape, flags[0] ?? '');
  }
  if (/^Missing \d+ required args?/.test(plain)) {
    const fromErr = Array.isArray(err.args) ? (err.args as Array<{ name?: string }>).map((a) => a.name ?? '').filter(Boolean) : [];
    const names =
      fromErr.length > 0
        ? fromErr
        : Object.values(shape.args)
            .filter((a) => a.required)
            .map((a) => a.name);
    return missingArgs(shape, names);
  }
  if (/^Unexpected arguments?: /.test(plain)) {
    const extra = Array.isArray(err.args) ? (err.args as unknown[]).map(String) : [plain.replace(/^Unexpected arguments?: /, '')];
    return unexpectedArgs(shape, extra);
  }
  const reasons = /^The following errors? occurred:\s*([\s\S]*)$/
    .exec(plain)?.[1]
    ?.split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (reasons && reasons.length > 0) {
    const first = reasons[0]!;
    let m = /^All of the following must be provided when using --([\w-]+): (.*)$/.exec(first);
    if (m)
      return needsTogether(
        shape,
        m[1]!,
        m[2]!.split(', ').map((f) => f.replace(/^--/, '')),
      );
    m = /^--([\w-]+)(?:=.*)? cannot also be provided when using --([\w-]+)$/.exec(first);
    if (m) return notTogether(shape, m[2]!, m[1]!);
    m = /^Missing required flag ([\w-]+)$/.exec(first);
    if (m) return new YepError('E_USAGE', `--${m[1]} is required.`, { hint: usageHint(shape, [`--${m[1]}`]) });
    return new YepError('E_USAGE', reasons.join(' '), { hint: usageHint(shape) });
  }
  let m = /^Parsing --([\w-]+)\s+([\s\S]*)$/.exec(plain);
  if (m) return badInteger(shape, m[1]!, m[2]!);
  m = /^Expected --([\w-]+)=([\s\S]*) to be one of: /.exec(plain);
  if (m) return badOption(shape, m[1]!, m[2]!);
  m = /^Expected ([\s\S]*) to be one of: (.*)$/.exec(plain);
  if (m) {
    const options = m[2]!.split(', ');
    const arg = Object.values(shape.args).find((a) => a.options?.join(', ') === m![2]);
    const [guess] = closestMatches(m[1]!, options);
    return new YepError('E_USAGE', `${arg ? arg.name.toUpperCase() : 'The argument'} must be one of ${options.join(', ')} (got ${JSON.stringify(m[1])}).`, {
      hint: guess ? `Did you mean \`${BIN} ${shape.id} ${guess}\`?` : `For example: ${BIN} ${shape.id} ${options[0]}`,
    });
  }
  m = /^Flag --([\w-]+) expects a value$/.exec(plain);
  if (m) return new YepError('E_USAGE', `--${m[1]} needs a value.`, { hint: usageHint(shape, [`--${m[1]}`]) });
  m = /^Flag --([\w-]+) expects one of these values: (.*)$/.exec(plain);
  if (m) return new YepError('E_USAGE', `--${m[1]} needs a value, one of ${m[2]}.`, { hint: `For example: --${m[1]} ${m[2]!.split(', ')[0]}` });
  m = /^Flag --([\w-]+) can only be specified once$/.exec(plain);
  if (m) return new YepError('E_USAGE', `--${m[1]} was given more than once.`, { hint: `Give --${m[1]} once.` });
  m = /^Unexpected flag (.*)$/.exec(plain);
  if (m) return unknownFlag(shape, m[1]!);
  return undefined;
}

/** A parse error none of the above recognises: its first lines, as an E_USAGE error. */
export function genericUsageError(err: Error, id: string): YepError {
  const lines = err.message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('See more help'));
  return new YepError('E_USAGE', lines.slice(0, 3).join(' ') || err.message, { hint: `\`${BIN} ${id} --help\` shows its usage.` });
}
