/**
 * The HTTP client's limits (timeouts, throughput floor, retries, backoff) and
 * the user-facing environment variables that set some of them. Separate from
 * http.ts so building a Context (core/context.ts) does not load the client.
 *
 * Only the limits a user may need to change are read from the environment
 * (docs/configuration.md lists them); the backoff curve, the Retry-After ceiling
 * and the redirect limit are set only through `ctx.http.limits` (tests, library
 * users), never from a variable.
 */

export interface HttpSettings {
  /**
   * The total: the longest yep-ext waits on a server that does not answer (`--timeout`).
   * An HTTP request's every attempt and the pauses between them, until its answer is
   * complete (a small request) or its body is flowing (a download, whose own rules then
   * apply); for git, the longest it may go without progress. 0: no total.
   */
  totalMs: number;
  /** Overall deadline for one attempt at a small request (headers and body). */
  timeoutMs: number;
  /** Overall deadline for one attempt at a download. */
  downloadTimeoutMs: number;
  /** Longest silence allowed while connecting, waiting for headers or between body chunks. */
  stallMs: number;
  /** Minimum average body throughput (bytes/s) over each rate window. */
  minRate: number;
  rateWindowMs: number;
  /** Retries after the first attempt (so attempts = retries + 1). */
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** A Retry-After longer than this is not waited for: the request fails at once. */
  retryAfterMaxMs: number;
  maxRedirects: number;
}

/** `--timeout`'s default: what four 30 s stalls and their backoff came to, now said and kept. */
export const DEFAULT_TOTAL_MS = 120_000;

const DEFAULT_HTTP_SETTINGS: Readonly<HttpSettings> = Object.freeze({
  totalMs: DEFAULT_TOTAL_MS,
  timeoutMs: 60_000,
  downloadTimeoutMs: 15 * 60_000,
  stallMs: 30_000,
  minRate: 1024,
  rateWindowMs: 15_000,
  retries: 3,
  retryBaseMs: 500,
  retryMaxMs: 8_000,
  retryAfterMaxMs: 60_000,
  maxRedirects: 5,
});

/** The user-facing variables (documented in docs/configuration.md). */
const HTTP_ENV_KEYS: Readonly<Partial<Record<keyof HttpSettings, string>>> = Object.freeze({
  timeoutMs: 'YEP_EXT_HTTP_TIMEOUT_MS',
  downloadTimeoutMs: 'YEP_EXT_HTTP_DOWNLOAD_TIMEOUT_MS',
  stallMs: 'YEP_EXT_HTTP_STALL_MS',
  minRate: 'YEP_EXT_HTTP_MIN_RATE',
  retries: 'YEP_EXT_HTTP_RETRIES',
});

/** Defaults, then the environment (unset, empty or non-numeric values keep the default), then `overrides`. */
export function httpSettings(env: Record<string, string | undefined>, overrides: Partial<HttpSettings> = {}): HttpSettings {
  const out: HttpSettings = { ...DEFAULT_HTTP_SETTINGS };
  for (const [key, name] of Object.entries(HTTP_ENV_KEYS) as [keyof HttpSettings, string][]) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw);
    if (Number.isFinite(n) && n >= 0) out[key] = Math.floor(n);
  }
  for (const [key, value] of Object.entries(overrides) as [keyof HttpSettings, number | undefined][]) {
    if (value !== undefined && Number.isFinite(value) && value >= 0) out[key] = Math.floor(value);
  }
  return out;
}
