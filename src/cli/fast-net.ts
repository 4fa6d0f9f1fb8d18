/**
 * The oclif-free runner's front door for the plain shapes of the network
 * commands (docs/performance.md, round four): `install <spec>...`,
 * `install --frozen [--lockfile <file>]` and `update --all` / `update <name>...`,
 * with any of --json, --yes/-y, --quiet/-q, --verbose and --index <url>.
 * Loading and configuring oclif costs more than a small install's own work.
 *
 * This module only decides (it is all of dist/bundle/fast-net.cjs, parsed on
 * every install and update): an argument list whose meaning is unambiguous, in
 * an environment where oclif would print nothing extra, is handed to
 * fast-net-run.ts (its own file, which bin/run.js loads only then); anything else (help,
 * another flag, a repeated flag, `--`, an empty argument, a debug variable)
 * returns false having done nothing, and the caller runs oclif. Both paths run
 * the same command bodies (install-run.ts, update-run.ts);
 * test/cli/fast-net.test.ts runs every shape both ways and compares the bytes
 * and the state they leave.
 */
import { oclifWouldDiffer } from './fast-path-env.js';

interface Common {
  json: boolean;
  yes: boolean;
  quiet: boolean;
  verbose: boolean;
  index?: string;
}

export type FastNetShape =
  | { command: 'install'; flags: Common & { frozen: boolean; lockfile?: string }; args: string[]; argv: string[] }
  | { command: 'update'; flags: Common & { all: boolean }; args: string[]; argv: string[] };

/** A flag value we take as given: not empty and not flag-like (oclif's own reading of those differs by case). */
const plainValue = (v: string | undefined): v is string => v !== undefined && v !== '' && !v.startsWith('-');

/**
 * The shape of `install …` / `update …` (argv without the program) when every
 * argument is one we fully understand, else undefined.
 */
export function parseFastNetArgs(argv: string[]): FastNetShape | undefined {
  const [command, ...rest] = argv;
  if (command !== 'install' && command !== 'update') return undefined;
  const booleans: Record<string, string> = { '--json': 'json', '--yes': 'yes', '-y': 'yes', '--quiet': 'quiet', '-q': 'quiet', '--verbose': 'verbose' };
  if (command === 'install') booleans['--frozen'] = 'frozen';
  else booleans['--all'] = 'all';
  const options = command === 'install' ? ['index', 'lockfile'] : ['index'];
  const seen = new Set<string>();
  const flags: Record<string, boolean | string> = {};
  const args: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    let key: string | undefined;
    let value: boolean | string = true;
    if (booleans[a]) {
      key = booleans[a];
    } else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      if (!options.includes(name)) return undefined;
      const v = eq < 0 ? rest[++i] : a.slice(eq + 1);
      if (!plainValue(v)) return undefined;
      key = name;
      value = v;
    } else if (a !== '' && !a.startsWith('-')) {
      args.push(a);
      continue;
    } else {
      return undefined;
    }
    if (seen.has(key)) return undefined;
    seen.add(key);
    flags[key] = value;
  }
  const common: Common = {
    json: flags.json === true,
    yes: flags.yes === true,
    quiet: flags.quiet === true,
    verbose: flags.verbose === true,
    ...(typeof flags.index === 'string' ? { index: flags.index } : {}),
  };
  // oclif refuses these combinations with a usage error of its own: its words, not ours.
  if (common.quiet && common.verbose) return undefined;
  if (command === 'update') return { command, flags: { ...common, all: flags.all === true }, args, argv: rest };
  const frozen = flags.frozen === true;
  if (typeof flags.lockfile === 'string' && !frozen) return undefined;
  // `install --frozen <spec>` and a bare `install` are usage errors: left to oclif, where they are rare.
  if (frozen ? args.length > 0 : args.length === 0) return undefined;
  return { command, flags: { ...common, frozen, ...(typeof flags.lockfile === 'string' ? { lockfile: flags.lockfile } : {}) }, args, argv: rest };
}

/**
 * Run `argv` (process.argv.slice(2)) without oclif if it is a shape we handle:
 * `load` (bin/run.js) sets up V8 as the oclif path does for a network command
 * and returns dist/bundle/fast-net-run.cjs, which runs it. An `install --frozen`
 * is tried first with `loadFrozen`'s dist/bundle/fast-frozen.cjs (no fetching
 * code), which hands over to the former when an entry must be fetched
 * (fast-frozen.ts). False, having done nothing, when the caller must run oclif.
 */
export async function runFastNet(
  argv: string[],
  load: () => typeof import('./fast-net-run.js'),
  loadFrozen?: () => typeof import('./fast-frozen.js'),
): Promise<boolean> {
  const shape = parseFastNetArgs(argv);
  if (!shape || oclifWouldDiffer(process.env, shape.flags.json)) return false;
  if (loadFrozen && shape.command === 'install' && shape.flags.frozen && (await loadFrozen().runFastFrozen(shape))) return true;
  await load().runFastNetShape(shape);
  return true;
}
