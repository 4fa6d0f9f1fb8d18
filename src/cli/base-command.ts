/**
 * Base for every command: builds the Context (the only door to the outside),
 * maps YepError codes to exit statuses, prints `--json` errors as
 * {"error": {code, message, hint}}, says oclif's flag and argument errors our
 * way (usage-errors.ts), and turns anything unexpected into a "this is a bug"
 * report with a stack.
 */
import { Command, Flags, type Interfaces } from '@oclif/core';
import type { Context } from '../core/context.js';
import { YepError, isYepError } from '../core/errors.js';
import { makeCliContext } from './cli-context.js';
import { clearStatus } from './status-area.js';
import { writeError } from './report-error.js';
import { redactUrls, redactValue } from '../core/text/redact.js';
import { formatTimeout } from '../core/text/duration.js';
import { DEFAULT_TOTAL_MS } from '../core/net/http-settings.js';
import { mayHaveNameSuggestion, withNameSuggestion } from './name-suggestion.js';
import type { CommandIo, ContextRequest } from './command-io.js';
// Only an error needs these (suggestions, usage words): imported there, not by every command run.
import type { CommandShape, FlagShape } from './usage-errors.js';

type UsageErrors = typeof import('./usage-errors.js');

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>;

/**
 * --index, for the commands that talk to a registry (install, update, search)
 * and only those: a flag a command ignores is a flag that lies.
 */
export const indexFlag = {
  index: Flags.string({
    description: 'Sparse index root to use instead of crates.io (also YEP_EXT_INDEX). Accepts a sparse+ prefix.',
    helpValue: '<url>',
  }),
};

/**
 * --quiet and --verbose, for the commands that wait on the network, git, a
 * spawned process or a large hash (install, update, search, doctor, list): what
 * is shown while they wait is docs/feedback.md.
 */
export const feedbackFlags = {
  quiet: Flags.boolean({
    char: 'q',
    description: 'Show no progress and no notes while working: only warnings, errors and the result.',
    exclusive: ['verbose'],
  }),
  verbose: Flags.boolean({
    description: 'Show each request, retry and git command; without a terminal, also one line per step (for CI logs).',
    exclusive: ['quiet'],
  }),
};

/**
 * --profile, for the commands that read or write what settings.toml enables
 * (enable, disable, list, info): yolop's `--profile <name>`, whose entries live in
 * `<config>/profiles/<name>.toml` (docs/configuration.md, "Profiles").
 */
export const profileFlag = {
  profile: Flags.string({
    description:
      "Read and write yolop's profile <name> (<config>/profiles/<name>.toml, as `yolop --profile <name>` applies it) instead of settings.toml alone.",
    helpValue: '<name>',
  }),
};

/**
 * --timeout, for the commands that wait on a registry or a git host (install, update,
 * outdated, info, search, mirror): the total for a server that does not answer.
 */
export const timeoutFlag = {
  timeout: Flags.string({
    description: `Give up on a server that does not answer after this long, every retry included (default ${formatTimeout(DEFAULT_TOTAL_MS)}; 30s, 5m, 1h).`,
    helpValue: '<duration>',
  }),
};

/** The release-age cooldown flags of install and update (issue 15, docs/policy.md). */
export const minAgeFlag = {
  'min-age': Flags.string({
    description: 'Skip versions published less than this long ago (90m, 36h, 3d, 1w; also YEP_EXT_MIN_AGE). The policy file may set a floor.',
    helpValue: '<duration>',
  }),
};

// Every argument is declared with `ignoreStdin: true`: oclif otherwise fills a
// missing argument from piped standard input (`printf lsp | yep-ext disable`
// would disable lsp, and set-secret's piped secret would land in an argument).

