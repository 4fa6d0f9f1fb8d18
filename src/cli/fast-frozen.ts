/**
 * The oclif-free runner of `install --frozen [--lockfile <file>]` when every entry
 * is already installed as locked (a warm CI cache): dist/bundle/fast-frozen.cjs,
 * ~40% of fast-net-run.cjs's bytes, without the fetching code (every source kind,
 * the download, the unpacker; core/operations/frozen-fetch.ts) that a warm run
 * never calls (docs/performance.md, round six).
 *
 * It runs the same body as every other path (frozen-run.ts through
 * fast-net-shape.ts). When some entry must be fetched, frozen.ts imports
 * frozen-fetch.ts, which this bundle replaces with a module that throws
 * FROZEN_HAND_OVER (scripts/build-cli.mjs): that import comes before frozen.ts
 * tells anything per entry, and up to it nothing was written but what taking the
 * installer lock did (recovery of a dead process's change, idempotent, told once
 * as it would be anyway). Then this returns false, and the caller runs the same
 * shape with the full runner (fast-net-run.cjs), from the start.
 */
import type { FastNetShape } from './fast-net.js';
import { runShape } from './fast-net-shape.js';
import { runFrozen } from './frozen-run.js';

/** Thrown (as a property key set to true) by the stand-in for frozen-fetch.ts; the same key as in scripts/build-cli.mjs. */
export const FROZEN_HAND_OVER = Symbol.for('yep-ext.frozen-hand-over');

const isHandOver = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[FROZEN_HAND_OVER] === true;

/** Run an accepted `install --frozen` shape; false, with nothing told, when an entry must be fetched. */
export async function runFastFrozen(shape: FastNetShape): Promise<boolean> {
  if (shape.command !== 'install' || !shape.flags.frozen) return false;
  const { flags } = shape;
  try {
    // As runInstall calls it for this shape (fast-net-run.ts's flags: no --enable, no --ignore-engines, no --git-mirror).
    await runShape(
      shape,
      (io) => runFrozen(io, flags.lockfile, flags.index, false, false, { quiet: flags.quiet, verbose: flags.verbose }, undefined),
      isHandOver,
    );
    return true;
  } catch (e) {
    if (isHandOver(e)) return false;
    throw e;
  }
}
