/**
 * Which installed extension a user means. `yolop-extension-lsp` (the crate
 * spelling) means `lsp` -- unless an extension is installed under the exact
 * name typed, which always wins (a manifest may be named `yolop-extension-x`).
 */
import { lstatSync } from 'node:fs';
import { assertValidName, normalizeExtensionName } from '../package/names.js';
import { packageDir, type Paths } from '../paths.js';

export function resolveExtensionName(paths: Paths, input: string): string {
  const exact = input.trim();
  try {
    assertValidName(exact);
    lstatSync(packageDir(paths, exact));
    return exact;
  } catch {
    return normalizeExtensionName(input);
  }
}
