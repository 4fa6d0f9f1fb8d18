/**
 * Help: oclif's rendering of each command's definition (usage, arguments, flags,
 * description, examples), loaded only when help is asked for (`help`, `--help`,
 * `-h`, no arguments, a bare topic). Ours on top of it:
 * - the root help fits one screen: usage, the commands grouped by what they are
 *   for, a few examples, and where the rest is (environment variables:
 *   docs/configuration.md);
 * - text wraps at the terminal's width (terminal.ts helpWidth), also when stdout
 *   is piped into a pager on that terminal;
 * - a command's examples are one per line, so they fit a screen;
 * - an unknown subject (`yep-ext help instal`, `yep-ext instal --help`) is reported
 *   like any unknown command instead of oclif's "Command instal not found.".
 */
import { fileURLToPath } from 'node:url';
import { Config, Help, CommandHelp, type Command, type Interfaces } from '@oclif/core';
import type { CliIo } from './cli-io.js';
import { COMMANDS } from './command-table.js';
import { writeError } from './report-error.js';
import { helpWidth } from './terminal.js';
import { unknownCommandError } from './unknown-command.js';

/** The root help's groups of command ids, in order; a command no group names is listed under the last. */
export const ROOT_GROUPS: Array<[title: string, ids: string[]]> = [
  ['INSTALL AND UPDATE', ['install', 'update', 'remove', 'list', 'info', 'outdated', 'search']],
  ['CONFIGURE AND CHECK', ['enable', 'disable', 'config:show', 'config:set', 'set-secret', 'verify', 'doctor', 'policy:check']],
  ['FLEETS AND CI', ['lock:export', 'mirror', 'policy:init', 'cache:verify', 'cache:clean']],
  ['MORE', ['new', 'completion', 'help']],
];

/** The root help's examples: the first hour of a new user. */
export const ROOT_EXAMPLES = [
  '<%= config.bin %> install lsp',
  '<%= config.bin %> enable lsp',
  '<%= config.bin %> install --frozen --lockfile ./yolop-extensions.lock',
];

/** How many examples `-h` shows (`--help` shows them all). */
const SHORT_EXAMPLES = 3;

/** The help options, plus `short`: `-h` asked (clap's and cargo's convention: -h a summary, --help everything). */
type YepHelpOptions = Partial<Interfaces.HelpOptions> & { short?: boolean };

/**
 * A flag's text as `-h` shows it, on one line of `width`: its first sentence without
 * what is in parentheses ("Fetch and verify, then print the plan (new, …) without
 * changing anything." -> "Fetch and verify, then print the plan without changing
 * anything"), cut with … when still too long.
 */
function oneLineOf(text: string, width: number): string {
  let plain = text.split('\n')[0]!;
  for (let prev = ''; prev !== plain; ) {
    prev = plain;
    plain = plain.replace(/ ?\([^()]*\)/g, '');
  }
  const end = /(\.(\s|$)|;\s)/.exec(plain);
  const first = (end ? plain.slice(0, end.index) : plain).trim();
  return first.length <= width ? first : `${first.slice(0, Math.max(1, width - 1)).trimEnd()}…`;
}

/**
 * A command's help, with its examples one per line when each is a one-line command, and
 * no second copy of the summary above its description. With `-h` (short): each flag's
 * first clause on its line, no description, the first few examples.
 */
class YepCommandHelp extends CommandHelp {
  /**
   * oclif wraps the text of a list's rows (flags, arguments) for the list's own
   * indentation, then indents the list once more as a section: reserve those two
   * columns, so that no line of a list is wider than the terminal.
   */
  private inList = 0;

  override renderList(input: (string | undefined)[][], opts: Parameters<CommandHelp['renderList']>[1]): string {
    this.inList++;
    try {
      return super.renderList(input, opts);
    } finally {
      this.inList--;
    }
  }

