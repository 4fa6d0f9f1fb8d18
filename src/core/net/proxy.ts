/**
 * Which undici dispatcher carries a request: direct, or through the proxy the
 * environment names (HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY, lower-case
 * first, as curl and undici read them). ALL_PROXY is curl's (so git's) fallback for
 * a scheme whose own variable is unset; undici ignores it, but git would go through
 * it while yep-ext's own requests went direct, so yep-ext reads it as curl does. The proxying itself is undici's own `ProxyAgent`
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
import { YepError } from '../errors.js';
import { MIN_FRAGMENT, REDACTED, redactUrls } from '../text/redact.js';
import { isLoopbackHost } from './address.js';
import { percentDecoded } from '../text/percent-decode.js';

export interface ProxySettings {
  /** Proxy for http: URLs ('' = none). */
  httpProxy: string;
  /** Proxy for https: URLs ('' = none; falls back to httpProxy, as undici does). */
  httpsProxy: string;
  /** NO_PROXY list as given ('' = none; `*` = never proxy). */
  noProxy: string;
  /** The variable each proxy value was read from (for messages: `HTTPS_PROXY`, `http_proxy`). */
  from: { httpProxy: string; httpsProxy: string };
}

type Env = Record<string, string | undefined>;

/** The first variable that is set (an empty value counts as set: `https_proxy=` turns proxying off), and its name. */
function pick(env: Env, ...names: string[]): [string, string] {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) return [value.trim(), name];
  }
  return ['', ''];
}

/**
 * The proxy variables of `env`, or undefined when no proxy is configured at all. A
 * scheme whose own variable is unset takes ALL_PROXY (curl's rule); https then still
 * falls back to the http proxy (undici's rule).
 */
