import { describe, expect, it } from 'vitest';
import { noProxyMatches, proxyFor, proxySettings, showProxy } from '../../src/core/net/proxy.js';

const u = (s: string) => new URL(s);

describe('proxy selection (issue 14)', () => {
  it('reads the variables lower-case first; an empty lower-case value turns proxying off', () => {
    expect(proxySettings({})).toBeUndefined();
    expect(proxySettings({ HTTPS_PROXY: 'http://p:1', https_proxy: 'http://q:2' })?.httpsProxy).toBe('http://q:2');
    expect(proxySettings({ HTTPS_PROXY: 'http://p:1', https_proxy: '' })).toBeUndefined();
    expect(proxySettings({ HTTP_PROXY: 'http://p:1', NO_PROXY: 'a', no_proxy: 'b' })).toEqual({ httpProxy: 'http://p:1', httpsProxy: '', noProxy: 'b' });
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
});