  override wrap(input: string, spacing?: number): string {
    return super.wrap(input, (spacing ?? this.indentSpacing) + (this.inList > 0 ? 2 : 0));
  }

  private get short(): boolean {
    return (this.opts as YepHelpOptions).short === true;
  }

  protected override sections(): ReturnType<CommandHelp['sections']> {
    return this.short ? super.sections().filter((s) => s.header !== 'DESCRIPTION' && s.header !== 'ALIASES') : super.sections();
  }

  protected override description(): string | undefined {
    // The summary is the page's first line already.
    return this.command.description ? this.wrap(this.command.description) : undefined;
  }

  protected override flags(flags: Command.Flag.Any[]): [string, string | undefined][] | undefined {
    return this.short ? this.oneLine(super.flags(flags)) : super.flags(flags);
  }

  protected override args(args: Command.Arg.Any[]): [string, string | undefined][] | undefined {
    return this.short ? this.oneLine(super.args(args)) : super.args(args);
  }

  /** `-h`'s rows: each text on the one line the list leaves it (section indent, the labels, the gap). */
  private oneLine(rows: [string, string | undefined][] | undefined): [string, string | undefined][] | undefined {
    if (!rows) return rows;
    const label = Math.max(...rows.map(([left]) => left.replace(/\u001b\[[0-9;]*m/g, '').length));
    const width = this.opts.maxWidth - 2 - 2 - label - 2;
    return rows.map(([left, right]) => [left, right === undefined ? right : oneLineOf(right.replace(/\u001b\[[0-9;]*m/g, ''), width)]);
  }

  protected override defaultUsage(): string {
    // -h: the command and its arguments; its flags are listed below.
    return this.short ? `${super.defaultUsage()} [FLAGS]` : super.defaultUsage();
  }

  protected override examples(examples: Command.Example[] | undefined | string): string | undefined {
    if (this.short && Array.isArray(examples)) examples = examples.slice(0, SHORT_EXAMPLES);
    const body = super.examples(examples);
    const list = typeof examples === 'string' ? [examples] : (examples ?? []);
    const oneLine = list.every((e) => typeof e === 'string' && !e.includes('\n'));
    return oneLine && body ? body.replace(/\n\n/g, '\n') : body;
  }
}

export class YepHelp extends Help {
  protected override CommandHelpClass = YepCommandHelp;

  constructor(
    config: Interfaces.Config,
    options: YepHelpOptions,
    private readonly out: Pick<CliIo, 'stdout'>,
  ) {
    super(config, options);
  }

  protected override log(...args: string[]): void {
    this.out.stdout.write(`${args.join(' ')}\n`);
  }

  protected override async showRootHelp(): Promise<void> {
    const bin = this.config.bin;
    const ids = Object.keys(COMMANDS);
    const width = Math.max(...ids.map((id) => id.length));
    const listed = new Set(ROOT_GROUPS.flatMap(([, g]) => g));
    const groups = ROOT_GROUPS.map(([title, g], i) => [title, i === ROOT_GROUPS.length - 1 ? [...g, ...ids.filter((id) => !listed.has(id))] : g] as const);
    const sections = [
      this.wrap(this.config.pjson.description ?? ''),
      this.section('USAGE', `$ ${bin} <command> [arguments] [flags]`),
      ...groups.map(([title, g]) =>
        this.section(
          title,
          this.renderList(
            g.filter((id) => COMMANDS[id]).map((id): [string, string] => [id.split(':').join(' ').padEnd(width), COMMANDS[id]!.summary]),
            { indentation: 2, spacer: '\n', stripAnsi: this.opts.stripAnsi },
          ),
        ),
      ),
      this.section('EXAMPLES', ROOT_EXAMPLES.map((e) => `$ ${this.render(e)}`).join('\n')),
      this.wrap(`Flags and examples: ${bin} help <command>. Environment: docs/configuration.md`),
    ];
    this.log(sections.join('\n\n'));
  }

  /**
   * oclif renders a flag that depends on one already shown in an exclusive group
   * (install's --enable and --lockfile need --frozen, itself in [--force | --frozen |
   * --dry-run]) as "[--enable ]": the dependency's text is gone, its space is not, and
   * oclif may have wrapped the line there. The usage is folded again, only between
   * bracketed groups, so `[--index <url>]` is never split across two lines.
   */
  protected override formatCommand(command: Command.Loadable): string {
    const text = this.withUsageFolded(super.formatCommand(command));
    if (!(this.opts as YepHelpOptions).short) return text;
    const words = command.id.split(':').join(' ');
    // Not wrapped: a command to copy stays on one line.
    return `${text}\n\nEvery flag in full and all examples: ${this.config.bin} ${words} --help`;
  }

  private withUsageFolded(text: string): string {
    // The header may be bold on a terminal (USAGE between escape sequences).
    const usage = /(USAGE(?:\u001b\[[0-9;]*m)?\n)([\s\S]*?)(\n\n|$)/.exec(text);
    if (!usage) return text;
    const fixed = usage[2]!
      .split(/\n(?= {2}\$ )/)
      .map((u) => foldUsage(u.replace(/\s+/g, ' ').replace(/ \]/g, ']').trim(), this.opts.maxWidth))
      .join('\n');
    return text.slice(0, usage.index) + usage[1] + fixed + usage[3] + text.slice(usage.index + usage[0].length);
  }
}

/** One usage line (`$ yep-ext install [A] [B <b>]…`) folded at `width`, breaking only before a `[` group; continued lines indented 4. */
function foldUsage(line: string, width: number): string {
  const visible = (t: string): number => t.replace(/\u001b\[[0-9;]*m/g, '').length;
  const lines: string[] = [];
  let current = '  ';
  for (const part of line.split(/ (?=\[)/)) {
    const candidate = current.trim() === '' ? `${current}${part}` : `${current} ${part}`;
    if (visible(candidate) <= width || current.trim() === '') current = candidate;
    else {
      lines.push(current);
      current = `    ${part}`;
    }
  }
  lines.push(current);
  return lines.join('\n');
}

/** The package root (package.json, oclif.manifest.json): two levels up from this file, in src/cli and in dist/bundle. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * oclif's reading of the package (package.json, the command manifest, the plugin it makes of
 * them), which help only reads: one per process, as a run of the CLI reads it once anyway; runs
 * in one process (the dispatcher's in-process callers) would otherwise read and build it again
 * for each page. What oclif reads of process.env and of its theme file at load (the config
 * directory, its theme switch) is therefore read once per process too, as in a CLI run.
 * A failed read is not kept.
 */
let packageConfigLoad: Promise<Config> | undefined;
function packageConfig(): Promise<Config> {
  packageConfigLoad ??= Config.load(ROOT).catch((e: unknown) => {
    packageConfigLoad = undefined;
    throw e;
  });
  return packageConfigLoad;
}

/**
 * Show the help `argv` asks for (the whole command line for --help / -h, or the
 * words after `help`); the exit status. An unknown subject is a usage error,
 * printed as JSON with `json`.
 */
export async function showHelp(io: CliIo, argv: readonly string[], json: boolean): Promise<number> {
  const config = await packageConfig();
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  // `-h` is the page that fits a screen; `--help` and `help <command>` the whole one.
  const short = words.includes('-h') && !words.includes('--help') && argv[0] !== 'help';
  const options: YepHelpOptions = { ...config.pjson.oclif.helpOptions, maxWidth: helpWidth(io), short, ...(short ? { docopts: false } : {}) };
  const help = new YepHelp(config, options, io);
  try {
    await help.showHelp([...argv]);
    return 0;
  } catch (e) {
    const m = /^Command (.+) not found\.$/.exec((e as Error)?.message ?? '');
    if (!m) throw e;
    return writeError(unknownCommandError(m[1]!), json, io);
  }
}
