/**
 * The oclif runner bin/run.js starts (bundled as dist/bundle/oclif.js): oclif's
 * `run`, with its top-level error report replaced by ours. Commands report their
 * own errors (BaseCommand.catch) and leave through oclif's quiet exit; what
 * reaches this level is oclif's own (a usage error raised outside any command,
 * or a crash while loading), which is printed like every other yep-ext error,
 * `--json` included, instead of oclif's " ›   Error:" block.
 */
import { Errors, flush, handle, run } from '@oclif/core';
import { YepError } from '../core/errors.js';
import { writeError } from './report-error.js';
import { jsonRequested } from './unknown-command.js';

export async function main(root: string, argv: string[] = process.argv.slice(2)): Promise<void> {
  try {
    await run(argv, root);
    await flush();
  } catch (e) {
    const err = e as Error & { oclif?: { exit?: number } };
    // A command's exit (its error already printed), or Ctrl-C: oclif's quiet exit with the status.
    if (err instanceof Errors.ExitError || err?.message === 'SIGINT') return handle(err);
    const usage = err instanceof Errors.CLIError && err.oclif?.exit === 2;
    const report = usage
      ? new YepError('E_USAGE', err.message.replace(/\n?See more help with --help\s*$/, ''), { hint: '`yep-ext help` lists every command.' })
      : err;
    process.exitCode = writeError(report, jsonRequested(argv));
  }
}
