/**
 * Secret values never reach output (hardening E37). Text from a
 * server, git, a registry or a file passes through here before it is shown, and
 * the rule is: redact the WHOLE text first, cut it only after. A cut made the
 * other way round leaves the first or last characters of a secret that exact
 * matching no longer finds. Where a cut happened before we could see the whole
 * text (the tail of a stream, a line a caller cut), every piece of a secret of
 * MIN_FRAGMENT characters or more left at the cut is masked too.
 *
 * Every truncation of such text goes through `truncateRedacted`; a stream's tail
 * through `maskCut` with `start: true` (src/core/yep/stderr-tail.ts).
 */
export const REDACTED = '[redacted]';

/** Pieces of a secret shorter than this may remain at a cut (shorter ones match too much ordinary text). */
export const MIN_FRAGMENT = 6;

/**
 * A word of the command line, quoted for an error that names it. A `key=value` word is shown
 * as `key=…`: an agent that puts a value on the command line (a secret where a name or a
 * `--config` belongs) must not have it repeated into output, logs or a transcript.
 */
export function shownArgument(text: string): string {
  const i = text.indexOf('=');
  const shown = i >= 0 ? `${text.slice(0, i)}=…` : text;
  return JSON.stringify(shown.length > 60 ? `${shown.slice(0, 60)}…` : shown);
}

/**
 * `scheme://<userinfo>@`: the user part of a URL's authority, whoever printed it (a proxy
 * URL in an error, a git remote line, curl's "Password for 'http://TOKEN@proxy'"). The
 * authority runs to the first `/`, `?`, `#`, white space, quote or bracket-like
 * delimiter; the userinfo is everything before its LAST `@` (as the WHATWG parser reads
 * it), so an unencoded `@` inside a password is hidden with the rest.
 */
