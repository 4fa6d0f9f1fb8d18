/**
 * The one HTTP client of yep-ext. The bytes travel by `node:http`/`node:https` when
 * the request goes straight to the server and by undici 7 when a proxy applies
 * (send.ts: one interface, two transports; undici is loaded only then).
 *
 * Every byte from the network is hostile until checked, so the policy lives here
 * once: https only (plain http for loopback hosts, for tests and local mirrors),
 * redirects followed by hand and only within the same origin, bounded retries with
 * jittered backoff on 5xx/429/connection failures, an overall deadline per attempt
 * plus a minimum-throughput rule (the transports' body timeout is per chunk, so a
 * slow-drip server would never trip it), and byte caps that do not trust
 * Content-Length. Downloads go to a file while hashing (fs/hashed-write.ts): a fast
 * consumer is what keeps undici's `assert(!this.paused)` crash away (nodejs/undici#5360).
 */
import { DOWNLOAD_EVERY, bufferGarbageMeter } from '../fs/buffer-garbage.js';
import { checkpoint } from '../fs/checkpoint.js';
import { writeHashedFile } from '../fs/hashed-write.js';
import type { Context } from '../context.js';
import { YepError, stateIoError, type ErrorCode } from '../errors.js';
import { knownDirOf } from '../paths.js';
import { formatTimeout } from '../text/duration.js';
import { isLinkLocalAddress, isLoopbackHost, normalizeHost } from './address.js';
import type { Clock } from '../clock.js';
import type { HttpSettings } from './http-settings.js';
import { showProxy } from './proxy.js';
import { RequestReport } from './request-report.js';
import { senderFor, type AnswerBody } from './send.js';

// ---------------------------------------------------------------- URL policy

// The address rules, on every spelling of an address: address.ts. After DNS: guarded-connect.ts.

/**
 * Parse and police a URL before anything is sent to it: https, or http to a
 * loopback host; no credentials in the URL; never a link-local address.
 */
export function checkFetchUrl(text: string, what: string, code: ErrorCode = 'E_NETWORK'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new YepError(code, `${what}: ${JSON.stringify(text)} is not a valid URL.`);
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) {
      throw new YepError(code, `${what}: refusing plain http to ${url.host}; only https is allowed (http only for loopback addresses).`, {
        hint: 'Use an https:// URL.',
      });
    }
  } else if (url.protocol !== 'https:') {
    throw new YepError(code, `${what}: refusing the ${url.protocol.replace(/:$/, '')} scheme; only https is allowed.`);
  }
  if (url.username || url.password) {
    throw new YepError(code, `${what}: refusing a URL with credentials in it (${url.host}).`, {
      hint: 'yep-ext never sends credentials; use a registry that serves files without authentication.',
    });
  }
  if (isLinkLocalAddress(url.hostname)) {
    throw new YepError(code, `${what}: refusing the link-local address ${url.hostname} (${normalizeHost(url.hostname)} is in 169.254.0.0/16 or fe80::/10).`, {
      hint: 'Link-local addresses are never contacted, however they are written: cloud metadata services live there.',
    });
  }
  url.hash = '';
  return url;
}

// ---------------------------------------------------------------- one attempt's guard

type StopReason = 'deadline' | 'total' | 'slow' | 'cap' | 'interrupted';

/** Deadline, the request's total and minimum throughput for one attempt, as one AbortSignal. */
class AttemptGuard {
  readonly controller = new AbortController();
  readonly signal: AbortSignal;
  reason: StopReason | undefined;
  private readonly timers: (() => void)[] = [];
  private readonly cancelTotal: () => void;
  private windowBytes = 0;
  private readonly onOuterAbort = (): void => this.stop('interrupted');

