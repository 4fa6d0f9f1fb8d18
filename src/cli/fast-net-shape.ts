/**
 * How the oclif-free runners (fast-net-run.ts for install and update,
 * fast-frozen.ts for a warm `install --frozen`, fast-cmd-run.ts for enable,
 * disable, remove, set-secret, verify) run a command body the way oclif
 * would: lines through `clearStatus` + fd 1 / stderr as Command.log /
 * logToStderr write them (the live progress display cleared first, as
 * BaseCommand does), the --json document as oclif's logJson prints it
 * (JSON.stringify with two spaces, no theme: fast-net.ts declines when one is
 * set), and errors through report-error.ts with oclif's immediate exit. One
 * module, so both runners print and fail identically.
 */
import { isYepError } from '../core/errors.js';
import { makeCliContext } from './cli-context.js';
import type { CommandIo } from './command-io.js';
import { writeStdout } from './fast-path-env.js';
import { mayHaveNameSuggestion, withNameSuggestion } from './name-suggestion.js';
import { writeError } from './report-error.js';
import { clearStatus } from './status-area.js';
import { testSeams } from './test-seams.js';

/** What runShape needs of a shape: the command (for the test seam), --json, and argv after the command name (for the name suggestion). */
export interface RunnableShape {
  command: string;
  flags: { json: boolean };
  argv: string[];
}

/**
 * Run `body` for `shape` as oclif runs a command. A thrown value for which
 * `passOn` is true leaves untouched (the caller's own signal), anything else
 * thrown is reported and ends the process.
 */
export async function runShape(shape: RunnableShape, body: (io: CommandIo) => Promise<unknown>, passOn: (e: unknown) => boolean = () => false): Promise<void> {
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
    result = await body(io);
  } catch (e) {
    if (passOn(e)) throw e;
    // BaseCommand.catch: the same suggestion, report and status; oclif then leaves at once (process.exit).
    const err = isYepError(e) && mayHaveNameSuggestion(e) ? await withNameSuggestion(e, shape.argv) : e;
    process.exit(writeError(err, json));
  }
  // oclif's _run: `if (result && jsonEnabled) logJson(result)`, through console.log.
  if (result && json) writeStdout(`${JSON.stringify(result, null, 2)}\n`);
}
