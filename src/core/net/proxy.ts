/**
 * Which undici dispatcher carries a request: direct, or through the proxy the
 * environment names (HTTPS_PROXY / HTTP_PROXY / NO_PROXY, lower-case first, as
 * curl and undici read them). The proxying itself is undici's own `ProxyAgent`
 * (CONNECT tunnels for https); this module decides, per URL, whether and which
 * proxy, with undici's NO_PROXY rules (a copy of EnvHttpProxyAgent's matcher:
 * comma/space lists, `*`, suffixes, a leading `.` or `*.`, `host:port`), reading
 * the Context's environment (never process.env behind its back), plus one rule of
 * ours: loopback hosts are never proxied (as Go's net/http does). yep-ext sends
 * plain http only to loopback, because loopback never leaves the machine; a proxy
 * would carry those bytes off it.
 *
 * Why not undici's EnvHttpProxyAgent, which makes the same decision inside one
 * dispatcher: (1) it has no loopback rule; (2) the decision must be known before
 * dispatch, for messages and hints ("through the proxy …", http.ts) and to pick the
 * direct agent whose connector re-checks addresses after DNS (guarded-connect.ts);
 * EnvHttpProxyAgent hands the same options to its direct Agent and its ProxyAgents,
 * so that connector would also guard the connection to the proxy, which is the
 * user's choice and may be on any address. test/unit/proxy.test.ts covers the
 * matcher's rules; test/unit/proxy-undici-parity.test.ts runs a table through this
 * module and through undici's EnvHttpProxyAgent and requires the same route (the
 * differences: loopback, and a NO_PROXY value trimmed before the `*` test);
 * test/cli/proxy-ca.test.ts runs it against a real proxy.
 *
 * What a proxy changes for the address rules (docs/fleet.md, "Proxies"): the URL
 * is still checked before it is handed over (scheme, credentials, link-local
 * literals, redirects), but the proxy resolves the host name, so the DNS-time
 * link-local refusal (guarded-connect.ts) cannot run for proxied requests.
 */
import { isLoopbackHost } from './address.js';

export interface ProxySettings {
  /** Proxy for http: URLs ('' = none). */
  httpProxy: string;
  /** Proxy for https: URLs ('' = none; falls back to httpProxy, as undici does). */
  httpsProxy: string;
  /** NO_PROXY list as given ('' = none; `*` = never proxy). */
  noProxy: string;
}

type Env = Record<string, string | undefined>;

/** The first variable that is set (an empty value counts as set: `https_proxy=` turns proxying off). */
function pick(env: Env, ...names: string[]): string {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) return value.trim();
  }
  return '';
}

/** The proxy variables of `env`, or undefined when no proxy is configured at all. */
export function proxySettings(env: Env): ProxySettings | undefined {
  const httpProxy = pick(env, 'http_proxy', 'HTTP_PROXY');
  const httpsProxy = pick(env, 'https_proxy', 'HTTPS_PROXY');
  if (httpProxy === '' && httpsProxy === '') return undefined;
  return { httpProxy, httpsProxy, noProxy: pick(env, 'no_proxy', 'NO_PROXY') };
}

/**
 * NO_PROXY matching, undici's rules (EnvHttpProxyAgent): entries split on commas
 * or spaces, `*` = everything, an entry matches the host itself and its
 * subdomains (a leading `.` or `*.` is dropped), `host:port` only that port.
 * It decides which dispatcher `http.ts` uses (direct, or undici's ProxyAgent).
 */
export function noProxyMatches(url: URL, noProxy: string): boolean {
  const value = noProxy.trim();
  if (value === '') return false;
  if (value === '*') return true;
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || (url.protocol === 'https:' ? 443 : 80);
  for (const entry of value.split(/[,\s]/)) {
    if (!entry) continue;
    const m = /^(.+):(\d+)$/.exec(entry);
    const name = (m ? m[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    if (m && Number.parseInt(m[2]!, 10) !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** The proxy URL a request to `url` goes through, or undefined for a direct connection. */
export function proxyFor(url: URL, settings: ProxySettings | undefined): string | undefined {
  if (!settings || isLoopbackHost(url.hostname)) return undefined;
  const proxy = url.protocol === 'https:' ? settings.httpsProxy || settings.httpProxy : settings.httpProxy;
  if (proxy === '' || noProxyMatches(url, settings.noProxy)) return undefined;
  return proxy;
}

/** A proxy URL for messages: scheme, host and port only (a user:password in it stays out of every message). */
export function showProxy(proxy: string): string {
  try {
    const u = new URL(proxy);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'the configured proxy';
  }
}
