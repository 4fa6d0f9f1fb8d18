/**
 * Runs a shape fast-net.ts accepted, the way oclif would run the command: the
 * same command body (install-run.ts, update-run.ts) and Context, results on
 * stdout and messages on stderr as oclif's Command.log / logToStderr write them
 * (the live progress display cleared first, as BaseCommand does), the --json
 * document as oclif's logJson prints it (JSON.stringify with two spaces, no
 * theme: fast-net.ts declines when one is set), and errors through
 * report-error.ts with oclif's immediate exit. Its own file
 * (dist/bundle/fast-net-run.cjs): required only once a shape is accepted.
 */
import { isYepError } from '../core/errors.js';
import { makeCliContext } from './cli-context.js';
import type { CommandIo } from './command-io.js';
import type { FastNetShape } from './fast-net.js';
import { writeStdout } from './fast-path-env.js';
import { runInstall } from './install-run.js';
import { withNameSuggestion } from './name-suggestion.js';
import { writeError } from './report-error.js';
import { clearStatus } from './status-area.js';
import { testSeams } from './test-seams.js';
import { runUpdate } from './update-run.js';

export async function runFastNetShape(shape: FastNetShape): Promise<void> {
  // Test-only (a preload's seam): lets the differential test prove this path ran.
  testSeams()?.fastPath?.(shape.command);
  const { json } = shape.flags;
  const abort = new AbortController();
  const io: CommandIo = {
    json,
    log: (m) => {
      if (json) return;
      clearStatus();
      writeStdout(`${m}\n`);
    },
    logToStderr: (m) => {
      if (json) return;
      clearStatus();
      process.stderr.write(`${m}\n`);
    },
    makeContext: (o) => makeCliContext({ ...o, json, abort }),
  };
  let result: unknown;
  try {
    result =
      shape.command === 'install'
        ? await runInstall(io, { ...shape.flags, 'allow-fresh': false, force: false, enable: false, 'ignore-engines': false, 'dry-run': false }, shape.args)
        : await runUpdate(io, { ...shape.flags, 'dry-run': false, 'ignore-engines': false }, shape.args);
  } catch (e) {
    // BaseCommand.catch: the same suggestion, report and status; oclif then leaves at once (process.exit).
    const err = isYepError(e) && e.code === 'E_NOT_INSTALLED' ? await withNameSuggestion(e, shape.argv) : e;
    process.exit(writeError(err, json));
  }
  // oclif's _run: `if (result && jsonEnabled) logJson(result)`, through console.log.
  if (result && json) writeStdout(`${JSON.stringify(result, null, 2)}\n`);
}
