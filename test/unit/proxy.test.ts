import { describe, expect, it } from 'vitest';
import { YepError } from '../../src/core/errors.js';
import { checkProxyUrl, noProxyMatches, proxyCredentials, proxyFor, proxySettings, showProxy, useProxy } from '../../src/core/net/proxy.js';

const u = (s: string) => new URL(s);

describe('proxy selection', () => {
  it('reads the variables lower-case first; an empty lower-case value turns proxying off', () => {
    expect(proxySettings({})).toBeUndefined();
    expect(proxySettings({ HTTPS_PROXY: 'http://p:1', https_proxy: 'http://q:2' })?.httpsProxy).toBe('http://q:2');
    expect(proxySettings({ HTTPS_PROXY: 'http://p:1', https_proxy: '' })).toBeUndefined();
    expect(proxySettings({ HTTP_PROXY: 'http://p:1', NO_PROXY: 'a', no_proxy: 'b' })).toEqual({
      httpProxy: 'http://p:1',
      httpsProxy: '',
      noProxy: 'b',
      from: { httpProxy: 'HTTP_PROXY', httpsProxy: '' },
    });
  });
  it("ALL_PROXY is a scheme's proxy when its own variable is unset (curl's rule, which git follows); an own variable, even empty, wins", () => {
    const https = u('https://index.crates.io/x');
    const http = u('http://example.test/x');
    expect(proxyFor(https, proxySettings({ ALL_PROXY: 'http://a:1' }))).toBe('http://a:1');
    expect(proxyFor(http, proxySettings({ all_proxy: 'http://b:2', ALL_PROXY: 'http://a:1' }))).toBe('http://b:2');
    expect(proxyFor(https, proxySettings({ ALL_PROXY: 'http://a:1', HTTPS_PROXY: 'http://s:3' }))).toBe('http://s:3');
    expect(proxyFor(https, proxySettings({ ALL_PROXY: 'http://a:1', HTTP_PROXY: 'http://h:4' }))).toBe('http://a:1');
    expect(proxyFor(http, proxySettings({ ALL_PROXY: 'http://a:1', HTTP_PROXY: 'http://h:4' }))).toBe('http://h:4');
    expect(proxyFor(http, proxySettings({ ALL_PROXY: 'http://a:1', http_proxy: '' }))).toBeUndefined();
    expect(proxyFor(https, proxySettings({ ALL_PROXY: 'http://a:1', NO_PROXY: 'crates.io' }))).toBeUndefined();
    expect(proxySettings({ ALL_PROXY: 'http://a:1' })?.from).toEqual({ httpProxy: 'ALL_PROXY', httpsProxy: 'ALL_PROXY' });
  });
  it('https falls back to HTTP_PROXY; loopback is never proxied', () => {
    const s = proxySettings({ HTTP_PROXY: 'http://p:1' });
    expect(proxyFor(u('https://index.crates.io/x'), s)).toBe('http://p:1');
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '127.9.9.9']) expect(proxyFor(u(`http://${host}:8080/`), s), host).toBeUndefined();
    expect(proxyFor(u('https://index.crates.io/x'), undefined)).toBeUndefined();
  });
  it('NO_PROXY: exact host, subdomains, leading dot or *., ports, *, commas and spaces', () => {
    const url = u('https://static.crates.io/a');
    expect(noProxyMatches(url, 'crates.io')).toBe(true);
    expect(noProxyMatches(url, '.crates.io')).toBe(true);
    expect(noProxyMatches(url, '*.crates.io')).toBe(true);
    expect(noProxyMatches(url, 'static.crates.io:443')).toBe(true);
    expect(noProxyMatches(url, 'static.crates.io:8443')).toBe(false);
    expect(noProxyMatches(url, 'notcrates.io')).toBe(false);
    expect(noProxyMatches(u('https://notcrates.io/'), 'crates.io')).toBe(false);
    expect(noProxyMatches(url, 'a.example b.example,crates.io')).toBe(true);
    expect(noProxyMatches(url, '*')).toBe(true);
    expect(noProxyMatches(url, '')).toBe(false);
    expect(proxyFor(url, proxySettings({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'crates.io' }))).toBeUndefined();
  });
  it('messages show a proxy without its credentials', () => {
    expect(showProxy('http://user:secret@proxy.corp:3128')).toBe('http://proxy.corp:3128');
    expect(showProxy('not a url')).toBe('the configured proxy');
  });

  it('NO_PROXY oddities never throw and keep their plain meaning', () => {
    const url = u('https://static.crates.io/a');
    for (const odd of [
      ',,,',
      ' , ',
      '*,crates.io',
      '::1',
      '[::1]:443',
      '10.0.0.0/8',
      ':443',
      '.',
      '*.',
      'crates.io:',
      'crates.io:abc',
      '\t',
      'x'.repeat(5000),
    ]) {
      expect(() => noProxyMatches(url, odd), odd).not.toThrow();
      expect(() => useProxy(url, { HTTPS_PROXY: 'http://p:1', NO_PROXY: odd }), odd).not.toThrow();
    }
    expect(noProxyMatches(url, ' , crates.io ,')).toBe(true);
    expect(noProxyMatches(u('https://[::1]:443/'), '[::1]:443')).toBe(true);
  });
});