  constructor(
    private readonly outer: AbortSignal,
    readonly deadlineMs: number,
    /** When the request's total runs out (epoch ms on `clock`; Infinity: no total). */
    totalAt: number,
    private readonly settings: HttpSettings,
    private readonly clock: Clock,
  ) {
    this.signal = this.controller.signal;
    if (outer.aborted) this.stop('interrupted');
    else outer.addEventListener('abort', this.onOuterAbort, { once: true });
    this.timers.push(clock.timeout(() => this.stop('deadline'), deadlineMs));
    this.cancelTotal = Number.isFinite(totalAt) ? clock.timeout(() => this.stop('total'), Math.max(0, totalAt - clock.now())) : () => undefined;
  }

  /**
   * Body bytes have started flowing: from now on, every window must carry minRate. A
   * download's body is then under its own rules (its deadline, stall and rate), no longer
   * under the total, which bounds the wait for an answer; a small body stays under it.
   */
  startBody(download: boolean): void {
    if (download) this.cancelTotal();
    const { minRate, rateWindowMs } = this.settings;
    if (minRate <= 0 || rateWindowMs <= 0) return;
    const need = (minRate * rateWindowMs) / 1000;
    this.timers.push(
      this.clock.interval(() => {
        if (this.windowBytes < need) this.stop('slow');
        this.windowBytes = 0;
      }, rateWindowMs),
    );
  }

  count(n: number): void {
    this.windowBytes += n;
  }

  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller.abort(new Error(`yep-ext: ${reason}`));
  }

  dispose(): void {
    for (const cancel of this.timers) cancel();
    this.cancelTotal();
    this.outer.removeEventListener('abort', this.onOuterAbort);
  }
}

// ---------------------------------------------------------------- errors and retries

const RETRYABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RESPONSE_STATUS_CODE',
]);

/** A failure worth another attempt (connection-level trouble, truncated bodies). */
class Transient extends Error {}

function errCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeNetError(e: unknown): string {
  const code = errCode(e);
  const msg = e instanceof Error ? e.message : String(e);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name could not be resolved (DNS failure)';
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was reset';
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'connecting timed out';
    case 'UND_ERR_HEADERS_TIMEOUT':
      return 'the server sent no answer in time';
    case 'UND_ERR_BODY_TIMEOUT':
      return 'the server stopped sending data';
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return 'the body did not match its Content-Length';
    default:
      return code ? `${msg} (${code})` : msg;
  }
}

const TLS_TRUST_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

/** What to do next for the failures a person can fix (a private CA, a proxy that refused). */
function networkHint(e: unknown, proxy: string | undefined): string | undefined {
  const code = errCode(e);
  if (code && TLS_TRUST_CODES.has(code)) {
    return "The server's certificate is not signed by a CA Node trusts. If your network uses a private CA (an internal registry or mirror, a TLS-inspecting proxy), set NODE_EXTRA_CA_CERTS to its PEM file (docs/fleet.md).";
  }
  if (proxy && /Proxy response \(\d+\)/.test(e instanceof Error ? e.message : '')) {
    return `The proxy ${showProxy(proxy)} refused to open a tunnel. Check HTTPS_PROXY (and its credentials), or list the host in NO_PROXY to reach it directly.`;
  }
  return undefined;
}

/** Jittered exponential backoff ("equal jitter": half fixed, half random). */
function backoffMs(attempt: number, settings: Pick<HttpSettings, 'retryBaseMs' | 'retryMaxMs'>, random = Math.random): number {
  const ceiling = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Retry-After as milliseconds (delta-seconds or an HTTP date); undefined when absent/unreadable. */
function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return clock.sleep(ms, signal).catch(() => {
    throw interrupted(signal);
  });
}

function interrupted(signal: AbortSignal): YepError {
  return signal.reason instanceof YepError ? signal.reason : new YepError('E_INTERRUPTED', 'Interrupted.');
}

function headerMap(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10}s` : `${ms}ms`;
}

function formatBytes(n: number): string {
  return n >= 1 << 20 ? `${Math.round((n / (1 << 20)) * 10) / 10} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}

// ---------------------------------------------------------------- the request loop

