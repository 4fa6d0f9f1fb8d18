/**
 * The argument parser of the oclif-free runner (fast-cmd.ts): reads
 * `<command> <args…>` with the command's own definitions (static-shape.ts) and
 * returns what oclif's `this.parse` would (args, flags, argv), or undefined for
 * anything it does not reproduce exactly. It accepts a strict subset of oclif's
 * grammar: positional arguments (within the declared count unless the command
 * is not strict, every required one present), `--flag`, `--no-flag` (allowNo),
 * `--flag value` / `--flag=value` / `-c value` for string flags (once, or
 * repeated for a multiple flag; within its options), each boolean once, and no
 * flag conflict (exclusive). It declines `--`, `-`, empty words, values that
 * start with `-`, clustered or attached short flags, help and version flags and
 * anything undeclared: oclif then runs and says what it says about them.
 * test/unit/fast-cmd-args.test.ts checks it against oclif's parser.
 */
import type { FastCommandDef } from './static-shape.js';

export interface ParsedShape {
  args: Record<string, string>;
  flags: Record<string, boolean | string | string[]>;
  argv: string[];
}

const plainValue = (v: string | undefined): v is string => v !== undefined && v !== '' && !v.startsWith('-');

/** `rest` (argv after the command name) as oclif would parse it for `def`, or undefined. */
export function parseCommandArgs(def: FastCommandDef, rest: readonly string[]): ParsedShape | undefined {
  const positionals: string[] = [];
  const flags: Record<string, boolean | string | string[]> = {};
  const byChar = new Map(Object.entries(def.flags).flatMap(([name, f]) => (f.char ? [[f.char, name] as const] : [])));
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === '' || a === '-' || a === '--' || a === '--help' || a === '-h' || a === '--version' || a === '-v') return undefined;
    if (!a.startsWith('-')) {
      positionals.push(a);
      continue;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = a.slice(2, eq < 0 ? undefined : eq);
      if (eq >= 0) inline = a.slice(eq + 1);
      if (!def.flags[name] && name.startsWith('no-') && inline === undefined) {
        const positive = name.slice(3);
        const f = def.flags[positive];
        if (f?.type !== 'boolean' || !f.allowNo || positive in flags) return undefined;
        flags[positive] = false;
        continue;
      }
    } else {
      if (a.length !== 2) return undefined;
      name = byChar.get(a[1]!);
    }
    const f = name === undefined ? undefined : def.flags[name];
    if (!f || name === undefined) return undefined;
    if (f.type === 'boolean') {
      if (inline !== undefined || name in flags) return undefined;
      flags[name] = true;
      continue;
    }
    const value = inline ?? rest[++i];
    if (!plainValue(value) || (f.options && !f.options.includes(value))) return undefined;
    if (f.multiple) flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
    else if (name in flags) return undefined;
    else flags[name] = value;
  }
  for (const [name, f] of Object.entries(def.flags)) {
    if (name in flags && f.exclusive?.some((other) => other in flags)) return undefined;
  }
  if (def.strict && positionals.length > def.args.length) return undefined;
  const args: Record<string, string> = {};
  for (const [i, arg] of def.args.entries()) {
    const v = positionals[i];
    if (v === undefined) {
      if (arg.required) return undefined;
    } else {
      args[arg.name] = v;
    }
  }
  // oclif's argv: the arguments and any extra words, in their order on the command line.
  const argv = [...positionals].sort((x, y) => rest.indexOf(x) - rest.indexOf(y));
  return { args, flags, argv };
}
