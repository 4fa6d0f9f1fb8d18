/**
 * What `yep-ext doctor <target>` names: a package directory or an installed
 * extension. A module of its own (no doctor code) so that the CLI's early server
 * start (src/cli/doctor-early.ts) reads targets exactly as doctor does.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { YepError } from '../errors.js';
import { normalizeExtensionName } from '../package/names.js';

export type DoctorTarget =
  | {
      kind: 'installed';
      name: string;
      /** What was typed (an exact installed name wins over the crate spelling). */
      raw?: string;
    }
  | { kind: 'path'; dir: string };

/** `./dir`, `../dir`, `/abs`, `dir/sub`, `~/dir` and `.` are paths; anything else is an extension name. */
export function parseDoctorTarget(arg: string, cwd: string, home?: string): DoctorTarget {
  const looksLikePath = arg.includes('/') || arg.includes('\\') || arg === '.' || arg === '..' || arg === '~';
  if (!looksLikePath) return { kind: 'installed', name: normalizeExtensionName(arg), raw: arg };
  // A quoted `~/x` reaches us unexpanded.
  const expanded = home && (arg === '~' || arg.startsWith('~/')) ? join(home, arg.slice(1)) : arg;
  return { kind: 'path', dir: isAbsolute(expanded) ? expanded : resolve(cwd, expanded) };
}

/**
 * What `yep-ext doctor` alone checks: the package in the working directory (`.`),
 * as cargo and npm act on the project they are run in; elsewhere, a usage error
 * that says what to name.
 */
export function defaultDoctorTarget(cwd: string): string {
  if (existsSync(join(cwd, 'plugin.json'))) return '.';
  throw new YepError('E_USAGE', '`yep-ext doctor` needs TARGET: an installed extension name, or a package directory (there is no plugin.json here).', {
    hint: 'For example: yep-ext doctor lsp, or yep-ext doctor ./my-ext (`yep-ext doctor` alone checks the package you are in).',
  });
}