const CANARY = 'tok-Canary-91f3';

describe('useProxy: an unusable proxy value is a configuration error naming its variable (HTTP and git alike)', () => {
  const target = u('https://index.example/x');
  const BAD: Array<[string, RegExp]> = [
    [`ftp://${CANARY}@proxy:8080`, /ftp:\/\/ scheme/],
    [`socks5h://${CANARY}:pw@proxy:1080`, /socks5h:\/\/ scheme/],
    [`http://${CANARY}@proxy:99999`, /port 99999 is out of range/],
    [`http://${CANARY}:pw@proxy:80a`, /port "80a" is not a number/],
    [`http://${CANARY}@proxy:0`, /port 0/],
    [`http://${CANARY}@[::1`, /IPv6 address has no closing/],
    [`http://${CANARY}@[fe80::1%eth0]:3128`, /not a valid URL/],
    [`http://me:${CANARY}@x@proxy:3128`, /unencoded "@"/],
    [`${CANARY}@proxy:99999`, /port 99999/],
    [`http://${CANARY} @proxy:1`, /white space/],
    [`http://${CANARY}@:8080`, /not a valid URL|no host/],
    [`http://me:${CANARY}@proxy:3128/path`, /has a path/],
    [`http://${CANARY}@proxy:3128/?q`, /query or fragment/],
    [`http://${CANARY}@proxy:3128?`, /query or fragment/],
    [`http://me:${CANARY}@proxy:3128#f`, /query or fragment/],
    [`http://me%zz:${CANARY}@proxy:3128`, /broken percent escape/],
    [`http://me:${CANARY}%@proxy:3128`, /broken percent escape/],
  ];
  for (const variable of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy']) {
    it.each(BAD)(`${variable}=%s`, (value, why) => {
      let thrown: unknown;
      try {
        useProxy(target, { [variable]: value });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(YepError);
      const e = thrown as YepError;
      expect(e.code).toBe('E_USAGE');
      expect(e.exitCode).toBe(2);
      expect(e.message).toMatch(new RegExp(`^${variable} is not a proxy URL`));
      expect(e.message).toMatch(why);
      expect(e.details?.variable).toBe(variable);
      expect(JSON.stringify(e.toJSON())).not.toContain(CANARY);
    });
  }

  it('usable values pass, normalised the way curl reads them (no scheme = http://)', () => {
    expect(checkProxyUrl('proxy.corp:3128')).toEqual({ url: 'http://proxy.corp:3128/' });
    expect(checkProxyUrl(`http://${CANARY}@proxy:3128`)).toEqual({ url: `http://${CANARY}@proxy:3128/` });
    expect(checkProxyUrl('https://[::1]:8443')).toEqual({ url: 'https://[::1]:8443/' });
    expect(checkProxyUrl('HTTP://Proxy.Corp')).toEqual({ url: 'http://proxy.corp/' });
  });

  it('a bad value that does not apply is not consulted: loopback, NO_PROXY, or git over ssh', () => {
    const env = { HTTPS_PROXY: 'ftp://p', NO_PROXY: 'index.example' };
    expect(useProxy(u('http://127.0.0.1:9/x'), env)).toBeUndefined();
    expect(useProxy(target, env)).toBeUndefined();
  });
});

describe('proxyCredentials: what a server may echo of the proxy credentials it inherits', () => {
  it('the written and the decoded forms; a broken escape beside a valid one still decodes the valid one, as curl does', () => {
    const got = proxyCredentials({ HTTPS_PROXY: 'http://me:s3cr%40t-pass%zz@proxy.example.test:3128' });
    expect(got).toContain('s3cr%40t-pass%zz');
    expect(got).toContain('s3cr@t-pass%zz');
  });
});
