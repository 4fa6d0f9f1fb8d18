/**
 * "Did you mean `lsp`?" on an E_NOT_INSTALLED error when the name typed is a
 * typo of an installed one. The dispatcher adds it to any such error a command
 * ends with. (A directory a path install links to is resolved to its name by
 * src/core/store/installed-name.ts, not suggested here.)
 */
import { YepError } from '../core/errors.js';
import { resolvePaths } from '../core/paths.js';
import { installedNames } from '../core/store/installed-name.js';
import type { CliIo } from './cli-io.js';

/** The errors a suggestion may be added to. */
export function mayHaveNameSuggestion(err: YepError): boolean {
  return err.code === 'E_NOT_INSTALLED';
}

/** `err` with the suggestion in its hint, or `err` itself. `argv` is the command's arguments (after its id). */
export async function withNameSuggestion(err: YepError, argv: readonly string[], io: Pick<CliIo, 'env' | 'cwd'>): Promise<YepError> {
  const typed = argv.filter((a) => !a.startsWith('-') && err.message.includes(a));
  if (typed.length === 0) return err;
  const names = installedNames(resolvePaths(io.env));
  const { closestMatches } = await import('../core/text/closest.js');
  const [guess] = typed.flatMap((t) => closestMatches(t, names));
  if (!guess) return err;
  return withHint(err, `Did you mean \`${guess}\`? ${err.hint ?? ''}`.trim());
}

function withHint(err: YepError, hint: string): YepError {
  return new YepError(err.code, err.message, {
    hint,
    ...(err.details ? { details: err.details } : {}),
    ...(err.cause !== undefined ? { cause: err.cause } : {}),
  });
}
