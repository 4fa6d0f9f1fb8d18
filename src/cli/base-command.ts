/**
 * Base for every command: builds the Context (the only door to the outside),
 * maps YepError codes to exit statuses, prints `--json` errors as
 * {"error": {code, message, hint}}, and turns anything unexpected into a
 * "this is a bug" report with a stack.
 */
import { Command, Flags, type Interfaces } from '@oclif/core';
import type { Context } from '../core/context.js';
import { YepError, isYepError } from '../core/errors.js';
import { makeCliContext } from './cli-context.js';
import { writeError } from './report-error.js';

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>;

export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;

  static override baseFlags = {
    index: Flags.string({
      helpGroup: 'GLOBAL',
      description: 'Sparse index root to use instead of crates.io (also YEP_EXT_INDEX). Accepts a sparse+ prefix.',
    }),
  };

  private abort = new AbortController();

  /** Build the context for this run. `yes` disables prompts; prompts need stdin and stderr TTYs. */
  protected makeContext(options: { index?: string | undefined; yes?: boolean } = {}): Context {
    return makeCliContext({ ...options, json: this.jsonEnabled(), abort: this.abort });
  }

  protected override async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    // oclif's own exits (this.exit) and usage errors come through here too.
    if (err.oclif?.exit !== undefined && !isYepError(err)) {
      if (err.oclif.exit === 0) throw err;
      if (err.message && err.message !== `EEXIT: ${err.oclif.exit}`) {
        // Flag/arg parsing errors: our usage code.
        // oclif puts the useful part on the following lines for some errors ("Missing 1 required arg:\nname  …").
        const lines = err.message.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('See more help'));
        const message = lines.slice(0, 3).join(' ').replace(/:\s+/, ': ');
        const usage = new YepError('E_USAGE', message || err.message, { hint: `Run \`yep-ext ${this.id ?? ''} --help\` for usage.` });
        return this.reportError(usage);
      }
      throw err;
    }
    return this.reportError(err);
  }

  private reportError(err: unknown): never {
    const code = writeError(err, this.jsonEnabled());
    if (isYepError(err)) process.exitCode = code;
    return this.exit(code);
  }
}
