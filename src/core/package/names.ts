/** The host's name rule, applied to every name before it is joined onto a path. */
import { YepError } from '../errors.js';

export const NAME_RE = /^[A-Za-z0-9_-]+$/;
/** Names longer than this are refused: they serve no one and break some filesystems. */
export const NAME_MAX = 128;
export const CRATE_PREFIX = 'yolop-extension-';

export function isValidName(name: string): boolean {
  return name.length > 0 && name.length <= NAME_MAX && NAME_RE.test(name);
}

/** Throw E_NAME unless `name` passes the rule. `what` says where the name came from. */
export function assertValidName(name: string, what = 'extension name'): string {
  if (!isValidName(name)) {
    const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
    throw new YepError('E_NAME', `Invalid ${what} ${shown}: names must match ^[A-Za-z0-9_-]+$ (at most ${NAME_MAX} characters).`, {
      hint: 'Use the extension name as `yep-ext list` shows it, e.g. `lsp`.',
    });
  }
  return name;
}

/**
 * The extension name a user means: `yolop-extension-lsp` (the crate spelling) and
 * `lsp` both mean `lsp`. Validated.
 */
export function normalizeExtensionName(input: string): string {
  const trimmed = input.trim();
  const name = trimmed.startsWith(CRATE_PREFIX) && trimmed.length > CRATE_PREFIX.length ? trimmed.slice(CRATE_PREFIX.length) : trimmed;
  return assertValidName(name);
}
