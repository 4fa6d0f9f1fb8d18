/**
 * What `yep-ext doctor <target>` names: a package directory or an installed
 * extension. A module of its own (no doctor code) so that the CLI's early server
 * start (src/cli/doctor-early.ts) reads targets exactly as doctor does.
 */
import { isAbsolute, join, resolve } from 'node:path';
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
