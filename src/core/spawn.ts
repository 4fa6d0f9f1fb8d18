/**
 * The production process spawner (ctx.spawn): node's child_process.spawn, loaded
 * on the first call. Loading node:child_process costs milliseconds at start-up,
 * and most runs (`list`, `--help`) never start a process.
 */
import { builtin } from './builtin.js';
import type { Spawn } from './context.js';

let real: typeof import('node:child_process').spawn | undefined;

export const systemSpawn: Spawn = (command, args, options) => {
  real ??= builtin<typeof import('node:child_process')>('node:child_process').spawn;
  return real(command, args, options);
};