export interface RequestOptions {
  /** Human description for messages: "the index file for yolop-extension-lsp". */
  what: string;
  /** Hard cap on body bytes, whatever Content-Length says. */
  maxBytes: number;
  headers?: Record<string, string>;
  /** Non-2xx statuses handed back to the caller (body discarded) instead of thrown: 304, 404... */
  passStatuses?: readonly number[];
  /** Override the per-attempt deadline. */
  timeoutMs?: number;
  /** What the user sees while waiting ("Fetching the index entry for …"); default from `what`. */
  step?: string;
}

interface BodyInfo {
  body: AnswerBody;
  headers: Record<string, string>;
  declaredLength: number | undefined;
  guard: AttemptGuard;
  report: RequestReport;
}

interface Outcome<T> {
  status: number;
  headers: Record<string, string>;
  url: string;
  value?: T;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NO_RETRY_NOT_FOUND = new Set([404, 410, 451]);

/** The request loop, inside the step the user sees (request-report.ts). */
async function perform<T>(
  ctx: Context,
  startUrl: string,
  options: RequestOptions & { download?: boolean },
  consume: (info: BodyInfo) => Promise<T>,
): Promise<Outcome<T>> {
  const settings = ctx.http.limits;
  const deadlineMs = options.timeoutMs ?? (options.download ? settings.downloadTimeoutMs : settings.timeoutMs);
  const report = new RequestReport(
    ctx,
    options.step ?? stepLabel(options.what, startUrl),
    { stallMs: settings.stallMs, deadlineMs, attempts: settings.retries + 1, totalMs: settings.totalMs },
    Boolean(options.download),
  );
  try {
    return await performAttempts(ctx, startUrl, options, consume, report);
  } finally {
    report.end();
  }
}

/** "Waiting for index.crates.io: the index file for …" when the caller gave no label. */
function stepLabel(what: string, url: string): string {
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    // checkFetchUrl refuses it next.
  }
  return `Waiting for ${host}: ${what.charAt(0).toLowerCase()}${what.slice(1)}`;
}

