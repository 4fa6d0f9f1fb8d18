/**
 * How one GET leaves the process: the interface http.ts's request loop speaks
 * (`Send`: a URL and headers in, a status, headers and a body out), and which of
 * the two transports carries it.
 *
 * - `node:http`/`node:https` (node-send.ts) for every request that goes straight
 *   to the server: no proxy applies (proxy.ts decides) and no test put its own
 *   request function in `ctx.http.request`. It is what an install, an update or a
 *   search uses on a network without a proxy, and it keeps undici out of the
 *   process: undici (and Node's own copy, which undici's cookie module loads
 *   through `globalThis.Headers`) costs a large share of a small install's peak
 *   RSS and CPU just to load.
 * - undici (undici-send.ts) when a proxy applies (its `ProxyAgent` tunnels) or
 *   `ctx.http.request` is set.
 *
 * Both give the same answers for the same conditions: the status and lower-case
 * headers as received, a body that is an async iterable of Buffers with
 * `destroy`/`on('error')`/`dump`, the same error codes for the failures http.ts
 * classifies (connect, headers and body-idle timeouts carry undici's codes), the
 * address rules after DNS and on the connected peer (guarded-connect.ts), the
 * TLS trust of Node (its CA store with NODE_EXTRA_CA_CERTS), no redirect followed
 * (http.ts follows them by hand) and no content decoding. test/integration/http
 * runs its cases through each (http.test.ts, http-undici.test.ts).
 */
import type { Context } from '../context.js';
import { nodeSender } from './node-send.js';
import { useProxy } from './proxy.js';
import { undiciSender } from './undici-send.js';

/** A response body: read once, in order; destroy it to give up on it. */
export interface AnswerBody extends AsyncIterable<Buffer> {
  destroy(err?: Error): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  /** Read and drop up to `limit` bytes so the connection can be reused; more than that closes it. */
  dump(options: { limit: number }): Promise<unknown>;
}

export interface Answer {
  statusCode: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  body: AnswerBody;
}

/** One GET of `url` (no redirect followed); rejects on connection-level failures and when `signal` aborts. */
export type Send = (url: URL, init: { headers: Record<string, string>; signal: AbortSignal }) => Promise<Answer>;

const NO_OVERRIDES: ReadonlyMap<string, string> = new Map();

/** The transport for requests that start at `url`, and the proxy it goes through (undefined: direct). */
export async function senderFor(ctx: Context, url: URL): Promise<{ send: Send; proxy?: string }> {
  const proxy = useProxy(url, ctx.env);
  const resolve = ctx.http.resolve ?? NO_OVERRIDES;
  const stallMs = ctx.http.limits.stallMs;
  // Connections are kept alive within the run (its ctx.http, made once per Context), not across runs.
  if (proxy === undefined && !ctx.http.request) return { send: nodeSender(stallMs, resolve, ctx.http) };
  const send = await undiciSender({ stallMs, resolve, run: ctx.http, ...(proxy ? { proxy } : {}), ...(ctx.http.request ? { request: ctx.http.request } : {}) });
  return { send, ...(proxy ? { proxy } : {}) };
}
