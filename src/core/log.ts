/**
 * Core never prints: it reports through a Logger the CLI supplies. The CLI's
 * logger writes to stderr (progress only on a TTY); tests collect messages.
 */
export interface Progress {
  /** Advance to `done` of `total` units (bytes, files...). */
  update(done: number, total?: number): void;
  stop(): void;
}

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
  /** A progress display for long work; a no-op when stderr is not a TTY. */
  progress(label: string, total?: number): Progress;
}

const noProgress: Progress = { update() {}, stop() {} };

/** A logger that drops everything (library use, tests). */
export const silentLogger: Logger = {
  info() {},
  warn() {},
  debug() {},
  progress: () => noProgress,
};

/** A logger that records messages: handy in tests. */
export function memoryLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    debug: (message) => lines.push({ level: 'debug', message }),
    progress: () => noProgress,
  };
}
