/**
 * The CLI's Logger: everything on stderr. Waits (steps) are drawn live only
 * when stderr is a terminal (status-area.ts); without one, stderr stays quiet
 * for scripts unless --verbose asks for plain line-per-step logs (what a CI log
 * wants). --quiet keeps only warnings and errors. docs/feedback.md.
 */
import type { Logger, Step, StepState } from '../core/log.js';
import { redactUrls } from '../core/text/redact.js';
import { sanitize } from '../core/text/sanitize.js';
import { formatBytes, formatDuration, stderrStatus } from './status-area.js';
import { dim, yellow } from './style.js';
import type { OutStream } from './cli-io.js';

export interface StderrLoggerOptions {
  /** YEP_EXT_DEBUG: developer detail. */
  debug?: boolean;
  /** --quiet: warnings and errors only. */
  quiet?: boolean;
  /** --verbose: request-level detail, and line-per-step logs when stderr is not a terminal. */
  verbose?: boolean;
  /** The run's stderr (cli-io.ts). */
  out: OutStream;
}

const noStep: Step = { update() {}, note() {}, end() {} };

export function stderrLogger(options: StderrLoggerOptions): Logger {
  const { out } = options;
  const tty = (): boolean => out.isTTY;
  // Every line, whoever wrote it (info, warnings, debug detail, step labels), shows URLs one way.
  const write = (text: string): void => {
    const line = redactUrls(text);
    if (tty()) stderrStatus().print(line);
    else out.write(`${line}\n`);
  };
  const detailed = Boolean(options.verbose || options.debug) && !options.quiet;
  return {
    info: (m) => {
      if (!options.quiet) write(m);
    },
    warn: (m) => write(`${yellow('warning', out)}: ${m}`),
    debug: (m) => {
      if (options.debug) write(dim(`debug: ${m}`, out));
    },
    verbose: (m) => {
      if (detailed) write(dim(sanitize(m), out));
    },
    step(label: string, state: StepState = {}): Step {
      if (options.quiet) return noStep;
      const shown = sanitize(label, { max: 300 });
      if (tty()) return liveStep(shown, state, out);
      return options.verbose ? plainStep(shown, state, write) : noStep;
    },
  };
}

/** A step drawn in the live display. */
function liveStep(label: string, state: StepState, out: OutStream): Step {
  const area = stderrStatus();
  const live = area.add(label, state);
  let ended = false;
  return {
    update: (s) => {
      if (!ended) area.update(live, s);
    },
    note: (m) => {
      if (!ended) area.print(`  ${yellow('↻', out)} ${sanitize(m, { max: 500 })}`);
    },
    end: () => {
      if (ended) return;
      ended = true;
      area.remove(live);
    },
  };
}

/** Without a terminal, with --verbose: a line when a step starts, each note, and one when it ends. */
function plainStep(label: string, initial: StepState, write: (line: string) => void): Step {
  const started = Date.now();
  const state: StepState = { ...initial };
  let ended = false;
  write(`${label}…`);
  return {
    update: (s) => Object.assign(state, s),
    note: (m) => {
      if (!ended) write(`  retry: ${sanitize(m, { max: 500 })}`);
    },
    end: () => {
      if (ended) return;
      ended = true;
      const size = state.unit === 'bytes' && state.done !== undefined ? `${formatBytes(state.done)} in ` : '';
      write(`${label}: done (${size}${formatDuration(Date.now() - started)})`);
    },
  };
}