async function performAttempts<T>(
  ctx: Context,
  startUrl: string,
  options: RequestOptions & { download?: boolean },
  consume: (info: BodyInfo) => Promise<T>,
  report: RequestReport,
): Promise<Outcome<T>> {
  const settings = ctx.http.limits;
  const { what } = options;
  const first = checkFetchUrl(startUrl, what);
  let url = first;
  const visited = new Set<string>([url.href]);
  let redirects = 0;
  let attempt = 0;
  const deadlineMs = options.timeoutMs ?? (options.download ? settings.downloadTimeoutMs : settings.timeoutMs);
  const { send, proxy } = await senderFor(ctx, first);
  const via = proxy ? ` through the proxy ${showProxy(proxy)}` : '';
  // The total (--timeout) runs from the first attempt, through every retry and pause, to a
  // complete answer; a download's flowing body is under its own rules, and one that fails
  // mid-body gives the next answer a new total.
  const totalMs = settings.totalMs;
  let totalAt = totalMs > 0 ? ctx.clock.now() + totalMs : Number.POSITIVE_INFINITY;
  const outOfTime = (why: string | undefined): YepError =>
    new YepError(
      'E_NETWORK',
      `${what}: no answer within ${formatTimeout(totalMs)} (${attempt + 1} attempt${attempt ? 's' : ''}${why ? `, the last: ${why}` : ''}); gave up.`,
      {
        hint: `The server at ${url.host}${via} is not answering. Try again later, or give it longer with --timeout (${formatTimeout(totalMs)} now; e.g. --timeout 5m).`,
        details: { url: url.href, attempts: attempt + 1, timeout_ms: totalMs },
      },
    );

  const retryOrThrow = async (why: string, delayMs: number | undefined, cause?: unknown): Promise<void> => {
    if (attempt < settings.retries && ctx.clock.now() + (delayMs ?? 0) >= totalAt) throw outOfTime(why);
    if (attempt >= settings.retries) {
      throw new YepError('E_NETWORK', `${what}: ${why} (gave up after ${attempt + 1} attempt${attempt ? 's' : ''}).`, {
        hint: `Check your connection and the registry (${first.host})${via ? `, and the proxy (${showProxy(proxy!)}; NO_PROXY lists hosts to reach directly)` : ''}, then run the command again.`,
        ...(cause !== undefined ? { cause } : {}),
        details: { url: url.href, attempts: attempt + 1 },
      });
    }
    // The pause never outlasts the total: the next attempt starts, at the latest, as it runs out.
    const wait = Math.min(delayMs ?? backoffMs(attempt, settings), Math.max(0, totalAt - ctx.clock.now()));
    report.retrying(what, why, wait);
    await sleep(ctx.clock, wait, ctx.signal);
    if (ctx.clock.now() >= totalAt) throw outOfTime(why);
    attempt++;
  };

  for (;;) {
    if (ctx.signal.aborted) throw interrupted(ctx.signal);
    const guard = new AttemptGuard(ctx.signal, deadlineMs, totalAt, settings, ctx.clock);
    let retry: Retry | undefined;
    let flowing = false;
    try {
      ctx.log.debug(`GET ${url.href}${via}`);
      report.attemptStarted(attempt, url.href, totalAt, attempt >= settings.retries);
      const res = await send(url, { headers: { 'user-agent': ctx.userAgent, ...options.headers }, signal: guard.signal });
      const status = res.statusCode;
      const headers = headerMap(res.headers);
      report.answered(status, url.href, headers['content-length'] !== undefined ? Number(headers['content-length']) : undefined);
      const dump = async (): Promise<void> => {
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      };

      if (REDIRECTS.has(status)) {
        await dump();
        url = followRedirect(url, first, headers.location, visited, ++redirects, settings.maxRedirects, what);
        continue;
      }
      if (status === 429 || (status >= 500 && status <= 599)) {
        await dump();
        retry = serverBusy(ctx, what, url, status, headers);
      } else if (status >= 200 && status <= 299) {
        const lengthHeader = headers['content-length'];
        const declared = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
        if (declared !== undefined && declared > options.maxBytes) {
          discard(res.body);
          throw capError(what, options.maxBytes, `it announces ${formatBytes(declared)}`, url);
        }
        guard.startBody(Boolean(options.download));
        flowing = Boolean(options.download);
        report.bodyStarted(declared);
        const value = await consume({ body: res.body, headers, declaredLength: declared, guard, report });
        report.finished(url.href);
        return { status, headers, url: url.href, value };
      } else if (options.passStatuses?.includes(status)) {
        await dump();
        return { status, headers, url: url.href };
      } else {
        await dump();
        throw refusedStatus(what, url, status);
      }
    } catch (e) {
      retry = failedAttempt(ctx, e, guard, { what, url, proxy, via, outOfTime });
    } finally {
      guard.dispose();
    }
    if (!retry) throw new YepError('E_INTERNAL', `${what}: request loop ended without an outcome.`);
    if (flowing && totalMs > 0) totalAt = ctx.clock.now() + totalMs;
    await retryOrThrow(retry.why, retry.delay, retry.cause);
  }
}

/** Why an attempt is tried again, after how long (else the backoff), and what made it fail. */
interface Retry {
  why: string;
  delay?: number;
  cause?: unknown;
}

/** A 429 or 5xx: tried again, after the server's Retry-After if it gives one; refused when that is longer than yep-ext waits. */
function serverBusy(ctx: Context, what: string, url: URL, status: number, headers: Record<string, string>): Retry {
  const settings = ctx.http.limits;
  const after = parseRetryAfter(headers['retry-after'], ctx.clock.now());
  if (after !== undefined && after > settings.retryAfterMaxMs) {
    throw new YepError(
      'E_NETWORK',
      `${what}: the server answered ${status} and asks to retry after ${seconds(after)}, longer than yep-ext waits (${seconds(settings.retryAfterMaxMs)}).`,
      {
        hint: 'Try again later.',
        details: { url: url.href, status },
      },
    );
  }
  return { why: `the server answered ${status}`, ...(after !== undefined ? { delay: after } : {}) };
}

