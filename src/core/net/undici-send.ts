/**
 * The undici transport (send.ts says when it is used: a proxy applies, or a test
 * set `ctx.http.request`). undici is imported lazily: importing it reroutes
 * Node's global fetch and costs start-up time (hardening "Runtime traps").
 *
 * The dispatcher is a direct agent whose connector applies the address rules
 * after DNS (guarded-connect.ts), or undici's own ProxyAgent when the environment
 * names a proxy for the URL (proxy.ts says which, and why loopback never is).
 * One per settings and run, reused across the run's requests (keep-alive; node-send.ts
 * says why not across runs).
 */
import type { Send } from './send.js';
import { guardedConnector } from './guarded-connect.js';

type Undici = typeof import('undici');
let undiciPromise: Promise<Undici> | undefined;
const pools = new WeakMap<object, Map<string, unknown>>();

/**
 * Where bin/run.js (setUpV8Hooks) leaves the setting of V8's --liftoff-only for undici's
 * wasm parser, so that it is set only when undici is about to load (a flag set earlier makes
 * V8 refuse the code cache of every Node built-in loaded after it: docs/performance.md).
 * A library embedder has none and keeps its own V8 flags (no process-wide side effects).
 */
const BEFORE_WASM_KEY = Symbol.for('yep-ext.before-wasm');

async function loadUndici(): Promise<Undici> {
  if (!undiciPromise) {
    const beforeWasm = (globalThis as Record<symbol, unknown>)[BEFORE_WASM_KEY];
    if (typeof beforeWasm === 'function') beforeWasm();
  }
  // Node gives a CommonJS module's exports as named exports; the esbuild bundle
  // (scripts/build-cli.mjs) gives only `default` for a lazily imported one.
  undiciPromise ??= import('undici').then((m) => ('Agent' in m ? m : (m as unknown as { default: Undici }).default));
  return undiciPromise;
}

export interface UndiciSendOptions {
  stallMs: number;
  resolve: ReadonlyMap<string, string>;
  /** The proxy URL, when one applies. */
  proxy?: string;
  /** A request function in place of undici's (ctx.http.request). */
  request?: Undici['request'];
  /** Whose connections these are: the run's `ctx.http`. */
  run: object;
}

export async function undiciSender(options: UndiciSendOptions): Promise<Send> {
  const undici = await loadUndici();
  const { stallMs, resolve, proxy } = options;
  let agents = pools.get(options.run);
  if (!agents) {
    agents = new Map();
    pools.set(options.run, agents);
  }
  const key = `${stallMs}\n${[...resolve].join(',')}\n${proxy ?? ''}`;
  let dispatcher = agents.get(key) as import('undici').Dispatcher | undefined;
  if (!dispatcher) {
    const common = { headersTimeout: stallMs, bodyTimeout: stallMs, keepAliveTimeout: 4_000 };
    dispatcher = proxy
      ? new undici.ProxyAgent({ uri: proxy, ...common, proxyTls: { timeout: stallMs }, requestTls: { timeout: stallMs } })
      : new undici.Agent({
          // The link-local rule again after DNS and on the connected peer (guarded-connect.ts).
          connect: guardedConnector(undici.buildConnector, { timeout: stallMs }, resolve),
          ...common,
        });
    agents.set(key, dispatcher);
  }
  const request = options.request ?? undici.request;
  return (url, init) => request(url, { method: 'GET', headers: init.headers, signal: init.signal, dispatcher });
}
