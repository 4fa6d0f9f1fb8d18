/**
 * The argument definitions of a command, read from its oclif class (its static
 * args, flags, baseFlags and json flag) into plain data the oclif-free runner
 * (fast-cmd.ts) parses with: run by `npm run build` (scripts/build-cli.mjs), which
 * inlines the result into dist/bundle/fast-cmd.cjs, and by the unit test that
 * compares that parser with oclif's own (test/unit/fast-cmd-args.test.ts).
 *
 * Only what the runner's parser reproduces exactly is accepted: string and
 * boolean flags with oclif's own parse function, optional `char`, `multiple`
 * (non-greedy only), `allowNo`, `exclusive` and `options`; string arguments with
 * `ignoreStdin`. Anything else (an env-backed or defaulted flag, a custom parse,
 * a delimiter, dependsOn, deprecations, a variadic or defaulted argument, a
 * subcommand under the id) makes `staticShape` return the reason instead, and
 * the build fails: a command with a body in command-bodies.ts must be plain.
 */
import { Args, Flags, type Command } from '@oclif/core';

export interface FastFlagDef {
  type: 'boolean' | 'option';
  char?: string;
  multiple?: boolean;
  allowNo?: boolean;
  exclusive?: string[];
  options?: string[];
}

export interface FastArgDef {
  name: string;
  required: boolean;
}

export interface FastCommandDef {
  id: string;
  /** The id and every alias: what argv[0] may be. */
  names: string[];
  strict: boolean;
  args: FastArgDef[];
  flags: Record<string, FastFlagDef>;
}

type Loose = Record<string, unknown>;

const BUILTIN_PARSE = new Set([Flags.boolean().parse, Flags.string().parse, Args.string().parse].map((f) => String(f)));
/** Keys that change how oclif reads or reports a flag, beyond what the runner's parser does. */
const FLAG_EXTRAS = [
  'env',
  'default',
  'defaultHelp',
  'delimiter',
  'dependsOn',
  'exactlyOne',
  'relationships',
  'deprecated',
  'deprecateAliases',
  'aliases',
  'charAliases',
  'allowStdin',
];

/** `ctor`'s definitions as plain data, or why the runner cannot parse for it. */
export function staticShape(id: string, ctor: typeof Command, allIds: readonly string[]): FastCommandDef | { id: string; reason: string } {
  const no = (reason: string) => ({ id, reason });
  const c = ctor as unknown as Loose;
  if (c.state === 'deprecated' || c.deprecateAliases || c.deprecationOptions) return no('deprecated');
  if (c['--'] === false) return no("'--' handling changed");
  if (allIds.some((other) => other.startsWith(`${id}:`))) return no('has subcommands (oclif would read the next word as part of the id)');
  const declared: Record<string, Loose> = { ...((c.baseFlags as Record<string, Loose>) ?? {}), ...((c.flags as Record<string, Loose>) ?? {}) };
  if (c.enableJsonFlag && !declared.json) declared.json = Flags.boolean() as unknown as Loose;
  const flags: Record<string, FastFlagDef> = {};
  for (const [name, f] of Object.entries(declared)) {
    if (name === 'help' || name === 'version' || f.char === 'h' || f.char === 'v') return no(`flag ${name} is a help or version flag`);
    if (f.type !== 'boolean' && f.type !== 'option') return no(`flag ${name}: type ${String(f.type)}`);
    if (!BUILTIN_PARSE.has(String(f.parse))) return no(`flag ${name}: its own parse function`);
    const extra = FLAG_EXTRAS.find((k) => f[k] !== undefined && !(Array.isArray(f[k]) && (f[k] as unknown[]).length === 0));
    if (extra) return no(`flag ${name}: ${extra}`);
    if (f.required === true) return no(`flag ${name}: required`);
    if (f.multiple && !f.multipleNonGreedy) return no(`flag ${name}: greedy multiple`);
    flags[name] = {
      type: f.type,
      ...(typeof f.char === 'string' ? { char: f.char } : {}),
      ...(f.multiple ? { multiple: true } : {}),
      ...(f.allowNo ? { allowNo: true } : {}),
      ...(Array.isArray(f.exclusive) && f.exclusive.length > 0 ? { exclusive: f.exclusive as string[] } : {}),
      ...(Array.isArray(f.options) ? { options: f.options as string[] } : {}),
    };
  }
  const args: FastArgDef[] = [];
  for (const [name, a] of Object.entries((c.args as Record<string, Loose>) ?? {})) {
    if (!BUILTIN_PARSE.has(String(a.parse))) return no(`arg ${name}: its own parse function`);
    if (a.ignoreStdin !== true) return no(`arg ${name}: may be read from standard input`);
    if (a.default !== undefined || a.multiple || a.options !== undefined) return no(`arg ${name}: default, multiple or options`);
    if (args.length > 0 && !args.at(-1)!.required && a.required) return no(`arg ${name}: required after an optional one`);
    args.push({ name, required: a.required === true });
  }
  const aliases = [...((c.aliases as string[]) ?? []), ...((c.hiddenAliases as string[]) ?? [])];
  return { id, names: [id, ...aliases], strict: c.strict !== false, args, flags };
}