export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;

  private abort = new AbortController();

  /** Build the context for this run. `yes` disables prompts; prompts need stdin and stderr TTYs. */
  protected makeContext(options: ContextRequest = {}): Context {
    return makeCliContext({ ...options, json: this.jsonEnabled(), abort: this.abort });
  }

  /** This run as a command body's runner (src/cli/command-io.ts). */
  protected io(): CommandIo {
    return {
      json: this.jsonEnabled(),
      log: (m) => this.log(m),
      logToStderr: (m) => this.logToStderr(m),
      makeContext: (o) => this.makeContext(o),
    };
  }

  // Results and messages first clear the live progress display (it is redrawn below them),
  // and show every URL in them one way (text/redact.ts: no userinfo, whoever wrote the lock).
  override log(message?: string, ...args: unknown[]): void {
    clearStatus();
    super.log(message === undefined ? message : redactUrls(message), ...args);
  }

  override logToStderr(message?: string, ...args: unknown[]): void {
    clearStatus();
    super.logToStderr(message === undefined ? message : redactUrls(message), ...args);
  }

  override logJson(json: unknown): void {
    super.logJson(redactValue(json, []));
  }

  protected override async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    // oclif's own exits (this.exit) and usage errors come through here too.
    if (err.oclif?.exit !== undefined && !isYepError(err)) {
      if (err.oclif.exit === 0) throw err;
      if (err.message && err.message !== `EEXIT: ${err.oclif.exit}`) {
        // Flag/arg parsing errors: our usage code and our words.
        const usage = await import('./usage-errors.js');
        return this.reportError(usage.translateParseError(err, this.shape(usage)) ?? this.genericUsageError(err, usage));
      }
      throw err;
    }
    return this.reportError(isYepError(err) && mayHaveNameSuggestion(err) ? await withNameSuggestion(err, this.argv ?? []) : err);
  }

  /** This command's flags, args and examples, and the other commands' flags, as usage-errors.ts wants them. */
  protected shape({ displayId, exampleLines }: Pick<UsageErrors, 'displayId' | 'exampleLines'>): CommandShape {
    const ctor = this.ctor as typeof Command & { enableJsonFlag?: boolean };
    const toShape = (flags: Record<string, Partial<FlagShape> & { type?: string }> | undefined): Record<string, FlagShape> =>
      Object.fromEntries(
        Object.entries(flags ?? {}).map(([name, f]) => [
          name,
          {
            name,
            char: f.char,
            type: f.type === 'boolean' ? 'boolean' : 'option',
            options: f.options,
            allowNo: f.allowNo,
            description: f.description,
            summary: f.summary,
            hidden: f.hidden,
          },
        ]),
      );
    const flags = toShape({ ...(ctor.baseFlags as object), ...(ctor.flags as object) } as Record<string, FlagShape>);
    if (ctor.enableJsonFlag) flags.json = { name: 'json', type: 'boolean', description: 'Format output as json.' };
    const args = Object.fromEntries(
      Object.entries((ctor.args ?? {}) as Record<string, { description?: string; required?: boolean; options?: string[]; hidden?: boolean }>)
        .filter(([, a]) => !a.hidden)
        .map(([name, a]) => [name, { name, description: a.description, required: a.required, options: a.options }]),
    );
    const others = (this.config?.commands ?? [])
      // config.commands holds an entry per alias too (id = the alias): keep the commands themselves.
      .filter((c) => c.id !== this.id && !c.hidden && !(c.aliases ?? []).includes(c.id))
      .map((c) => ({ id: displayId(c.id), flags: Object.keys(c.flags ?? {}) }));
    return { id: displayId(this.id), flags, args, examples: exampleLines(ctor.examples), others, argv: this.argv };
  }

  private genericUsageError(err: Error, { displayId }: Pick<UsageErrors, 'displayId'>): YepError {
    const lines = err.message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('See more help'));
    return new YepError('E_USAGE', lines.slice(0, 3).join(' ') || err.message, { hint: `\`yep-ext ${displayId(this.id)} --help\` shows its usage.` });
  }

  protected reportError(err: unknown): never {
    const code = writeError(err, this.jsonEnabled());
    if (isYepError(err)) process.exitCode = code;
    return this.exit(code);
  }
}
