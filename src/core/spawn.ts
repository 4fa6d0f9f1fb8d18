/**
 * The production process spawner (ctx.spawn): node's child_process.spawn, loaded
 * on the first call. Loading node:child_process costs milliseconds at start-up,
 * and most runs (`list`, `--help`) never start a process.
 */
import { createRequire } from 'node:module';
import type { Spawn } from './context.js';

let real: typeof import('node:child_process').spawn | undefined;

export const systemSpawn: Spawn = (command, args, options) => {
  // Any absolute path resolves a builtin; this one works in the ESM and the CommonJS bundle alike.
  real ??= (createRequire(process.execPath)('node:child_process') as typeof import('node:child_process')).spawn;
  return real(command, args, options);
};