/** Any other status that is neither an answer nor a redirect: never retried. */
function refusedStatus(what: string, url: URL, status: number): YepError {
  return new YepError(
    NO_RETRY_NOT_FOUND.has(status) ? 'E_NOT_FOUND' : 'E_NETWORK',
    `${what}: the server answered ${status}${status === 401 || status === 403 ? ' (the registry wants authentication, which yep-ext does not support)' : ''}.`,
    {
      details: { url: url.href, status },
    },
  );
}

/**
 * What an attempt that threw means: an error to throw now (an interrupt, a deadline or rate
 * the guard enforced, a refusal, a network error that is not transient), or a retry.
 */
function failedAttempt(
  ctx: Context,
  e: unknown,
  guard: AttemptGuard,
  at: { what: string; url: URL; proxy: string | undefined; via: string; outOfTime: (why: undefined) => YepError },
): Retry {
  const { what, url } = at;
  const settings = ctx.http.limits;
  if (guard.reason === 'interrupted' || ctx.signal.aborted) throw interrupted(ctx.signal);
  if (guard.reason === 'total') throw at.outOfTime(undefined);
  if (guard.reason === 'deadline') {
    throw new YepError('E_NETWORK', `${what}: no complete answer within ${seconds(guard.deadlineMs)}; gave up.`, {
      hint: `The server at ${url.host} is too slow or not answering. Try again later.`,
      details: { url: url.href },
    });
  }
  if (guard.reason === 'slow') {
    throw new YepError(
      'E_NETWORK',
      `${what}: the transfer was slower than ${formatBytes(settings.minRate)}/s for ${seconds(settings.rateWindowMs)}; gave up.`,
      {
        hint: `The server at ${url.host} is too slow. Try again later.`,
        details: { url: url.href },
      },
    );
  }
  if (e instanceof YepError) throw e;
  if (e instanceof Transient) return { why: e.message, cause: e };
  const code = errCode(e);
  if (code && RETRYABLE_CODES.has(code)) return { why: describeNetError(e), cause: e };
  const hint = networkHint(e, at.proxy);
  throw new YepError('E_NETWORK', `${what}: ${describeNetError(e)}${at.via}.`, { cause: e, ...(hint ? { hint } : {}), details: { url: url.href } });
}

/** Destroy a body we will not read, without leaving its abort error unhandled. */
function discard(body: { destroy(err?: Error): unknown; on?(event: 'error', fn: () => void): unknown }): void {
  body.on?.('error', () => undefined);
  body.destroy();
}

function capError(what: string, max: number, detail: string, url: URL): YepError {
  return new YepError('E_NETWORK', `${what}: the response is larger than the ${formatBytes(max)} limit (${detail}); refused.`, {
    hint: 'The server sent far more than expected. If this is a legitimate registry, report it.',
    details: { url: url.href, maxBytes: max },
  });
}

/**
 * The next URL after a redirect, or a refusal: only within the first URL's origin
 * (same scheme, host and port, so no downgrade and no hop to another host or a
 * private address), bounded in number, never back to a URL already visited.
 */
function followRedirect(current: URL, first: URL, location: string | undefined, visited: Set<string>, count: number, max: number, what: string): URL {
  if (!location) throw new YepError('E_NETWORK', `${what}: the server sent a redirect without a Location.`);
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw new YepError('E_NETWORK', `${what}: the server redirected to an invalid URL.`);
  }
  if (count > max) throw new YepError('E_NETWORK', `${what}: more than ${max} redirects; refused.`, { details: { url: current.href } });
  if (next.protocol !== first.protocol) {
    throw new YepError('E_NETWORK', `${what}: refused a redirect from ${first.protocol.slice(0, -1)} to ${next.protocol.slice(0, -1)} (${next.host}).`, {
      details: { url: current.href, location: next.href },
    });
  }
  if (next.host !== first.host) {
    throw new YepError('E_NETWORK', `${what}: refused a redirect from ${first.host} to another host (${next.host}).`, {
      hint: 'yep-ext follows redirects only within the same host. Point the registry configuration at the final location.',
      details: { url: current.href, location: next.href },
    });
  }
  next.hash = '';
  if (visited.has(next.href)) throw new YepError('E_NETWORK', `${what}: redirect loop at ${next.href}; refused.`);
  visited.add(next.href);
  return checkFetchUrl(next.href, what);
}

