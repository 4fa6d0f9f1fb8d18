/**
 * Where a crate lives in a sparse index (cargo's rule, crates-io.md "Sparse index"):
 * the path comes from the lower-cased name; `-` and `_` are not folded.
 */
import { YepError } from '../../errors.js';

const CRATE_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** Throw unless `name` could be a crate name; it is about to become a URL path. */
export function assertCrateName(name: string): string {
  if (!CRATE_NAME_RE.test(name)) {
    throw new YepError('E_USAGE', `${JSON.stringify(name.slice(0, 80))} is not a valid crate name.`, {
      hint: 'Crate names use letters, digits, `-` and `_` (at most 64 characters).',
    });
  }
  return name;
}

/** The directory part for `name` (`1`, `2`, `3/a`, `ab/cd`), keeping the case as given. */
export function dirPrefix(name: string): string {
  switch (name.length) {
    case 1:
      return '1';
    case 2:
      return '2';
    case 3:
      return `3/${name[0]}`;
    default:
      return `${name.slice(0, 2)}/${name.slice(2, 4)}`;
  }
}

/** Index file path relative to the root: `yolop-extension-lsp` -> `yo/lo/yolop-extension-lsp`. */
export function indexPath(name: string): string {
  const lower = assertCrateName(name).toLowerCase();
  return `${dirPrefix(lower)}/${lower}`;
}
