/**
 * "Did you mean `lsp`?" on an E_NOT_INSTALLED error when the name typed is a
 * typo of an installed one, and on an E_NAME error when what was typed is the
 * directory a path install links to (`yep-ext remove ./my-ext`: its name is
 * `my-ext`). The dispatcher adds it to any such error a command ends with.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { YepError } from '../core/errors.js';
import { resolvePaths } from '../core/paths.js';
import { installedNames } from '../core/store/installed-name.js';
import type { CliIo } from './cli-io.js';

/** The errors a suggestion may be added to. */
export function mayHaveNameSuggestion(err: YepError): boolean {
  return err.code === 'E_NOT_INSTALLED' || err.code === 'E_NAME';
}

/** `err` with the suggestion in its hint, or `err` itself. `argv` is the command's arguments (after its id). */
export async function withNameSuggestion(err: YepError, argv: readonly string[], io: Pick<CliIo, 'env' | 'cwd'>): Promise<YepError> {
  const typed = argv.filter((a) => !a.startsWith('-') && err.message.includes(a));
  if (typed.length === 0) return err;
  if (err.code === 'E_NAME') {
    // Only where an installed extension's name was asked for (names.ts's hint), not `new`'s name for a new one.
    if (!err.hint?.startsWith('Use the extension name as')) return err;
    const found = await installedFromDirectory(typed, io);
    if (!found) return err;
    return withHint(err, `"${found.typed}" is the directory ${found.name} is installed from: give its name, \`${found.name}\`, instead.`);
  }
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

/** The installed extension whose path install links to one of the words typed as a path. */
async function installedFromDirectory(typed: readonly string[], io: Pick<CliIo, 'env' | 'cwd'>): Promise<{ typed: string; name: string } | undefined> {
  const dirs = typed.filter((t) => t.includes('/') || t === '.' || t === '..' || t === '~');
  if (dirs.length === 0) return undefined;
  const { loadLock } = await import('../core/store/lockfile.js');
  const { isLinked } = await import('../core/sources/index.js');
  const { canonicalDir } = await import('../core/sources/local-path.js');
  const lock = await loadLock(resolvePaths(io.env).lockFile).catch(() => undefined);
  if (!lock) return undefined;
  const home = io.env.HOME || homedir();
  for (const t of dirs) {
    const expanded = t === '~' ? home : t.startsWith('~/') ? resolve(home, t.slice(2)) : resolve(io.cwd, t);
    const here = canonicalDir(expanded);
    const entry = lock.entries.find((e) => isLinked(e.source) && typeof e.source.path === 'string' && canonicalDir(e.source.path) === here);
    if (entry) return { typed: t, name: entry.name };
  }
  return undefined;
}
