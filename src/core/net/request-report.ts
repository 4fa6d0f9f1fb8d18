/**
 * What one HTTP request tells the user while it runs, kept out of http.ts's
 * policy code: a Step (shown on a terminal once it lasts ~300 ms) with the
 * attempt, the instant this attempt gives up (no answer within the stall time,
 * or the attempt's overall deadline), bytes as they arrive, and each retry as a
 * note with its reason and a countdown to the next attempt; plus request-level
 * lines for --verbose. docs/feedback.md.
 */
import type { Context } from '../context.js';
import { logVerbose, startStep, type Step } from '../log.js';

export interface ReportTimings {
  /** Longest silence before the attempt fails (connect, headers, between chunks). */
  stallMs: number;
  /** The attempt's overall deadline. */
  deadlineMs: number;
  /** Attempts in all (retries + 1). */
  attempts: number;
  /** The request's total (`--timeout`); 0: none. */
  totalMs: number;
}

function ms(n: number): string {
  return n >= 1000 ? `${Math.round(n / 100) / 10}s` : `${Math.round(n)}ms`;
}

export class RequestReport {
  private readonly step: Step;
  private attemptStart = 0;
  private attempt = 0;
  private bodyBytes = 0;

  constructor(
    private readonly ctx: Context,
    label: string,
    private readonly timings: ReportTimings,
    private readonly download: boolean,
  ) {
    this.step = startStep(ctx.log, label);
  }

  /**
   * An attempt (0-based) is about to send its request. The countdown is the instant the
   * request gives up: its total (`totalAt`), or, on the last attempt, that attempt's own
   * end when it comes first (the silence a stall allows, its overall deadline).
   */
  attemptStarted(attempt: number, url: string, totalAt: number, last: boolean): void {
    this.attempt = attempt;
    this.attemptStart = this.ctx.clock.now();
    this.bodyBytes = 0;
    const { stallMs, deadlineMs, attempts } = this.timings;
    const own = this.attemptStart + Math.min(stallMs > 0 ? stallMs : deadlineMs, deadlineMs);
    this.step.update({
      deadlineAt: Number.isFinite(totalAt) ? (last ? Math.min(own, totalAt) : totalAt) : own,
      detail: attempt > 0 ? `attempt ${attempt + 1}/${attempts}` : '',
      retryAt: 0,
      ...(this.download ? { unit: 'bytes' as const, done: 0 } : {}),
    });
    logVerbose(this.ctx.log, `GET ${url}${attempt > 0 ? ` (attempt ${attempt + 1}/${attempts})` : ''}`);
  }

  /** The answer's status line arrived. */
  answered(status: number, url: string, declaredLength: number | undefined): void {
    logVerbose(
      this.ctx.log,
      `${status} ${url} after ${ms(this.ctx.clock.now() - this.attemptStart)}${declaredLength !== undefined ? `, ${declaredLength} bytes announced` : ''}`,
    );
  }

  /** The body started: from now on the attempt's overall deadline is the one that counts. */
  bodyStarted(declaredLength: number | undefined): void {
    if (!this.download) return;
    this.step.update({
      unit: 'bytes',
      done: 0,
      ...(declaredLength !== undefined ? { total: declaredLength } : {}),
      deadlineAt: this.attemptStart + this.timings.deadlineMs,
    });
  }

  /** `total` body bytes so far (downloads only are drawn with a rate and an ETA). */
  bytes(total: number): void {
    this.bodyBytes = total;
    if (this.download) this.step.update({ done: total });
  }

  /** The body is complete. */
  finished(url: string): void {
    logVerbose(this.ctx.log, `done ${url}: ${this.bodyBytes} bytes in ${ms(this.ctx.clock.now() - this.attemptStart)}`);
  }

  /** This attempt failed with `why`; the next one starts in `waitMs`. */
  retrying(what: string, why: string, waitMs: number): void {
    const next = this.attempt + 2;
    const { attempts } = this.timings;
    this.step.note(`${what}: ${why}; attempt ${next}/${attempts} in ${ms(waitMs)}`);
    // The live line stays short: the reason is in the note printed above it.
    this.step.update({ detail: `attempt ${next}/${attempts}`, retryAt: this.ctx.clock.now() + waitMs });
  }

  end(): void {
    this.step.end();
  }
}
