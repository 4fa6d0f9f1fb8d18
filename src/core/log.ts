/**
 * Core never prints: it reports through a Logger the CLI supplies. The CLI's
 * logger writes to stderr (waits drawn only on a TTY; docs/feedback.md); tests
 * collect messages. Every wait that can last (a request, a download, a clone,
 * an unpack, a hash, a spawn) is a Step, so the user sees what yep-ext is doing
 * and until when it will keep trying.
 */

/** What a Step says about itself; every field is optional and merged on update. */
export interface StepState {
  /** Units done so far (bytes for a download, objects for a clone). */
  done?: number;
  /** Units in all, when known. */
  total?: number;
  /** What `done`/`total` count: `bytes` get a rate and an ETA. */
  unit?: 'bytes' | 'objects' | 'files' | 'percent';
  /** The wait gives up at this instant (epoch ms): shown as a countdown. 0 clears it. */
  deadlineAt?: number;
  /** Waiting to try again until this instant (epoch ms): shown as a countdown. 0 clears it. */
  retryAt?: number;
  /** A short qualifier: "attempt 2/3", "receiving objects". Empty string clears it. */
  detail?: string;
}

/** A wait in progress. `end` is idempotent; call it in a `finally`. */
export interface Step {
  update(state: StepState): void;
  /** A line worth keeping (a retry and why): printed above the live display on a TTY. */
  note(message: string): void;
  end(): void;
}

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
  /** Request-level detail (each HTTP request and answer, each git command): shown with --verbose. */
  verbose?(message: string): void;
  /** Begin a wait that may take a while (the CLI shows it on a TTY once it lasts ~300 ms). */
  step?(label: string, state?: StepState): Step;
}

const noStep: Step = { update() {}, note() {}, end() {} };

/** Begin a step on any Logger (a Logger without `step` gets a no-op). */
export function startStep(log: Logger, label: string, state?: StepState): Step {
  return log.step?.(label, state) ?? noStep;
}

/** Request-level detail on any Logger (falls back to `debug`). */
export function logVerbose(log: Logger, message: string): void {
  if (log.verbose) log.verbose(message);
  else log.debug(message);
}

/** Run `work` inside a step that ends however `work` ends. */
export async function withStep<T>(log: Logger, label: string, work: (step: Step) => Promise<T>, state?: StepState): Promise<T> {
  const step = startStep(log, label, state);
  try {
    return await work(step);
  } finally {
    step.end();
  }
}

/** A logger that drops everything (library use, tests). */
export const silentLogger: Logger = {
  info() {},
  warn() {},
  debug() {},
  verbose() {},
  step: () => noStep,
};

export interface RecordedStep {
  label: string;
  /** Every state the step went through, the first one included. */
  states: StepState[];
  notes: string[];
  ended: boolean;
}

/** A logger that records messages and steps: handy in tests. */
export function memoryLogger(): Logger & { lines: { level: string; message: string }[]; steps: RecordedStep[] } {
  const lines: { level: string; message: string }[] = [];
  const steps: RecordedStep[] = [];
  return {
    lines,
    steps,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    debug: (message) => lines.push({ level: 'debug', message }),
    verbose: (message) => lines.push({ level: 'verbose', message }),
    step(label, state) {
      const rec: RecordedStep = { label, states: [{ ...state }], notes: [], ended: false };
      steps.push(rec);
      return {
        update: (s) => rec.states.push({ ...s }),
        note: (m) => rec.notes.push(m),
        end: () => {
          rec.ended = true;
        },
      };
    },
  };
}
