/**
 * "Did you mean `lsp`?" on an E_NOT_INSTALLED error when the name typed is a
 * typo of an installed one. Shared by BaseCommand.catch and the oclif-free
 * runner (fast-net-run.ts), so both say the same.
 */
import { YepError } from '../core/errors.js';
import { resolvePaths } from '../core/paths.js';
import { installedNames } from '../core/store/installed-name.js';

/** `err` with the suggestion in its hint, or `err` itself. `argv` is the command's arguments (after its id). */
export async function withNameSuggestion(err: YepError, argv: readonly string[]): Promise<YepError> {
  const typed = argv.filter((a) => !a.startsWith('-') && err.message.includes(a));
  if (typed.length === 0) return err;
  const names = installedNames(resolvePaths(process.env));
  const { closestMatches } = await import('../core/text/closest.js');
  const [guess] = typed.flatMap((t) => closestMatches(t, names));
  if (!guess) return err;
  const hint = `Did you mean \`${guess}\`? ${err.hint ?? ''}`.trim();
  return new YepError(err.code, err.message, { hint, ...(err.details ? { details: err.details } : {}), ...(err.cause !== undefined ? { cause: err.cause } : {}) });
}
