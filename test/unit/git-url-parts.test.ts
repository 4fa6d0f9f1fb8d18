/**
 * The one git URL parser (sources/git-url.ts splitGitUrl) and what is derived from
 * it: the policy's git host (gitUrlHost) and the mirror's layout (gitMirrorPath).
 * One table, so the three readings of a URL cannot drift apart again (the policy
 * host of `git@[::1]:x` used to be "[").
 */
import { describe, expect, test } from 'vitest';
import { analyzeGitUrl, gitUrlHost, splitGitUrl } from '../../src/core/sources/git-url.js';
import { gitMirrorPath } from '../../src/core/sources/mirror/git-mirror-url.js';

// url, parts, policy host, mirror path
const TABLE: [string, ReturnType<typeof splitGitUrl>, string, string][] = [
  ['git@[::1]:x', { form: 'scp', scheme: 'ssh', userinfo: 'git', hostport: '[::1]', host: '[::1]', path: 'x' }, '[::1]', '__1/x.git'],
  ['git@[::1]:org/ext.git', { form: 'scp', scheme: 'ssh', userinfo: 'git', hostport: '[::1]', host: '[::1]', path: 'org/ext.git' }, '[::1]', '__1/org/ext.git'],
  [
    'git@GitHub.com:acme/ext.git',
    { form: 'scp', scheme: 'ssh', userinfo: 'git', hostport: 'GitHub.com', host: 'GitHub.com', path: 'acme/ext.git' },
    'github.com',
    'github.com/acme/ext.git',
  ],
  [
    'ssh://git@host.example/acme/ext.git',
    { form: 'url', scheme: 'ssh', userinfo: 'git', hostport: 'host.example', host: 'host.example', path: '/acme/ext.git' },
    'host.example',
    'host.example/acme/ext.git',
  ],
  [
    'ssh://git@Host.example:2222/org/ext',
    { form: 'url', scheme: 'ssh', userinfo: 'git', hostport: 'Host.example:2222', host: 'Host.example', port: '2222', path: '/org/ext' },
    'host.example',
    'host.example_2222/org/ext.git',
  ],
  [
    'ssh://git@[::1]:22/org/ext',
    { form: 'url', scheme: 'ssh', userinfo: 'git', hostport: '[::1]:22', host: '[::1]', port: '22', path: '/org/ext' },
    '[::1]',
    '__1_22/org/ext.git',
  ],
  ['git+ssh://u@h/a', { form: 'url', scheme: 'git+ssh', userinfo: 'u', hostport: 'h', host: 'h', path: '/a' }, 'h', 'h/a.git'],
  [
    'https://github.com/acme/ext.git',
    { form: 'url', scheme: 'https', hostport: 'github.com', host: 'github.com', path: '/acme/ext.git' },
    'github.com',
    'github.com/acme/ext.git',
  ],
  [
    'HTTPS://Host.Example:8443/a/b/',
    { form: 'url', scheme: 'https', hostport: 'Host.Example:8443', host: 'Host.Example', port: '8443', path: '/a/b/' },
    'host.example',
    'host.example_8443/a/b.git',
  ],
  [
    'https://host.example:443/a',
    { form: 'url', scheme: 'https', hostport: 'host.example:443', host: 'host.example', port: '443', path: '/a' },
    'host.example',
    'host.example/a.git',
  ],
  // userinfo (refused by analyzeGitUrl, but read the same way everywhere): the last @ ends it.
  [
    'https://tok:en@host.example:8443/a',
    { form: 'url', scheme: 'https', userinfo: 'tok:en', hostport: 'host.example:8443', host: 'host.example', port: '8443', path: '/a' },
    'host.example',
    'host.example_8443/a.git',
  ],
  [
    'https://a@b@host.example/a',
    { form: 'url', scheme: 'https', userinfo: 'a@b', hostport: 'host.example', host: 'host.example', path: '/a' },
    'host.example',
    'host.example/a.git',
  ],
  [
    'http://[::1]:8080/ext.git',
    { form: 'url', scheme: 'http', hostport: '[::1]:8080', host: '[::1]', port: '8080', path: '/ext.git' },
    '[::1]',
    '__1_8080/ext.git',
  ],
  [
    'http://127.0.0.1:80/ext',
    { form: 'url', scheme: 'http', hostport: '127.0.0.1:80', host: '127.0.0.1', port: '80', path: '/ext' },
    '127.0.0.1',
    '127.0.0.1/ext.git',
  ],
  ['file:///srv/repos/ext', { form: 'url', scheme: 'file', hostport: '', host: '', path: '/srv/repos/ext' }, 'file', 'file/srv/repos/ext.git'],
  ['file://localhost/srv/ext.git', { form: 'url', scheme: 'file', hostport: 'localhost', host: 'localhost', path: '/srv/ext.git' }, 'file', 'file/srv/ext.git'],
];

describe('one git URL parser: parts, policy host, mirror path', () => {
  test.each(TABLE)('%s', (url, parts, host, mirror) => {
    expect(splitGitUrl(url)).toEqual(parts);
    expect(gitUrlHost(url)).toBe(host);
    expect(gitMirrorPath(url)).toBe(mirror);
  });

  test('scp form and its ssh:// spelling land in the same mirror directory', () => {
    expect(gitMirrorPath('git@[::1]:org/ext.git')).toBe(gitMirrorPath('ssh://git@[::1]/org/ext.git'));
    expect(gitMirrorPath('git@host:org/ext.git')).toBe(gitMirrorPath('ssh://git@host/org/ext.git'));
  });

  test('a broken percent escape stays as written (as git reads the path), never an internal error; a path that is not UTF-8 is a usage error', () => {
    expect(gitMirrorPath('https://example.com/a/b%zz.git')).toBe('example.com/a/b%zz.git');
    expect(gitMirrorPath('https://example.com/a/b%41%.git')).toBe('example.com/a/bA%.git');
    expect(() => gitMirrorPath('https://example.com/a/b%ff.git')).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });

  test('neither form: no parts, no host', () => {
    for (const url of ['host:path', 'relative/dir', '']) {
      expect(splitGitUrl(url)).toBeUndefined();
      expect(gitUrlHost(url)).toBe('');
    }
  });

  test('an unparsable authority has no host, and validation says so', () => {
    expect(splitGitUrl('https://h:port/x')).toMatchObject({ hostport: 'h:port' });
    expect(splitGitUrl('https://h:port/x')).not.toHaveProperty('host');
    expect(analyzeGitUrl('https://h:port/x')).toEqual({ problem: 'has an invalid host or port' });
  });

  test('a scheme spelled "scp" is a URL with an unsupported scheme, not the scp form', () => {
    expect(splitGitUrl('scp://git@h/x')).toMatchObject({ form: 'url', scheme: 'scp' });
    expect(analyzeGitUrl('scp://git@h/x')).toEqual({ problem: expect.stringContaining('unsupported scheme "scp://"') });
  });

  test('every accepted form validates through the same parts', () => {
    for (const [url] of TABLE.filter(([u]) => !u.includes('tok:en') && !u.includes('a@b'))) expect(analyzeGitUrl(url)).not.toHaveProperty('problem');
  });
});