export function proxySettings(env: Env): ProxySettings | undefined {
  const all = pick(env, 'all_proxy', 'ALL_PROXY');
  const own = (lower: string, upper: string): [string, string] => {
    const picked = pick(env, lower, upper);
    return picked[1] === '' ? all : picked;
  };
  const [httpProxy, httpFrom] = own('http_proxy', 'HTTP_PROXY');
  const [httpsProxy, httpsFrom] = own('https_proxy', 'HTTPS_PROXY');
  if (httpProxy === '' && httpsProxy === '') return undefined;
  return { httpProxy, httpsProxy, noProxy: pick(env, 'no_proxy', 'NO_PROXY')[0], from: { httpProxy: httpFrom, httpsProxy: httpsFrom } };
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

/** The proxy value a request to `url` goes through (as the variable gives it), or undefined for a direct connection. */
export function proxyFor(url: URL, settings: ProxySettings | undefined): string | undefined {
  return proxyChoice(url, settings)?.value;
}

function proxyChoice(url: URL, settings: ProxySettings | undefined): { value: string; variable: string } | undefined {
  if (!settings || isLoopbackHost(url.hostname)) return undefined;
  const https = url.protocol === 'https:' && settings.httpsProxy !== '';
  const value = https ? settings.httpsProxy : url.protocol === 'https:' || url.protocol === 'http:' ? settings.httpProxy : '';
  if (value === '' || noProxyMatches(url, settings.noProxy)) return undefined;
  return { value, variable: https ? settings.from.httpsProxy : settings.from.httpProxy };
}

/**
 * The proxy a request to `url` (HTTP, or git over http/https) goes through, as a URL both
 * yep-ext's client and git's curl read the same way; undefined for a direct connection.
 * A value that cannot be used is the user's configuration, not a network failure and not
 * a bug: E_USAGE (exit 2) naming the variable, its credentials redacted, before anything
 * is sent (checkProxyUrl says which values).
 */
export function useProxy(url: URL, env: Env): string | undefined {
  const choice = proxyChoice(url, proxySettings(env));
  if (!choice) return undefined;
  const checked = checkProxyUrl(choice.value);
  if ('problem' in checked) {
    const read = choice.value.includes('://') ? '' : ', read as http:// since it has no scheme';
    throw new YepError('E_USAGE', `${choice.variable} is not a proxy URL yep-ext can use (${JSON.stringify(checked.shown)}${read}): ${checked.problem}.`, {
      hint: `Fix or unset ${choice.variable}: http:// or https://, a host and a port, with an optional user name and password before the host (percent-encode any "@" or ":" inside them). A socks proxy can be given to git alone with \`git config --global http.proxy\`, which yep-ext leaves to git (docs/fleet.md, "Proxies").`,
      details: { variable: choice.variable, value: checked.shown },
    });
  }
  return checked.url;
}

/** `scheme` and `authority` (up to the first `/`, `?` or `#`) of a value that has a `scheme://`. */
function splitProxy(withScheme: string): { scheme: string; authority: string } {
  const m = /^([^:]*):\/\/([^/?#]*)/.exec(withScheme);
  return { scheme: m?.[1] ?? '', authority: m?.[2] ?? '' };
}

/** Every variable a proxy URL is read from (by yep-ext, curl, git or a server that inherits them). */
const PROXY_VARIABLES = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'] as const;

/**
 * The credentials in the proxy variables of `env`, in each spelling text may show them:
 * the userinfo as written, the password (or, with none, the user: a token written as the
 * user name), each as written and percent-decoded. A process that inherits `env` (a
 * server doctor starts) may echo them in any of these forms, without a URL around them,
 * so they are secrets to redact (text/redact.ts), like the config secrets doctor hands
 * it. Pieces shorter than MIN_FRAGMENT are left out: they would mask ordinary words.
 */
export function proxyCredentials(env: Env): string[] {
  const out = new Set<string>();
  for (const name of PROXY_VARIABLES) {
    const value = env[name]?.trim();
    if (!value) continue;
    const { authority } = splitProxy(value.includes('://') ? value : `http://${value}`);
    const at = authority.lastIndexOf('@');
    if (at <= 0) continue;
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    const secret = colon === -1 ? userinfo : userinfo.slice(colon + 1);
    for (const piece of [userinfo, secret]) {
      out.add(piece);
      // Decoded as curl decodes it (a broken escape kept as written), which is what a server may echo.
      const decoded = percentDecoded(piece);
      if (decoded !== undefined) out.add(decoded);
    }
  }
  return [...out].filter((p) => p.length >= MIN_FRAGMENT);
}

/** How a proxy value is shown in a message: its scheme and host as written, any userinfo redacted (through text/redact.ts). */
function shownProxyValue(withScheme: string): string {
  const { scheme, authority } = splitProxy(withScheme);
  const at = authority.lastIndexOf('@');
  const shown = redactUrls(`${scheme}://${at === -1 ? '' : `${REDACTED}@`}${authority.slice(at + 1)}`);
  return shown;
}

/**
 * A proxy value as curl and git read it (no scheme = `http://`), checked the way both
 * clients can follow it: a URL that parses (a port in range, a closed IPv6 bracket), the
 * http or https scheme (undici's ProxyAgent speaks only these; curl would read another
 * scheme differently or not at all), a host, a port other than 0, and no second, unencoded
 * `@` in the userinfo (the WHATWG parser splits at the last `@`, curl at the first: the two
 * would send the credential to different hosts).
 */
export function checkProxyUrl(text: string): { url: string } | { problem: string; shown: string } {
  const withScheme = text.includes('://') ? text : `http://${text}`;
  const shown = shownProxyValue(withScheme);
  if (/\s/.test(text)) return { problem: 'it contains white space', shown };
  const { authority } = splitProxy(withScheme);
  if ((authority.match(/@/g) ?? []).length > 1) return { problem: 'its user name or password holds an unencoded "@" (write it as %40)', shown };
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    const port = /:([^:\]@]*)$/.exec(authority)?.[1];
    const why =
      authority.includes('[') && !authority.includes(']')
        ? 'its IPv6 address has no closing "]"'
        : port !== undefined && port !== '' && !/^\d{1,5}$/.test(port)
          ? `its port ${JSON.stringify(port.slice(0, 12))} is not a number`
          : port !== undefined && /^\d+$/.test(port) && Number(port) > 65535
            ? `its port ${port} is out of range (1-65535)`
            : 'it is not a valid URL';
    return { problem: why, shown };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: `the ${url.protocol.slice(0, -1)}:// scheme is not a proxy yep-ext speaks (http:// or https://)`, shown };
  }
  if (url.hostname === '') return { problem: 'it names no host', shown };
  if (url.port === '0') return { problem: 'its port 0 is out of range (1-65535)', shown };
  // A proxy is a scheme, a host and a port: undici refuses anything after them, curl drops it.
  if (url.pathname !== '/' && url.pathname !== '') return { problem: 'it has a path after the host and port (a proxy URL has none)', shown };
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(withScheme.slice(withScheme.indexOf('://') + 3)))
    return { problem: 'it has a query or fragment after the host and port (a proxy URL has none)', shown };
  for (const part of [url.username, url.password]) {
    try {
      decodeURIComponent(part);
    } catch {
      return { problem: 'its user name or password holds a broken percent escape (write "%" itself as %25)', shown };
    }
  }
  return { url: url.href };
}

/** A proxy URL for messages: scheme, host and port only (its userinfo stays out of every message), through the one URL redaction. */
export function showProxy(proxy: string): string {
  try {
    const u = new URL(proxy);
    return redactUrls(`${u.protocol}//${u.host}`);
  } catch {
    return 'the configured proxy';
  }
}
