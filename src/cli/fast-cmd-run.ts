/**
 * Runs a shape fast-cmd.ts accepted, the way oclif would run the command: the
 * command's body (command-bodies.ts) with the parse oclif would have given it,
 * through fast-net-shape.ts's runShape (oclif's output, --json document and
 * error report). Its own file (dist/bundle/fast-cmd-run.cjs): required only
 * once a shape is accepted.
 */
import { BODIES } from './command-bodies.js';
import type { FastCmdShape } from './fast-cmd.js';
import { runShape } from './fast-net-shape.js';

export async function runFastCmdShape(shape: FastCmdShape): Promise<void> {
  const load = BODIES[shape.command];
  if (!load) throw new Error(`no body for ${shape.command}`);
  const body = await load();
  await runShape({ command: shape.command, flags: { json: shape.json }, argv: shape.rest }, (io) =>
    body(io, { args: shape.args, flags: shape.flags, argv: shape.argv }),
  );
}
