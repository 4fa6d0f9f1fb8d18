/**
 * The oclif-free runner's front door for the commands with a shared body
 * (command-bodies.ts: enable, disable, remove and its aliases, set-secret,
 * verify). Loading and configuring oclif costs more than these commands' own
 * work (docs/performance.md, round eight).
 *
 * This module only decides (it is all of dist/bundle/fast-cmd.cjs, which
 * bin/run.js asks before every oclif run): an argument list that
 * fast-cmd-args.ts parses with the command's own definitions (extracted from its
 * oclif class at build time, static-shape.ts, and inlined here as
 * YEP_EXT_FAST_COMMANDS), in an environment where oclif would print nothing
 * extra, is handed to fast-cmd-run.ts (its own file, loaded only then);
 * anything else returns false having done nothing, and the caller runs oclif.
 * test/cli/fast-cmd.test.ts runs every accepted shape both ways and compares the
 * bytes and the state they leave.
 */
import { parseCommandArgs, type ParsedShape } from './fast-cmd-args.js';
import { oclifWouldDiffer } from './fast-path-env.js';
import type { FastCommandDef } from './static-shape.js';

declare const YEP_EXT_FAST_COMMANDS: FastCommandDef[] | undefined;

/** What fast-cmd-run.ts runs: the command's id, its parse, and argv after the command name. */
export interface FastCmdShape extends ParsedShape {
  command: string;
  json: boolean;
  rest: string[];
}

/** The definitions the build inlined (none when this module runs unbundled: then it declines everything). */
function definitions(): FastCommandDef[] {
  return typeof YEP_EXT_FAST_COMMANDS === 'undefined' ? [] : YEP_EXT_FAST_COMMANDS;
}

/** `argv` (without the program) as a shape the runner takes, else undefined. */
export function fastCmdShape(argv: readonly string[], defs: readonly FastCommandDef[] = definitions()): FastCmdShape | undefined {
  const [name, ...rest] = argv;
  const def = name === undefined ? undefined : defs.find((d) => d.names.includes(name));
  if (!def) return undefined;
  const parsed = parseCommandArgs(def, rest);
  if (!parsed) return undefined;
  return { command: def.id, json: parsed.flags.json === true, rest, ...parsed };
}

/**
 * Run `argv` (process.argv.slice(2)) without oclif if it is a shape we handle:
 * `load` (bin/run.js) returns dist/bundle/fast-cmd-run.cjs, which runs it.
 * False, having done nothing, when the caller must run oclif.
 */
export async function runFastCommand(argv: string[], load: () => typeof import('./fast-cmd-run.js')): Promise<boolean> {
  const shape = fastCmdShape(argv);
  if (!shape || oclifWouldDiffer(process.env, shape.json)) return false;
  await load().runFastCmdShape(shape);
  return true;
}
