/**
 * Where stdout goes, for the table renderers: a terminal (and how wide), or not.
 * Shared by the commands and the oclif-free `list` fast path, so both decide
 * alike. Cheap when stdout is a pipe or a file (the common case for scripts and
 * the one the start-up benchmark measures): one fstat, since only a character
 * device can be a terminal; `process.stdout` (which loads Node's tty and stream
 * modules) is touched only for a character device.
 */
import { fstatSync } from 'node:fs';

export interface OutputShape {
  tty: boolean;
  /** Terminal columns (0 when not a terminal). */
  width: number;
}

/** COLUMNS, when set to a positive integer: the user's (or the shell's) word on the width. */
function columnsFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env.COLUMNS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export function stdoutShape(env: NodeJS.ProcessEnv = process.env): OutputShape {
  let charDevice = false;
  try {
    charDevice = fstatSync(1).isCharacterDevice();
  } catch {
    // stdout closed: not a terminal.
  }
  if (!charDevice || !process.stdout.isTTY) return { tty: false, width: 0 };
  return { tty: true, width: columnsFromEnv(env) ?? (process.stdout.columns || 80) };
}