const URL_USERINFO_RE = /\b([a-z][a-z0-9+.-]*):\/\/([^\s/?#'"<>`\\]*)@/gi;

/**
 * The schemes the WHATWG parser calls special (http, https, ws, wss, ftp) take an authority
 * after any run of `/` and `\`, none included: `https:TOKEN@host`, `https:/TOKEN@host` and
 * `https:\\TOKEN@host` all parse as `https://TOKEN@host`, a user name that is a credential.
 */
const SPECIAL_USERINFO_RE = /\b(https?|wss?|ftp):([/\\]*)([^\s/?#'"<>`\\]*)@/gi;

/**
 * What a cut can leave of a URL's userinfo when the cut is before it ends: at a start
 * cut, text opening with the rest of an authority up to its `@` (`ave:PASS@proxy`,
 * `//dave:PASS@proxy`, `tp://dave:PASS@proxy`); at an end cut, text closing with a
 * scheme and part of an authority with no `@` yet (`http://dave:PA`). Either may be a
 * credential that URL_USERINFO_RE no longer sees whole.
 */
const CUT_USERINFO_START_RE = /^(?:[a-z0-9+.-]*:)?\/{0,2}[^\s/?#'"<>`\\]*@/i;
const CUT_USERINFO_END_RE = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#'"<>`\\@]+$/i;

/**
 * git's scp-like form with a password, `user:secret@host:path`: no scheme to match, so it is
 * found by its shape (a word, a colon, then up to an `@` and a host followed by a colon),
 * where a URL or a word could begin. The plain `git@host:path` has no colon before the `@`
 * and stays as written.
 */
const SCP_USERINFO_RE = /(^|[\s'"`(<[=,;])([A-Za-z0-9._~%+-]+):([^\s@/'"`<>\\]+)@([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):/g;

/** ssh transports: their user part is an account name (`git`), never a credential ssh reads. */
const SSH_SCHEMES = new Set(['ssh', 'git+ssh', 'ssh+git']);
const PLAIN_ACCOUNT_RE = /^[A-Za-z0-9._-]+$/;

/**
 * The one way a URL reaches output: every URL in `text` (a whole URL, or URLs inside a
 * longer line such as git's own error lines) with its userinfo replaced by `[redacted]`,
 * in every form: a user alone (`http://TOKEN@proxy`, a token pasted as the user name),
 * `user:password`, percent-encoded, with an unencoded `@` in it. The one exception is an
 * ssh URL's plain account name (`ssh://git@host/…`): ssh takes no secret from a URL, and
 * the scp-like `git@host:path` names an account the same way, so both stay as written
 * (an ssh URL with `user:password`, and the scp-like `user:secret@host:path`, are
 * redacted like any other). docs/json.md.
 */
export function redactUrls(text: string): string {
  if (!text.includes('@')) return text;
  return text
    .replace(URL_USERINFO_RE, (whole, scheme: string, userinfo: string) =>
      SSH_SCHEMES.has(scheme.toLowerCase()) && PLAIN_ACCOUNT_RE.test(userinfo) ? whole : `${scheme}://${REDACTED}@`,
    )
    .replace(SPECIAL_USERINFO_RE, (_whole, scheme: string, slashes: string) => `${scheme}:${slashes}${REDACTED}@`)
    .replace(SCP_USERINFO_RE, (_whole, lead: string, _user: string, _secret: string, host: string) => `${lead}${REDACTED}@${host}:`);
}

/**
 * Whether `text` holds a URL credential: exactly what `redactUrls` would hide (so an ssh
 * account name, `git@host:path`, is none). The one test of "does this URL carry a secret",
 * for a caller that must refuse such a URL rather than show it redacted (`lock export`).
 */
export function hasUrlCredential(text: string): boolean {
  return redactUrls(text) !== text;
}

/** The spellings of each secret that text may carry: as is, and escaped inside a JSON string. Longest first. */
function spellings(secrets: readonly string[]): string[] {
  // The common call (every string of a --json document, no secret known): nothing to build.
  if (secrets.length === 0) return [];
  const out = new Set<string>();
  for (const s of secrets) {
    if (typeof s !== 'string' || s.length === 0) continue;
    out.add(s);
    const json = JSON.stringify(s).slice(1, -1);
    if (json !== s) out.add(json);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** Replace every occurrence of each secret value in `text`, and every credential in a URL. Longest first, so a secret containing another is fully hidden. */
export function redactText(text: string, secrets: readonly string[]): string {
  return redactSpelled(text, spellings(secrets));
}

/** redactText with the secrets' spellings worked out once by the caller. */
function redactSpelled(text: string, spelled: readonly string[]): string {
  let out = text;
  for (const s of spelled) out = out.split(s).join(REDACTED);
  return redactUrls(out);
}

/** Deep copy of a JSON-like value with every string redacted. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  const spelled = spellings(secrets);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactSpelled(v, spelled);
    if (Array.isArray(v)) return v.map(walk);
    // fromEntries defines own properties: a `__proto__` key stays a plain key.
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactSpelled(k, spelled), walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/**
 * Mask what a cut left of a secret: at an end cut, a prefix of a secret ending
 * the text; at a start cut, a suffix of a secret opening it (>= MIN_FRAGMENT
 * characters); with both, a text lying wholly inside a secret. And what a cut left
 * of a URL's userinfo, whoever's it is (CUT_USERINFO_*_RE). Run it on text that
 * `redactText` already saw whole.
 */
export function maskCut(text: string, secrets: readonly string[], cut: { start?: boolean; end?: boolean }): string {
  let out = text;
  for (const s of spellings(secrets)) {
    if (s.length <= MIN_FRAGMENT) continue;
    if (cut.start && cut.end && out.length >= MIN_FRAGMENT && s.includes(out)) return REDACTED;
    if (cut.end) {
      for (let k = Math.min(s.length - 1, out.length); k >= MIN_FRAGMENT; k--) {
        if (out.endsWith(s.slice(0, k))) {
          out = out.slice(0, out.length - k) + REDACTED;
          break;
        }
      }
    }
    if (cut.start) {
      for (let k = Math.min(s.length - 1, out.length); k >= MIN_FRAGMENT; k--) {
        if (out.startsWith(s.slice(s.length - k))) {
          out = REDACTED + out.slice(k);
          break;
        }
      }
    }
  }
  if (cut.start && !out.startsWith(`${REDACTED}@`)) out = out.replace(CUT_USERINFO_START_RE, `${REDACTED}@`);
  if (cut.end) out = out.replace(CUT_USERINFO_END_RE, (_whole, scheme: string) => `${scheme}${REDACTED}`);
  return out;
}

export interface TruncateOptions {
  /** Keep the start (default) or the end of the text. */
  keep?: 'head' | 'tail';
  /** What marks the cut, given the redacted length; default `… (N chars)` after a head, `…(N earlier chars dropped) ` before a tail. */
  marker?: (total: number, kept: number) => string;
  /** The caller's text was itself already cut here: mask those edges too. */
  alreadyCut?: { start?: boolean; end?: boolean };
}

/**
 * The one way to shorten text that may hold a secret: redact the whole text,
 * cut it to `max` characters (never inside a surrogate pair), mask any piece of
 * a secret left at the cut, then add the marker (not counted in `max`).
 */
export function truncateRedacted(text: string, max: number, secrets: readonly string[] = [], options: TruncateOptions = {}): string {
  const whole = redactText(text, secrets);
  const pre = options.alreadyCut ?? {};
  if (whole.length <= max) return pre.start || pre.end ? maskCut(whole, secrets, pre) : whole;
  const n = Math.max(0, max);
  if (options.keep === 'tail') {
    let start = whole.length - n;
    if (isLowSurrogate(whole.charCodeAt(start))) start++;
    start = outsideMarker(whole, start, 'after');
    const kept = maskCut(whole.slice(start), secrets, { start: true, ...(pre.end ? { end: true } : {}) });
    const marker = options.marker ?? ((total: number, k: number) => `…(${total - k} earlier chars dropped) `);
    return marker(whole.length, whole.length - start) + kept;
  }
  let end = n;
  if (end > 0 && isHighSurrogate(whole.charCodeAt(end - 1))) end--;
  end = outsideMarker(whole, end, 'before');
  const kept = maskCut(whole.slice(0, end), secrets, { end: true, ...(pre.start ? { start: true } : {}) });
  const marker = options.marker ?? ((total: number) => `… (${total} chars)`);
  return kept + marker(whole.length, end);
}

/** A cut inside a `[redacted]` marker moves to its edge (before it for a head, after it for a tail). */
function outsideMarker(text: string, at: number, side: 'before' | 'after'): number {
  const from = text.lastIndexOf(REDACTED, at - 1);
  if (from === -1 || from + REDACTED.length <= at || from >= at) return at;
  return side === 'before' ? from : from + REDACTED.length;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
