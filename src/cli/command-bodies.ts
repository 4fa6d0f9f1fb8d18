/**
 * The bodies of the commands the oclif-free runner serves (fast-cmd.ts): each
 * command's `run()` after `this.parse`, one function that the oclif command
 * (src/commands/<id>.ts) and the runner (fast-cmd-run.ts) both call, so both
 * print, return and fail identically. Output goes through a CommandIo; the
 * returned value is the --json document. A command joins the runner by
 * appearing in BODIES: the build extracts its argument definitions from its
 * oclif class (static-shape.ts) and the runner parses its plain shapes with them.
 *
 * Each body lives in its own module, imported on first use: a runner process
 * evaluates only the code of the command it runs (enable's ajv is not disable's).
 */
import type { CommandIo } from './command-io.js';

/** What oclif's `this.parse` returns that the bodies read (args, flags and, for strict: false, argv). */
export interface ParsedCommand {
  args: Record<string, string | undefined>;
  flags: Record<string, unknown>;
  argv: string[];
}

export type CommandBody = (io: CommandIo, parsed: ParsedCommand) => Promise<unknown>;

/** Command id -> its body, loaded on demand. */
export const BODIES: Record<string, () => Promise<CommandBody>> = {
  enable: async () => (await import('./enable-run.js')).enableCommand,
  disable: async () => (await import('./disable-run.js')).disableCommand,
  remove: async () => (await import('./remove-run.js')).removeCommand,
  'set-secret': async () => (await import('./set-secret-run.js')).setSecretCommand,
  verify: async () => (await import('./verify-run.js')).verifyCommand,
};
