import { describe, expect, test } from 'vitest';
import { analyzeGitUrl, checkGitRef, checkGitUrl, gitRefProblem, isFullSha } from '../../src/core/sources/git-url.js';
import { YepError } from '../../src/core/errors.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('analyzeGitUrl accepts the documented forms', () => {
  test.each([
    ['https://github.com/acme/ext.git', 'https', ['https', 'ssh']],
    ['https://github.com/acme/ext', 'https', ['https', 'ssh']],
    ['https://host.example:8443/a/b/c.git', 'https', ['https', 'ssh']],
    ['HTTPS://host.example/x', 'https', ['https', 'ssh']],
    ['ssh://git@host.example/acme/ext.git', 'ssh', ['https', 'ssh']],
    ['ssh://git@host.example:2222/~user/ext.git', 'ssh', ['https', 'ssh']],
    ['git+ssh://git@host.example/acme/ext.git', 'ssh', ['https', 'ssh']],
    ['git@github.com:acme/ext.git', 'ssh', ['https', 'ssh']],
    ['git@[::1]:acme/ext.git', 'ssh', ['https', 'ssh']],
    ['file:///tmp/repos/ext.git', 'file', ['file']],
    ['file://localhost/tmp/repos/ext.git', 'file', ['file']],
    ['http://127.0.0.1:8080/ext.git', 'http', ['http']],
    ['http://127.1.2.3/ext.git', 'http', ['http']],
    ['http://localhost:9/ext.git', 'http', ['http']],
    ['http://[::1]:8080/ext.git', 'http', ['http']],
  ])('%s -> %s', (url, transport, allowed) => {
    const r = analyzeGitUrl(url);
    expect(r).toEqual({ url, transport, allowedProtocols: allowed });
  });
});

describe('analyzeGitUrl refuses (hardening C20 and friends)', () => {
  test.each([
    ['--upload-pack=touch /tmp/pwned', /starts with "-"/],
    ['https://ghp_abc123@github.com/o/r.git', /often a token/],
    ['https://git@host.example:8443/a/b/c.git', /often a token/],
    ['-oProxyCommand=touch /tmp/pwned', /spaces|starts with "-"/],
    ['ext::sh -c touch% /tmp/pwned', /spaces/],
    ['ext::sh', /helper/],
    ['fd::3', /helper/],
    ['fd::17/foo', /helper/],
    ['transport::https://host/x', /helper/],
    ['ssh://-oProxyCommand=touch%20/tmp/pwned/repo', /host name starting with "-"/],
    ['ssh://-oProxyCommand=x', /host name starting with "-"/],
    ['ssh://git@-oProxyCommand=x/repo', /host name starting with "-"/],
    ['ssh://-user@host/repo', /user name starting with "-"/],
    ['git@-oProxyCommand=x:y', /host name starting with "-"/],
    ['-git@host:repo', /starts with "-"/],
    ['git@host:-repo', /path starting with "-"/],
    ['git@host:org/-repo', /path component starting with "-"/],
    ['https://host/-repo', /path component starting with "-"/],
    ['https://host/org/repo\n', /control/],
    ['https://host/org/re po', /spaces/],
    ['https://host/org/re\u0007po', /control/],
    ['https://hôst/repo', /non-ASCII/],
    ['https://user:token@host/org/repo', /password or token/],
    ['https://host/org/repo.git@feature/x', /#ref|url#ref/],
    ['git@host:org/repo.git@feature/x', /#ref|url#ref/],
    ['https://host/org/repo#main', /"#"/],
    ['https://host', /no repository path/],
    ['https://host/', /no repository path/],
    ['https://:443/x', /no host/],
    ['https://ho_st/x', /invalid host/],
    ['https://host:99999/x', /invalid port/],
    ['https://host/x?upload-pack=1', /not allowed in a repository path/],
    ['https://host/x;rm', /not allowed in a repository path/],
    ['http://example.com/ext.git', /not loopback/],
    ['http://127.0.0.1.evil.com/ext.git', /not loopback/],
    ['http://0x7f.1/ext.git', /not loopback/],
    ['http://[::2]/ext.git', /not loopback/],
    ['git://host/ext.git', /unauthenticated git:\/\//],
    ['ftp://host/ext.git', /unsupported scheme/],
    ['file://relative/path', /absolute/],
    ['file:///tmp/-x/repo.git', /starting with "-"/],
    ['host:repo', /not a URL/],
    ['/tmp/repo.git', /not a URL/],
    ['', /empty/],
    [`https://host/${'a'.repeat(3000)}`, /longer than/],
  ])('%j', (url, why) => {
    const r = analyzeGitUrl(url);
    expect('problem' in r).toBe(true);
    expect((r as { problem: string }).problem).toMatch(why);
  });
});

describe('checkGitUrl', () => {
  test('throws E_USAGE naming the URL and the problem', () => {
    try {
      checkGitUrl('ssh://-oProxyCommand=x/y');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(YepError);
      expect((e as YepError).code).toBe('E_USAGE');
      expect((e as YepError).message).toContain('ssh://-oProxyCommand=x/y');
      expect((e as YepError).hint).toContain('#ref');
    }
  });
  test('a token in the URL gets the credentials hint', () => {
    expect(() => checkGitUrl('https://me:ghp_secret@host/x')).toThrow(YepError);
    try {
      checkGitUrl('https://me:ghp_secret@host/x');
    } catch (e) {
      expect((e as YepError).hint).toMatch(/credential helper/);
    }
  });
});

describe('refs (hardening C21)', () => {
  test.each(['main', 'v1.2.0', 'feature/x', 'release/2026/q1', 'refs/heads/main', 'refs/tags/v1', 'a-b_c+d', 'abc1234', SHA, SHA.toUpperCase()])(
    'accepts %j',
    (ref) => {
      expect(gitRefProblem(ref)).toBeUndefined();
    },
  );

  test.each([
    ['-x', /starts with "-"/],
    ['--upload-pack=touch', /starts with "-"/],
    ['--output=/tmp/x', /starts with "-"/],
    ['a..b', /"\.\."/],
    ['HEAD@{1}', /"@\{"/],
    ['main@{upstream}', /"@\{"/],
    ['has space', /spaces/],
    ['tab\tx', /control/],
    ['esc\u001b[31m', /control/],
    ['nul\u0000', /control/],
    ['del\u007f', /control/],
    ['ünï', /non-ASCII/],
    ['x.lock', /\.lock/],
    ['a/b.lock/c', /\.lock/],
    ['.hidden', /starting with "\."/],
    ['a/.b', /starting with "\."/],
    ['a//b', /empty path component/],
    ['/a', /empty path component/],
    ['a/', /empty path component/],
    ['a.', /ends with "\."/],
    ['@', /is "@"/],
    ['a~1', /one of/],
    ['a^{}', /one of/],
    ['a:b', /one of/],
    ['a?', /one of/],
    ['a*', /one of/],
    ['a[b', /one of/],
    ['a\\b', /one of/],
    ['', /empty/],
    ['x'.repeat(300), /longer than/],
  ])('refuses %j', (ref, why) => {
    expect(gitRefProblem(ref)).toMatch(why);
    expect(() => checkGitRef(ref)).toThrow(YepError);
  });

  test('checkGitRef lower-cases a full commit and keeps names as typed', () => {
    expect(checkGitRef(SHA.toUpperCase())).toBe(SHA);
    expect(checkGitRef('Feature/X')).toBe('Feature/X');
    expect(isFullSha(SHA)).toBe(true);
    expect(isFullSha(SHA.slice(1))).toBe(false);
  });
});
