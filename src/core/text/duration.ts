/**
 * Release-age durations as people type them (`90m`, `36h`, `3d`, `1w`), for
 * `--min-age`, YEP_EXT_MIN_AGE and the policy file's `min_age`; and ages written
 * back the same short way ("2 h", "3 d"). One integer and one unit, nothing else:
 * a cooldown is a safety rule, so an ambiguous value is refused, never guessed.
 */
import { YepError } from '../errors.js';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION_RE = /^(\d{1,6})\s*([mhdw])$/;

/** Milliseconds for `text`, or undefined when it is not one of the accepted forms. */
export function durationMs(text: string): number | undefined {
  const m = DURATION_RE.exec(text.trim().toLowerCase());
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** Milliseconds for `text`, or a usage error naming where it came from. */
export function parseDuration(text: string, where: string): number {
  const ms = durationMs(text);
  if (ms === undefined) {
    throw new YepError('E_USAGE', `${where}: ${JSON.stringify(text.slice(0, 40))} is not a duration.`, {
      hint: 'Write a whole number and one unit: 90m (minutes), 36h (hours), 3d (days), 1w (weeks).',
    });
  }
  return ms;
}

/** A short human form: "45 min", "2 h", "3 d", "2 w" (rounded down). */
export function formatAge(ms: number): string {
  const v = Math.max(0, ms);
  if (v < UNIT_MS.h) return `${Math.floor(v / UNIT_MS.m)} min`;
  if (v < 2 * UNIT_MS.d) return `${Math.floor(v / UNIT_MS.h)} h`;
  if (v < 2 * UNIT_MS.w || v % UNIT_MS.w !== 0) return `${Math.floor(v / UNIT_MS.d)} d`;
  return `${v / UNIT_MS.w} w`;
}

/** The most `--timeout` accepts: a day (a wait longer than that is no timeout). */
const TIMEOUT_MAX_MS = 86_400_000;
const TIMEOUT_RE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/;
const TIMEOUT_UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * `--timeout` for the commands that wait on a server: a number and a unit (`500ms`, `30s`,
 * `2m`, `1h`), a bare number being seconds (as curl's --max-time and doctor's --timeout),
 * more than 0 and at most a day. Anything else is a usage error, never a guess.
 */
export function parseTimeout(text: string, flag = '--timeout'): number {
  const m = TIMEOUT_RE.exec(text.trim().toLowerCase());
  const ms = m ? Math.round(Number(m[1]) * TIMEOUT_UNIT_MS[(m[2] ?? 's') as keyof typeof TIMEOUT_UNIT_MS]) : Number.NaN;
  if (!(ms > 0 && ms <= TIMEOUT_MAX_MS)) {
    throw new YepError('E_USAGE', `${flag}: ${JSON.stringify(text.slice(0, 40))} is not a timeout (more than 0, at most 24h).`, {
      hint: `Write a number and a unit: ${flag} 30s, ${flag} 2m, ${flag} 1h (a bare number is seconds).`,
    });
  }
  return ms;
}

/** A total as people write it for --timeout: "2m", "2.5s", "1m 30s", "1h", "500ms". */
export function formatTimeout(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600 || s % 60 !== 0) return s % 60 === 0 ? `${s / 60}m` : `${Math.floor(s / 60)}m ${s % 60}s`;
  return s % 3600 === 0 ? `${s / 3600}h` : `${Math.floor(s / 3600)}h ${(s % 3600) / 60}m`;
}
