/**
 * Where stdout goes, for the table renderers and help: a terminal (and how wide),
 * or not. Read from the run's io (cli-io.ts): isatty() decided the TTY-ness without
 * building process.stdout, which is touched for its width only on a terminal.
 */
import { columnsFromEnv, type CliIo } from './cli-io.js';

export interface OutputShape {
  tty: boolean;
  /** Terminal columns (0 when not a terminal). */
  width: number;
}

export function stdoutShape(io: Pick<CliIo, 'stdout' | 'env'>): OutputShape {
  if (!io.stdout.isTTY) return { tty: false, width: 0 };
  return { tty: true, width: columnsFromEnv(io.env) ?? (io.stdout.columns || 80) };
}

/**
 * The width help text wraps at: COLUMNS when set, else the terminal stdout is, else
 * the terminal stderr is (`yep-ext --help | less` shows on that same terminal), else 80.
 */
export function helpWidth(io: Pick<CliIo, 'stdout' | 'stderr' | 'env'>): number {
  const width = columnsFromEnv(io.env) ?? (io.stdout.isTTY ? io.stdout.columns : io.stderr.isTTY ? io.stderr.columns : 0);
  return width > 0 ? width : 80;
}
