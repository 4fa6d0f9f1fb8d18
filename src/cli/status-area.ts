/**
 * The live display of waits at the bottom of a terminal's stderr: one line per
 * step that has lasted SHOW_AFTER_MS, redrawn every TICK_MS with a spinner, the
 * elapsed time, bytes/rate/ETA for downloads, and the deadline as a countdown.
 * Anything else written to the terminal (a message on stderr, a result on
 * stdout, a prompt) first clears the display (`clearStatus`), and the next tick
 * draws it again below. Lines are cut to the terminal's width so a redraw can
 * always erase exactly what it drew. Formatting is pure (formatStepLine) and
 * unit-tested; docs/feedback.md says what is shown where.
 */
import type { StepState } from '../core/log.js';

/** A wait shorter than this is never drawn (no flicker for fast requests). */
const SHOW_AFTER_MS = 300;
const TICK_MS = 100;
const MAX_LINES = 4;
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Rate over the last few seconds, so a stall shows as a falling rate. */
const RATE_WINDOW_MS = 3000;

export interface LiveStep {
  label: string;
  state: StepState;
  started: number;
  /** (time, done) samples for the rate, oldest first. */
  samples: { t: number; done: number }[];
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(1)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 10 * 1024) return `${Math.round(n / 1024)} KiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** 9s, 1m 05s, 1h 02m: whole seconds, rounded up (a countdown never shows 0s while waiting). */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** Bytes per second over the recent samples, or undefined before there is a span to measure. */
function rateOf(live: LiveStep, now: number): number | undefined {
  const recent = live.samples.filter((s) => now - s.t <= RATE_WINDOW_MS);
  const first = recent[0] ?? live.samples.at(-1);
  const last = live.samples.at(-1);
  if (!first || !last) return undefined;
  const span = now - first.t;
  if (span < 200) return undefined;
  return Math.max(0, ((last.done - first.done) * 1000) / span);
}

/** One status line (without the spinner), pure: what a step says at `now`. */
export function formatStepLine(live: LiveStep, now: number): string {
  const { state } = live;
  const parts: string[] = [live.label];
  const done = state.done ?? 0;
  if (state.unit === 'bytes' && (state.done !== undefined || state.total !== undefined)) {
    parts.push(state.total ? `${formatBytes(done)} / ${formatBytes(state.total)}` : formatBytes(done));
    const rate = rateOf(live, now);
    if (rate !== undefined) {
      parts.push(`${formatBytes(Math.round(rate))}/s`);
      if (state.total && rate > 0 && done < state.total) parts.push(`ETA ${formatDuration(((state.total - done) / rate) * 1000)}`);
    }
  } else if (state.unit === 'percent' && state.done !== undefined) {
    parts.push(`${Math.round(done)}%`);
  } else if (state.done !== undefined) {
    parts.push(state.total ? `${done}/${state.total} ${state.unit ?? ''}`.trimEnd() : `${done} ${state.unit ?? ''}`.trimEnd());
  }
  const tail: string[] = [formatDuration(now - live.started)];
  if (state.detail) tail.push(state.detail);
  if (state.retryAt) {
    tail.push(`next attempt in ${formatDuration(state.retryAt - now)}`);
  } else if (state.deadlineAt) {
    const left = state.deadlineAt - now;
    // A flowing download's distant deadline is noise; a wait without data, or a near one, is not.
    if (state.unit !== 'bytes' || done === 0 || left < 60_000) tail.push(left > 0 ? `gives up in ${formatDuration(left)}` : 'giving up');
  }
  return `${parts.join('  ')} (${tail.join(', ')})`;
}

/** Cut `text` to `width` columns (code points; status lines are sanitised, mostly ASCII). */
function fitColumns(text: string, width: number): string {
  const chars = Array.from(text);
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** The display on one terminal stream. */
export class StatusArea {
  private readonly live = new Set<LiveStep>();
  private drawn = 0;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private suspended = 0;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly now: () => number = Date.now,
  ) {}

  add(label: string, state: StepState): LiveStep {
    const t = this.now();
    const live: LiveStep = { label, state: { ...state }, started: t, samples: state.done !== undefined ? [{ t, done: state.done }] : [] };
    this.live.add(live);
    this.timer ??= setInterval(() => this.tick(), TICK_MS).unref();
    return live;
  }

  update(live: LiveStep, state: StepState): void {
    Object.assign(live.state, state);
    if (state.detail === '') delete live.state.detail;
    if (state.done !== undefined) {
      live.samples.push({ t: this.now(), done: state.done });
      if (live.samples.length > 64) live.samples.splice(0, live.samples.length - 64);
    }
  }

  remove(live: LiveStep): void {
    if (!this.live.delete(live)) return;
    if (this.live.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.clear();
    }
  }

  /** Write a line above the display (a note, a warning). */
  print(line: string): void {
    this.clear();
    this.out.write(`${line}\n`);
    this.draw();
  }

  /** Erase what is drawn (the next tick draws it again unless suspended). */
  clear(): void {
    if (this.drawn === 0) return;
    this.out.write(`\r\u001b[2K${'\u001b[1A\u001b[2K'.repeat(this.drawn - 1)}`);
    this.drawn = 0;
  }

  /** Stop drawing while something else owns the terminal (a prompt). */
  suspend(): void {
    this.suspended++;
    this.clear();
  }

  resume(): void {
    this.suspended = Math.max(0, this.suspended - 1);
  }

  private tick(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.draw();
  }

  private draw(): void {
    if (this.suspended > 0) return;
    const now = this.now();
    const shown = [...this.live].filter((l) => now - l.started >= SHOW_AFTER_MS);
    const width = Math.max(20, (this.out.columns || 80) - 1);
    const lines = shown.slice(0, MAX_LINES).map((l) => fitColumns(`${FRAMES[this.frame]} ${formatStepLine(l, now)}`, width));
    if (shown.length > MAX_LINES) lines[MAX_LINES - 1] = fitColumns(`  … and ${shown.length - MAX_LINES + 1} more`, width);
    const erase = this.drawn > 0 ? `\r\u001b[2K${'\u001b[1A\u001b[2K'.repeat(this.drawn - 1)}` : '';
    if (lines.length === 0 && erase === '') return;
    this.out.write(`${erase}${lines.join('\n')}`);
    this.drawn = lines.length;
  }
}

let area: StatusArea | undefined;

/** The display on this process's stderr (created on first use, cleared at exit). */
export function stderrStatus(): StatusArea {
  if (!area) {
    area = new StatusArea(process.stderr);
    process.once('exit', () => area?.clear());
  }
  return area;
}

/** Clear the display before writing anything else to the terminal (a no-op when nothing is drawn). */
export function clearStatus(): void {
  area?.clear();
}

/** Run `fn` (a prompt) with the display out of the way. */
export async function withStatusSuspended<T>(fn: () => Promise<T>): Promise<T> {
  area?.suspend();
  try {
    return await fn();
  } finally {
    area?.resume();
  }
}
