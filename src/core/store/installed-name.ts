/**
 * Which installed extension a user means. `yolop-extension-lsp` (the crate
 * spelling) means `lsp` -- unless an extension is installed under the exact
 * name typed, which always wins (a manifest may be named `yolop-extension-x`).
 */
import { lstatSync, readdirSync } from 'node:fs';
import { assertValidName, isValidName, normalizeExtensionName } from '../package/names.js';
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

/** Names of the packages in the store (for "did you mean"); [] when the store cannot be read. */
export function installedNames(paths: Paths): string[] {
  try {
    return readdirSync(paths.storeDir).filter((n) => isValidName(n) && !n.startsWith('.'));
  } catch {
    return [];
  }
}
