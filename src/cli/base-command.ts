/**
 * Base for every command: builds the Context (the only door to the outside),
 * maps YepError codes to exit statuses, prints `--json` errors as
 * {"error": {code, message, hint}}, and turns anything unexpected into a
 * "this is a bug" report with a stack.
 */
import { Command, Flags, type Interfaces } from '@oclif/core';
import { createContext, type Context } from '../core/context.js';
import { YepError, isYepError, ERROR_CODES } from '../core/errors.js';
import { stderrLogger } from './stderr-logger.js';
import { bold, red } from './style.js';
import { sanitize } from '../core/sanitize.js';

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
    const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY) && !options.yes;
    const jsonMode = this.jsonEnabled();
    const ctx = createContext({
      env: process.env,
      log: stderrLogger({ debug: Boolean(process.env.YEP_EXT_DEBUG), quiet: false }),
      interactive: interactive && !jsonMode,
      ...(options.index ? { indexUrl: options.index } : {}),
      signal: this.abort.signal,
    });
    process.once('SIGINT', () => {
      this.abort.abort(new YepError('E_INTERRUPTED', 'Interrupted.'));
    });
    return ctx;
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
    const json = this.jsonEnabled();
    if (isYepError(err)) {
      if (json) {
        process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}), ...(err.details ? { details: err.details } : {}) } }, null, 2)}\n`);
      } else {
        // Messages quote package-supplied text (names, versions, descriptions): neutralise escapes.
        process.stderr.write(`${red('error', process.stderr)}: ${sanitize(err.message, { keepNewlines: true, max: 8000 })}\n`);
        if (err.hint) process.stderr.write(`${bold('hint', process.stderr)}: ${sanitize(err.hint, { keepNewlines: true, max: 8000 })}\n`);
        if (process.env.YEP_EXT_DEBUG && err.cause) process.stderr.write(`cause: ${String((err.cause as Error)?.stack ?? err.cause)}\n`);
      }
      process.exitCode = err.exitCode;
      return this.exit(err.exitCode);
    }
    const e = err as Error;
    if (json) {
      process.stdout.write(`${JSON.stringify({ error: { code: 'E_INTERNAL', message: e?.message ?? String(err), hint: 'This is a bug in yep-ext; please report it with the output above.' } }, null, 2)}\n`);
    }
    process.stderr.write(`${red('internal error', process.stderr)}: ${e?.message ?? String(err)}\n${e?.stack ?? ''}\nThis is a bug in yep-ext. Please report it with the command you ran and the output above.\n`);
    return this.exit(ERROR_CODES.E_INTERNAL);
  }
}
