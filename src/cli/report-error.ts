/**
 * How a failed run reports itself: a YepError as `error: … / hint: …` on stderr
 * (or {"error": {code, message, hint, details}} on stdout with --json, hint and details null when empty), anything else as a
 * "this is a bug" report with its stack. Returns the exit status.
 */
import { ERROR_CODES, isYepError } from '../core/errors.js';
import { sanitize } from '../core/text/sanitize.js';
import { redactText, redactValue } from '../core/text/redact.js';
import type { CliIo } from './cli-io.js';
import { bold, red } from './style.js';
import { clearStatus } from './status-area.js';

export function writeError(err: unknown, json: boolean, io: Pick<CliIo, 'stdout' | 'stderr' | 'env'>): number {
  clearStatus();
  const { stdout, stderr } = io;
  if (isYepError(err)) {
    if (json) {
      // The human branch redacts through sanitize(); --json must not carry what it hides (a
      // `user:token@` in a git or proxy URL quoted by the message, the hint or the details).
      stdout.write(`${JSON.stringify({ error: redactValue(err.toJSON(), []) }, null, 2)}\n`);
    } else {
      // Messages quote package-supplied text (names, versions, descriptions): neutralise escapes.
      stderr.write(`${red('error', stderr)}: ${sanitize(err.message, { keepNewlines: true, max: 8000 })}\n`);
      if (err.hint) stderr.write(`${bold('hint', stderr)}: ${sanitize(err.hint, { keepNewlines: true, max: 8000 })}\n`);
      // git's own error (its stderr, with a proxy URL in it) is in the cause: redacted like the message.
      if (io.env.YEP_EXT_DEBUG && err.cause) stderr.write(`cause: ${redactText(String((err.cause as Error)?.stack ?? err.cause), [])}\n`);
    }
    return err.exitCode;
  }
  const e = err as Error;
  if (json) {
    stdout.write(
      `${JSON.stringify({ error: { code: 'E_INTERNAL', message: redactText(e?.message ?? String(err), []), hint: 'This is a bug in yep-ext; please report it with the output above.', details: null } }, null, 2)}\n`,
    );
  }
  stderr.write(
    `${red('internal error', stderr)}: ${redactText(`${e?.message ?? String(err)}\n${e?.stack ?? ''}`, [])}\nThis is a bug in yep-ext. Please report it with the command you ran and the output above.\n`,
  );
  return ERROR_CODES.E_INTERNAL;
}
