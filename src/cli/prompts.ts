/**
 * The only place yep-ext prompts. Prompts draw on stderr (stdout carries
 * results), run only when stdin is a TTY, and Ctrl-C becomes E_INTERRUPTED.
 * Every text a prompt draws (question, choices, default, a validator's answer)
 * goes through `shown`: it quotes package- and lock-supplied text, and a
 * terminal must not get an escape sequence from it.
 * Colour is the run's decision for stderr (cli-io.ts: a terminal, NO_COLOR,
 * FORCE_COLOR, --no-color), through style.ts, as for every other line: the
 * prompts' own theme would read only the environment and stdout.
 * The @inquirer prompts are imported lazily: most runs never prompt.
 */
import { YepError } from '../core/errors.js';
import type { ConfigField } from '../core/package/manifest.js';
import type { FieldPrompter, PromptValidator } from '../core/operations/enable.js';
import { sanitize } from '../core/text/sanitize.js';
import { Secret } from '../core/settings/secret-value.js';
import { withStatusSuspended } from './status-area.js';
import type { CliIo } from './cli-io.js';
import { blue, bold, cyan, dim, green, red, yellow, type StyleTarget } from './style.js';

/** Where a prompt reads and draws: the run's terminals, and whether stderr takes colour. */
export type PromptIo = Pick<CliIo, 'stdin' | 'stderr' | 'ttyStreams'>;

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The prompts' look (@inquirer's default theme) drawn with style.ts for `target`: plain text where it takes no colour. */
function theme(target: StyleTarget) {
  return {
    prefix: { idle: blue('?', target), done: green('✔', target) },
    spinner: { interval: 80, frames: SPINNER.map((f) => yellow(f, target)) },
    style: {
      answer: (t: string) => cyan(t, target),
      message: (t: string) => bold(t, target),
      error: (t: string) => red(`> ${t}`, target),
      defaultAnswer: (t: string) => dim(`(${t})`, target),
      help: (t: string) => dim(t, target),
      highlight: (t: string) => cyan(t, target),
      key: (t: string) => cyan(bold(`<${t}>`, target), target),
      disabled: (t: string) => dim(`- ${t}`, target),
      description: (t: string) => cyan(t, target),
      keysHelpTip: (keys: [string, string][]) => keys.map(([k, a]) => `${bold(k, target)} ${dim(a, target)}`).join(dim(' • ', target)),
    },
  };
}

/** The streams a prompt uses (stdin for keys, stderr to draw), or E_USAGE without a terminal to prompt on. */
function terminal(io: PromptIo): { input: NodeJS.ReadStream; output: NodeJS.WriteStream } {
  const streams = io.stdin.isTTY ? io.ttyStreams?.() : undefined;
  if (!streams)
    throw new YepError('E_USAGE', 'Cannot prompt: standard input is not a terminal.', { hint: 'Pass the value another way (--stdin or --config).' });
  return { input: streams.stdin, output: streams.stderr };
}

async function guarded<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await withStatusSuspended(ask);
  } catch (e) {
    if ((e as Error)?.name === 'ExitPromptError' || (e as Error)?.name === 'AbortPromptError') throw new YepError('E_INTERRUPTED', 'Cancelled.');
    throw e;
  }
}

const context = (io: PromptIo) => ({ ...terminal(io), clearPromptOnDone: false });

/** What every prompt's config carries: its theme for the run's stderr. */
const look = (io: PromptIo) => ({ theme: theme(io.stderr) });

/** Text as a prompt may draw it: escape sequences and control characters neutralised. */
function shown(text: string): string {
  return sanitize(text, { keepNewlines: true, max: 4000 });
}

/** A validator whose refusal text is drawn as `shown` text. */
function shownValidator(validate: PromptValidator | undefined): { validate?: PromptValidator } {
  if (!validate) return {};
  return {
    validate: (value: string) => {
      const verdict = validate(value);
      return typeof verdict === 'string' ? shown(verdict) : verdict;
    },
  };
}

function label(field: ConfigField, extension: string): string {
  const desc = field.description ? ` - ${sanitize(field.description, { max: 200 })}` : '';
  return `${extension}.${field.key}${desc}`;
}

/** Yes/no question. Callers check ctx.interactive first: never prompt without a TTY. */
export async function confirm(io: PromptIo, message: string, defaultValue = false): Promise<boolean> {
  const streams = terminal(io);
  const { default: ask } = await import('@inquirer/confirm');
  return guarded(() => ask({ message: shown(message), default: defaultValue, ...look(io) }, streams));
}

/**
 * A yes/no question whose No stops the command: "Cancelled." with exit 130, as
 * Ctrl-C at the prompt does (docs/exit-codes.md). Nothing that was still to be
 * done after the question is done.
 */
export async function confirmOrCancel(io: PromptIo, message: string): Promise<true> {
  if (await confirm(io, message)) return true;
  throw new YepError('E_INTERRUPTED', 'Cancelled.');
}

/** Hidden entry of a secret; the typed text never echoes. */
export async function promptSecret(io: PromptIo, message: string, validate?: PromptValidator): Promise<Secret> {
  const streams = context(io);
  const { default: password } = await import('@inquirer/password');
  const value = await guarded(() => password({ message: shown(message), mask: '*', ...shownValidator(validate), ...look(io) }, streams));
  return new Secret(value);
}

/** The prompter `enable` uses for setup. */
export function cliPrompter(io: PromptIo): FieldPrompter {
  return {
    secret: (field, extension, validate) => promptSecret(io, `${label(field, extension)} (hidden)`, validate),
    async select(field, extension, choices) {
      const streams = context(io);
      const { default: select } = await import('@inquirer/select');
      return guarded(() =>
        select({ message: shown(label(field, extension)), choices: choices.map((c) => ({ name: sanitize(c, { max: 200 }), value: c })), ...look(io) }, streams),
      );
    },
    async text(field, extension, validate) {
      const streams = context(io);
      const { default: input } = await import('@inquirer/input');
      const def = field.default;
      return guarded(() =>
        input(
          {
            message: shown(`${label(field, extension)}${field.type ? ` (${field.type})` : ''}`),
            ...shownValidator(validate),
            ...look(io),
            ...(def !== undefined && def !== null ? { default: shown(typeof def === 'string' ? def : JSON.stringify(def)) } : {}),
          },
          streams,
        ),
      );
    },
  };
}

/** Pick one of `choices` (value, label); the default is preselected. */
export async function askChoice<T extends string>(io: PromptIo, message: string, choices: readonly { value: T; name: string }[], defaultValue: T): Promise<T> {
  const { default: select } = await import('@inquirer/select');
  return guarded(() =>
    select({ message: shown(message), choices: choices.map((c) => ({ ...c, name: shown(c.name) })), default: defaultValue, ...look(io) }, context(io)),
  );
}

/** A line of text, with a default taken on Enter. */
export async function askText(io: PromptIo, message: string, defaultValue: string, validate?: PromptValidator): Promise<string> {
  const { default: input } = await import('@inquirer/input');
  return guarded(() => input({ message: shown(message), default: shown(defaultValue), ...shownValidator(validate), ...look(io) }, context(io)));
}
