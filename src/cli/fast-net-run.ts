/**
 * Runs a shape fast-net.ts accepted, the way oclif would run the command: the
 * same command body (install-run.ts, update-run.ts) and Context, through
 * fast-net-shape.ts (oclif's output and error report). Its own file
 * (dist/bundle/fast-net-run.cjs): required only once a shape is accepted.
 */
import type { FastNetShape } from './fast-net.js';
import { runShape } from './fast-net-shape.js';
import { runInstall } from './install-run.js';
import { runUpdate } from './update-run.js';

export async function runFastNetShape(shape: FastNetShape): Promise<void> {
  await runShape(shape, (io) =>
    shape.command === 'install'
      ? runInstall(io, { ...shape.flags, 'allow-fresh': false, force: false, enable: false, 'ignore-engines': false, 'dry-run': false }, shape.args)
      : runUpdate(io, { ...shape.flags, 'dry-run': false, 'ignore-engines': false }, shape.args),
  );
}
