/**
 * Our NO_PROXY decision against undici's own: net/proxy.ts copies the matcher of
 * undici's EnvHttpProxyAgent (it must decide before dispatch, see its header), so
 * a table of hosts, ports, wildcards, IPv6 literals and CIDR-looking entries is run
 * through both, and every decision must agree. undici's is read from a real
 * EnvHttpProxyAgent (the installed undici) whose three inner dispatchers are
 * replaced by recorders: its own routing code picks one, nothing is sent. The two
 * intended differences are checked on their own: loopback is never proxied, and the
 * whole NO_PROXY value is trimmed as the proxy variables are (` *` means `*`; undici
 * compares the untrimmed value with `*` and proxies).
 */
import { EnvHttpProxyAgent, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/core/net/address.js';
import { noProxyMatches, proxyFor, proxySettings } from '../../src/core/net/proxy.js';

const HTTP_PROXY = 'http://proxy.invalid:3128';
const HTTPS_PROXY = 'http://sproxy.invalid:3129';

/** Which way undici's EnvHttpProxyAgent sends `url` under `noProxy`: 'direct', or the proxy URL. */
function undiciRoute(url: string, noProxy: string): string {
  const agent = new EnvHttpProxyAgent({ httpProxy: HTTP_PROXY, httpsProxy: HTTPS_PROXY, noProxy });
  const picked: string[] = [];
  const routes: Record<string, string> = { 'no proxy agent': 'direct', 'http proxy agent': HTTP_PROXY, 'https proxy agent': HTTPS_PROXY };
  const symbols = Object.getOwnPropertySymbols(agent).filter((s) => s.description && s.description in routes);
  expect(symbols.map((s) => s.description).sort(), 'undici internals changed: update this test').toEqual(Object.keys(routes).sort());
  const real = symbols.map((s) => (agent as unknown as Record<symbol, Dispatcher>)[s]!);
  for (const s of symbols) {
    const dispatch = () => {
      picked.push(routes[s.description!]!);
      return true;
    };
    (agent as unknown as Record<symbol, unknown>)[s] = { dispatch };
  }
  const handler = { onError: (e: Error) => picked.push(`error: ${e.message}`) } as unknown as Dispatcher.DispatchHandler;
  agent.dispatch({ origin: new URL(url).origin, path: '/', method: 'GET' }, handler);
  for (const d of real) void d.close();
  expect(picked).toHaveLength(1);
  return picked[0]!;
}

/** Ours, through the same path http.ts takes (the variables read from an environment). */
function ourRoute(url: string, noProxy: string): string {
  return proxyFor(new URL(url), proxySettings({ HTTP_PROXY, HTTPS_PROXY, NO_PROXY: noProxy })) ?? 'direct';
}

const URLS = [
  'https://index.crates.io/config.json',
  'https://static.crates.io:443/crates/x',
  'https://static.crates.io:8443/x',
  'http://static.crates.io/x',
  'http://mirror.corp:8080/index/',
  'https://MIRROR.Corp/x',
  'https://crates.io/',
  'https://notcrates.io/',
  'https://a.b.crates.io/',
  'https://10.1.2.3/x',
  'https://10.1.2.3:8443/x',
  'https://192.168.0.7/',
  'https://[2001:db8::1]/x',
  'https://[2001:db8::1]:8443/x',
  'http://[fe80::1]/x',
  'https://xn--bcher-kva.example/',
  'https://bücher.example/',
  'https://host.example./',
];

const NO_PROXY = [
  '',
  '*',
  'crates.io',
  '.crates.io',
  '*.crates.io',
  'static.crates.io:443',
  'static.crates.io:8443',
  'static.crates.io:80',
  'CRATES.IO',
  'mirror.corp:8080',
  'mirror.corp',
  'a.example b.example,crates.io',
  ' crates.io , mirror.corp ',
  'crates.io,,mirror.corp',
  '10.1.2.3',
  '10.1.2.3:8443',
  '10.0.0.0/8',
  '192.168.0.0/16,10.1.2.3',
  '10.1.2.*',
  '[2001:db8::1]',
  '[2001:db8::1]:8443',
  '2001:db8::1',
  '2001:db8::/32',
  '::1',
  'fe80::1',
  'bücher.example',
  'xn--bcher-kva.example',
  'host.example',
  'host.example.',
  '*,crates.io',
  'crates.io:',
  ':443',
  '.',
  '*.',
  '**.crates.io',
];

describe('NO_PROXY: our decision equals undici EnvHttpProxyAgent', () => {
  const table = URLS.flatMap((url) => NO_PROXY.map((np) => [url, np] as const));
  it(`${table.length} url × NO_PROXY cases agree`, () => {
    const mismatches: string[] = [];
    for (const [url, np] of table) {
      if (isLoopbackHost(new URL(url).hostname)) continue;
      const theirs = undiciRoute(url, np);
      const ours = ourRoute(url, np);
      if (theirs !== ours) mismatches.push(`${url} NO_PROXY=${JSON.stringify(np)}: undici ${theirs}, ours ${ours}`);
      // The matcher alone, on the value as given (proxySettings trims it first).
      const direct = noProxyMatches(new URL(url), np.trim());
      if ((theirs === 'direct') !== direct && np.trim() === np) mismatches.push(`${url} matcher(${JSON.stringify(np)}) = ${direct}, undici ${theirs}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('the one intended difference: loopback goes direct even where undici would proxy it', () => {
    for (const url of ['http://127.0.0.1:8080/', 'http://localhost:3000/', 'http://[::1]:9000/']) {
      expect(undiciRoute(url, '')).toBe(HTTP_PROXY);
      expect(ourRoute(url, '')).toBe('direct');
    }
  });

  it('the other: NO_PROXY is trimmed before the `*` test (undici proxies ` *`; we go direct, as the user meant)', () => {
    for (const np of [' *', '* ', '\t*\n']) {
      expect(undiciRoute('https://index.crates.io/', np)).toBe(HTTPS_PROXY);
      expect(ourRoute('https://index.crates.io/', np)).toBe('direct');
    }
  });
});
