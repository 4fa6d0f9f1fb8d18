/** The CLI's Logger: everything on stderr; progress drawn only when stderr is a TTY. */
import type { Logger, Progress } from '../core/log.js';
import { dim, yellow } from './style.js';

function formatBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(0)} KiB` : `${n} B`;
}

export function stderrLogger(options: { debug?: boolean; quiet?: boolean } = {}): Logger {
  // process.stderr is a lazy getter that loads Node's stream stack (~5 ms): only
  // touch it when something is actually written.
  const write = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  return {
    info: (m) => {
      if (!options.quiet) write(m);
    },
    warn: (m) => write(`${yellow('warning', process.stderr)}: ${m}`),
    debug: (m) => {
      if (options.debug) write(dim(`debug: ${m}`, process.stderr));
    },
    progress(label: string, total?: number): Progress {
      const err = process.stderr;
      if (!err.isTTY || options.quiet) return { update() {}, stop() {} };
      let last = 0;
      let drawn = false;
      return {
        update(done: number, t?: number) {
          const now = Date.now();
          if (now - last < 100) return;
          last = now;
          const all = t ?? total;
          const width = 24;
          const bar = all ? '█'.repeat(Math.min(width, Math.round((done / all) * width))).padEnd(width, '░') : '';
          err.write(`\r\u001b[2K${label} ${bar} ${formatBytes(done)}${all ? ` / ${formatBytes(all)}` : ''}`);
          drawn = true;
        },
        stop() {
          if (drawn) err.write('\r\u001b[2K');
        },
      };
    },
  };
}
