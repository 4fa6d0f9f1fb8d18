/**
 * The one way a URL is shown (src/core/text/redact.ts, redactUrls): every form of
 * userinfo is hidden, in a URL alone or inside a longer line (git's and curl's own
 * messages), for every scheme; an ssh account name stays (docs/json.md). Every
 * output road (errors, --json, logs, debug causes, git's relayed stderr) goes
 * through redactText, which applies it.
 */
import { describe, expect, it } from 'vitest';
import { REDACTED, redactText, redactUrls, redactValue } from '../../src/core/text/redact.js';
import { sanitize } from '../../src/core/text/sanitize.js';
import { gitFailure } from '../../src/core/sources/git-errors.js';

const TOKEN = 'ghp_Canary7Token4Xq9';

const HIDDEN: Array<[string, string, string]> = [
  ['user only (a token pasted as the user name)', `http://${TOKEN}@proxy.corp:8080`, `http://${REDACTED}@proxy.corp:8080`],
  ['user:password', `https://me:${TOKEN}@host/x.git`, `https://${REDACTED}@host/x.git`],
  ['empty user, password', `https://:${TOKEN}@host/`, `https://${REDACTED}@host/`],
  ['user, empty password', `https://${TOKEN}:@host/`, `https://${REDACTED}@host/`],
  ['percent-encoded', `http://us%40er:${TOKEN}%3A%2F@proxy:3128`, `http://${REDACTED}@proxy:3128`],
  ['an unencoded @ in the password', `http://me:${TOKEN}@x@proxy:3128/`, `http://${REDACTED}@proxy:3128/`],
  ['curl re-encoding an @ (host part keeps %40)', `http://${TOKEN}@RET%40127.0.0.1:1`, `http://${REDACTED}@RET%40127.0.0.1:1`],
  ['upper-case scheme', `HTTPS://${TOKEN}@HOST/`, `HTTPS://${REDACTED}@HOST/`],
  ['an IPv6 literal host', `http://${TOKEN}@[::1]:8080/x`, `http://${REDACTED}@[::1]:8080/x`],
  ['socks proxy', `socks5h://${TOKEN}:x@10.0.0.1:1080`, `socks5h://${REDACTED}@10.0.0.1:1080`],
  ['an ssh URL with a password', `ssh://git:${TOKEN}@host/x.git`, `ssh://${REDACTED}@host/x.git`],
  ['an ssh URL whose user is not a plain account name', `ssh://${TOKEN}%21@host/x.git`, `ssh://${REDACTED}@host/x.git`],
  ['a query after the host', `https://${TOKEN}@host?x=1`, `https://${REDACTED}@host?x=1`],
  ['a fragment after the host', `https://${TOKEN}@host#top`, `https://${REDACTED}@host#top`],
  [
    "git's own error line (user only)",
    `fatal: could not read Password for 'http://${TOKEN}@127.0.0.1:1': terminal prompts disabled`,
    `fatal: could not read Password for 'http://${REDACTED}@127.0.0.1:1': terminal prompts disabled`,
  ],
  [
    'two URLs on one line, in quotes and brackets',
    `proxy "http://${TOKEN}@a:1" and <https://u:${TOKEN}@b/x> done`,
    `proxy "http://${REDACTED}@a:1" and <https://${REDACTED}@b/x> done`,
  ],
  ['a URL right after other text', `url=https://${TOKEN}@h/`, `url=https://${REDACTED}@h/`],
  ["git's scp-like form with a password", `deploy:${TOKEN}@github.com:acme/x.git`, `${REDACTED}@github.com:acme/x.git`],
  [
    "the scp-like form quoted in git's message",
    `fatal: '${TOKEN}:x@[::1]:acme/x.git' does not appear`,
    `fatal: '${REDACTED}@[::1]:acme/x.git' does not appear`,
  ],
  ['the scp-like form after a key', `url=me:${TOKEN}@host.example:x.git`, `url=${REDACTED}@host.example:x.git`],
  ['across a newline', `one\nhttp://${TOKEN}@h:1\ntwo`, `one\nhttp://${REDACTED}@h:1\ntwo`],
  ['git+https with a token as user', `git+https://${TOKEN}@github.com/a/b`, `git+https://${REDACTED}@github.com/a/b`],
  // The WHATWG parser takes an authority after any run of / and \ for its special schemes: each is a user name.
  ['https without its slashes', `https:${TOKEN}@host/x`, `https:${REDACTED}@host/x`],
  ['https with one slash', `https:/${TOKEN}@host/x`, `https:/${REDACTED}@host/x`],
  ['https with backslashes', `https:\\\\${TOKEN}@host/x`, `https:\\\\${REDACTED}@host/x`],
  ['http, upper case, no slashes, in a sentence', `proxy HTTP:${TOKEN}@p/x refused`, `proxy HTTP:${REDACTED}@p/x refused`],
];

const KEPT: Array<[string, string]> = [
  ['an ssh URL with a plain account name', 'ssh://git@github.com/acme/ext.git'],
  ['git+ssh with an account name', 'git+ssh://deploy@host:2222/x.git'],
  ['scp-like git@host:path', 'git@github.com:acme/ext.git'],
  ['no userinfo', 'https://index.crates.io/yo/lo/yolop-extension-x'],
  ['an @ in the path', 'https://registry.example/@scope/pkg'],
  ['an @ in the query', 'https://h/p?mail=a@b.example'],
  ['an e-mail address', 'write to me@example.com'],
  ['no URL at all', 'plain text: a@b c:d'],
  ['a scheme word before an e-mail address across a space', 'https: me@example.com'],
];

describe('redactUrls: the one way a URL is shown', () => {
  it.each(HIDDEN)('hides %s', (_what, input, shown) => {
    expect(redactUrls(input)).toBe(shown);
    expect(redactUrls(input)).not.toContain(TOKEN);
    // Idempotent: shown text shown again is the same.
    expect(redactUrls(shown)).toBe(shown);
  });

  it.each(KEPT)('keeps %s as written', (_what, input) => {
    expect(redactUrls(input)).toBe(input);
  });

  it('every output road applies it: redactText, redactValue (keys too), sanitize and its cut', () => {
    const line = `fatal: could not read Password for 'http://${TOKEN}@127.0.0.1:1': terminal prompts disabled`;
    expect(redactText(line, [])).not.toContain(TOKEN);
    expect(JSON.stringify(redactValue({ a: [line], [`http://${TOKEN}@k`]: 1 }, []))).not.toContain(TOKEN);
    expect(sanitize(`${'x'.repeat(180)} ${line}`, { max: 200 })).not.toContain(TOKEN.slice(0, 8));
  });

  it("git's relayed stderr: the message and --json details.git carry no userinfo", () => {
    const e = gitFailure(
      `fatal: could not read Password for 'http://${TOKEN}@127.0.0.1:1': terminal prompts disabled\n`,
      'list the refs of',
      'https://git.example/x.git',
    );
    expect(e.code).toBe('E_GIT');
    expect(JSON.stringify(e.toJSON())).not.toContain(TOKEN);
    expect(String(e.details?.git)).toContain(`http://${REDACTED}@127.0.0.1:1`);
  });
});