// ---------------------------------------------------------------- public API

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  /** The final URL after same-origin redirects. */
  url: string;
  /** Empty for passed-through non-2xx statuses. */
  body: Buffer;
}

/**
 * The body's chunks, counted by the stall/throughput guard and stopped at the byte
 * cap (Content-Length is never trusted for that). Shared by every reader of bodies.
 */
async function* cappedBody(
  { body, guard, report }: Pick<BodyInfo, 'body' | 'guard' | 'report'>,
  options: { what: string; maxBytes: number },
  url: string,
): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    guard.count(chunk.length);
    report.bytes(total);
    if (total > options.maxBytes) {
      discard(body);
      throw capError(options.what, options.maxBytes, 'it kept sending', new URL(url));
    }
    yield chunk;
  }
}

/** A body shorter or longer than announced was cut or padded on the way: retry it. */
function checkDeclaredLength(what: string, total: number, declared: number | undefined): void {
  if (declared !== undefined && total !== declared) throw new Transient(`the ${what} was ${total} bytes but Content-Length said ${declared}`);
}

/** GET a small body (index file, config.json, API page) into memory, capped. */
export async function httpGet(ctx: Context, url: string, options: RequestOptions): Promise<HttpResult> {
  const out = await perform(ctx, url, options, async (info) => {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of cappedBody(info, options, url)) {
      total += chunk.length;
      chunks.push(chunk);
    }
    checkDeclaredLength('body', total, info.declaredLength);
    return Buffer.concat(chunks, total);
  });
  return { status: out.status, headers: out.headers, url: out.url, body: out.value ?? Buffer.alloc(0) };
}

export interface DownloadOptions {
  what: string;
  maxBytes: number;
  timeoutMs?: number;
  /** What the user sees while it downloads (with bytes, rate and ETA from the first byte). */
  progressLabel?: string;
}

export interface DownloadResult {
  url: string;
  size: number;
  /** Lowercase hex SHA-256 of exactly the bytes written. */
  sha256: string;
}

const PAUSE_AT = 1 << 20;

/**
 * Stream a body into `file` (created or truncated on each attempt) while hashing
 * it (fs/hashed-write.ts). The caller compares the digest and only then uses the file.
 */
export async function httpDownload(ctx: Context, url: string, file: string, options: DownloadOptions): Promise<DownloadResult> {
  // A failing write is the disk's state (a full disk, a read-only mount), not the network's:
  // the one I/O mapping (stateIoError, exit 7) names the store or cache that filled.
  const local = (e: unknown): YepError => stateIoError('write the download to', file, e, knownDirOf(ctx.paths, file));
  const out = await perform(ctx, url, { ...options, download: true, ...(options.progressLabel ? { step: options.progressLabel } : {}) }, async (info) => {
    // Socket reads are fresh buffers still: collect them as they pile up.
    const garbage = bufferGarbageMeter(DOWNLOAD_EVERY);
    const written = await writeHashedFile(file, cappedBody(info, options, url), {
      writeError: local,
      onChunk: async (total, length) => {
        garbage(length);
        // Crash tests: the .partial file holds part of the body (its first MiB).
        if (total >= PAUSE_AT && total - length < PAUSE_AT) await checkpoint(ctx, 'download:mid');
      },
    });
    checkDeclaredLength('download', written.size, info.declaredLength);
    return written;
  });
  return { url: out.url, size: out.value!.size, sha256: out.value!.sha256 };
}
