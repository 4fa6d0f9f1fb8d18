/**
 * Pure validation of git URLs and refs BEFORE any git process runs (hardening
 * C20/C21). git itself has a history of turning URLs into commands (`ext::`,
 * `fd::`, `--upload-pack`, `ssh://-oProxyCommand=`, CVE-2017-1000117), so we accept
 * a small, explicit grammar and refuse everything else:
 *
 *   https://[user@]host[:port]/path     ssh://[user@]host[:port]/path
 *   user@host:path (scp style, ssh)     file:///absolute/path (local repositories)
 *   http://<loopback>[:port]/path       (127.x.x.x, [::1], localhost only)
 *
 * No component may begin with `-`; only printable ASCII; no passwords in the URL
 * (it would be saved in extensions.lock); no `@` in the path (that is where a
 * mistyped `url@feature/x` ends up: refs with `/` use `url#feature/x`).
 */
import { YepError } from '../errors.js';
import { sanitize } from '../text/sanitize.js';

type GitTransport = 'https' | 'http' | 'ssh' | 'file';

export interface GitUrl {
  /** The URL exactly as it will be given to git (and written to the lock). */
  url: string;
  transport: GitTransport;
  /** Value for GIT_ALLOW_PROTOCOL: the only transports git may use for this URL. */
  allowedProtocols: readonly string[];
}

const GIT_URL_MAX = 2048;
const GIT_REF_MAX = 255;

const FULL_SHA_RE = /^[0-9a-fA-F]{40}$/;
const USER_RE = /^[A-Za-z0-9._~%+][A-Za-z0-9._~%+-]*$/;
const HOST_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$/;
// Deliberately narrow: no quotes, shell metacharacters, backslashes, `?`, `#`, `@`.
const PATH_RE = /^[A-Za-z0-9._~%+,=:/-]+$/;
const LOOPBACK_RE = /^(?:localhost|\[::1\]|127\.(?:25[0-5]|2[0-4]\d|1?\d?\d)\.(?:25[0-5]|2[0-4]\d|1?\d?\d)\.(?:25[0-5]|2[0-4]\d|1?\d?\d))$/i;
const REMOTE_HELPER_RE = /^[A-Za-z][A-Za-z0-9+.-]*::/;

/** True for a full 40-hex commit id (what the lock records). */
export function isFullSha(text: string): boolean {
  return FULL_SHA_RE.test(text);
}

function show(text: string): string {
  return JSON.stringify(sanitize(text, { max: 200 }));
}

/** Why each path segment is unacceptable, if it is. */
function pathProblem(path: string): string | undefined {
  if (path.includes('@')) return 'has "@" in its path (to pin a ref containing "/", write url#ref, e.g. url#feature/x)';
  if (!PATH_RE.test(path)) return 'has characters that are not allowed in a repository path';
  if (path.split('/').some((seg) => seg.startsWith('-'))) return 'has a path component starting with "-"';
  return undefined;
}

/**
 * A git URL taken apart, as written (nothing decoded or lower-cased): the one
 * parser behind validation (analyzeGitUrl), the policy's git host (gitUrlHost)
 * and the mirror's layout (mirror/git-mirror-url.ts). Structural only: a part
 * may still be invalid; analyzeGitUrl says which.
 */
export interface GitUrlParts {
  /** `scheme://authority/path`, or scp-like `user@host:path` (ssh). */
  form: 'url' | 'scp';
  /** Lower-cased scheme (`https`, `ssh`, `git+ssh`, `file`, …); `ssh` for the scp form. */
  scheme: string;
  /** What precedes the last `@` of the authority (a user, or user:password). */
  userinfo?: string;
  /** The authority after the userinfo, as written (`host`, `host:2222`, `[::1]:22`). */
  hostport: string;
  /** The host of `hostport` (IPv6 in brackets); undefined when `hostport` does not parse. */
  host?: string;
  /** The port digits, when given. */
  port?: string;
  /** URL forms: from the first `/` after the authority ('' when none); scp: all after the `:`. */
  path: string;
}

const HOSTPORT_RE = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/;
const SCP_RE = /^([^@/:]+)@(\[[^\]]*\]|[^:/]+):(.*)$/;

function splitAuthority(authority: string): Pick<GitUrlParts, 'userinfo' | 'hostport' | 'host' | 'port'> {
  const at = authority.lastIndexOf('@');
  const hostport = at === -1 ? authority : authority.slice(at + 1);
  const m = HOSTPORT_RE.exec(hostport);
  return {
    ...(at !== -1 ? { userinfo: authority.slice(0, at) } : {}),
    hostport,
    ...(m ? { host: m[1]! } : {}),
    ...(m?.[2] !== undefined ? { port: m[2] } : {}),
  };
}

/** Take `url` apart (`scheme://authority/path` or scp-like `user@host:path`); undefined when it is neither. */
export function splitGitUrl(url: string): GitUrlParts | undefined {
  const sep = url.indexOf('://');
  if (sep !== -1) {
    const scheme = url.slice(0, sep).toLowerCase();
    const rest = url.slice(sep + 3);
    const slash = rest.indexOf('/');
    return { form: 'url', scheme, ...splitAuthority(slash === -1 ? rest : rest.slice(0, slash)), path: slash === -1 ? '' : rest.slice(slash) };
  }
  // scp style: user@host:path (the user part is required; a bare `host:path` is too
  // easily a local path).
  const scp = SCP_RE.exec(url);
  if (!scp) return undefined;
  const [, user = '', host = '', path = ''] = scp;
  return { form: 'scp', scheme: 'ssh', userinfo: user, hostport: host, host, path };
}

/**
 * The host a policy file's `git_hosts` names (docs/policy.md): lower-cased, an
 * IPv6 address in brackets, no user or port; `file` for a local repository; ''
 * when the URL has none.
 */
export function gitUrlHost(url: string): string {
  const parts = splitGitUrl(url);
  if (!parts) return '';
  if (parts.form === 'url' && parts.scheme === 'file') return 'file';
  return (parts.host ?? '').toLowerCase();
}

function authorityProblem(parts: GitUrlParts, transport: GitTransport): string | undefined {
  const { userinfo, host } = parts;
  if (userinfo !== undefined) {
    if (userinfo.includes(':')) return 'contains a password or token (it would be saved in extensions.lock)';
    // https://<token>@host is a common way to paste a credential; an https user name has no other use here.
    if (transport === 'https' || transport === 'http')
      return 'has a user name, which is often a token (it would be saved in extensions.lock); use a credential helper instead';
    if (userinfo.startsWith('-')) return 'has a user name starting with "-"';
    if (!USER_RE.test(userinfo)) return 'has an invalid user name';
  }
  if (host === undefined) return 'has an invalid host or port';
  if (host === '') return 'has no host';
  if (host.startsWith('-')) return 'has a host name starting with "-"';
  if (!HOST_RE.test(host)) return 'has an invalid host name';
  if (parts.port !== undefined && (Number(parts.port) < 1 || Number(parts.port) > 65535)) return 'has an invalid port';
  if (transport === 'http' && !LOOPBACK_RE.test(host)) {
    return 'uses plain http:// to a host that is not loopback (only 127.x.x.x, [::1] and localhost may use http://; use https://)';
  }
  return undefined;
}

/**
 * Classify a URL, or say why it is refused. Pure and total: never throws.
 */
export function analyzeGitUrl(url: string): GitUrl | { problem: string } {
  if (url === '') return { problem: 'is empty' };
  if (url.length > GIT_URL_MAX) return { problem: `is longer than ${GIT_URL_MAX} characters` };
  if (url.startsWith('-')) return { problem: 'starts with "-" (git would read it as an option)' };
  if (/[^\x21-\x7e]/.test(url)) return { problem: 'contains spaces, control characters or non-ASCII characters' };
  if (REMOTE_HELPER_RE.test(url)) return { problem: 'uses git\'s "<helper>::<address>" syntax (ext::, fd::...), which can run commands' };
  if (url.includes('#')) return { problem: 'contains "#" (the ref goes after it: url#ref)' };

  const parts = splitGitUrl(url);
  if (!parts) return { problem: 'is not a URL yep-ext accepts (https://, ssh://, git@host:path or file://)' };
  if (parts.form === 'url') {
    const scheme = parts.scheme;
    let transport: GitTransport;
    if (scheme === 'https') transport = 'https';
    else if (scheme === 'http') transport = 'http';
    else if (scheme === 'ssh' || scheme === 'git+ssh' || scheme === 'ssh+git') transport = 'ssh';
    else if (scheme === 'file') transport = 'file';
    else if (scheme === 'git') return { problem: 'uses the unauthenticated git:// protocol (use https:// or ssh://)' };
    else return { problem: `uses the unsupported scheme "${scheme}://" (use https://, ssh://, git@host:path or file://)` };

    if (transport === 'file') {
      // file:///abs or file://localhost/abs; any other authority is not a local path.
      const local = parts.userinfo === undefined && (parts.hostport === '' || parts.hostport === 'localhost');
      if (!local || !parts.path.startsWith('/')) return { problem: 'is not an absolute file:///path' };
      const bad = pathProblem(parts.path);
      return bad ? { problem: bad } : { url, transport, allowedProtocols: ['file'] };
    }
    const badAuthority = authorityProblem(parts, transport);
    if (badAuthority) return { problem: badAuthority };
    if (parts.path === '' || parts.path === '/') return { problem: 'has no repository path' };
    const badPath = pathProblem(parts.path);
    if (badPath) return { problem: badPath };
    // A user's url.<base>.insteadOf may rewrite https <-> ssh (a common GitHub set-up),
    // so both are allowed for either; loopback http stays http only.
    return { url, transport, allowedProtocols: transport === 'http' ? ['http'] : ['https', 'ssh'] };
  }

  const badAuthority = authorityProblem(parts, 'ssh');
  if (badAuthority) return { problem: badAuthority };
  if (parts.path === '') return { problem: 'has no repository path' };
  if (parts.path.startsWith('-')) return { problem: 'has a path starting with "-"' };
  const badPath = pathProblem(parts.path);
  if (badPath) return { problem: badPath };
  return { url, transport: 'ssh', allowedProtocols: ['https', 'ssh'] };
}

/** Why `url` is refused, or undefined when it is acceptable (for parseSpec). */
export function gitUrlProblem(url: string): string | undefined {
  const r = analyzeGitUrl(url);
  return 'problem' in r ? `the git URL ${show(url)} ${r.problem}` : undefined;
}

/** Validate a git URL; throws E_USAGE naming the problem. */
export function checkGitUrl(url: string): GitUrl {
  const r = analyzeGitUrl(url);
  if ('problem' in r) {
    const credentials = r.problem.includes('password');
    throw new YepError('E_USAGE', `Refusing the git URL ${show(url)}: it ${r.problem}.`, {
      hint: credentials
        ? 'Remove the credentials from the URL and let git authenticate: an ssh key in ssh-agent (git@host:org/repo.git) or a git credential helper (git config --global credential.helper ...).'
        : 'Accepted forms: https://host/org/repo.git, ssh://git@host/org/repo.git, git@host:org/repo.git, file:///abs/path; add @tag, @branch or @<40-hex commit>, or #ref for refs containing "/". See docs/git.md.',
      details: { url: sanitize(url, { max: 200 }) },
    });
  }
  return r;
}

/**
 * Why `ref` is refused, or undefined. A ref is a full 40-hex commit or a ref name
 * by `git check-ref-format` rules (one-level names allowed), restricted to printable
 * ASCII and never starting with `-`.
 */
export function gitRefProblem(ref: string): string | undefined {
  if (ref === '') return 'is empty';
  if (ref.length > GIT_REF_MAX) return `is longer than ${GIT_REF_MAX} characters`;
  if (isFullSha(ref)) return undefined;
  if (/[\x00-\x20\x7f]/.test(ref)) return 'contains spaces or control characters';
  if (/[^\x21-\x7e]/.test(ref)) return 'contains non-ASCII characters';
  if (ref.startsWith('-')) return 'starts with "-" (git would read it as an option)';
  if (/[~^:?*[\\]/.test(ref)) return 'contains one of ~ ^ : ? * [ \\';
  if (ref.includes('..')) return 'contains ".."';
  if (ref.includes('@{')) return 'contains "@{"';
  if (ref === '@') return 'is "@"';
  if (ref.startsWith('/') || ref.endsWith('/') || ref.includes('//')) return 'has an empty path component';
  if (ref.endsWith('.')) return 'ends with "."';
  for (const part of ref.split('/')) {
    if (part.startsWith('.')) return 'has a component starting with "."';
    if (part.endsWith('.lock')) return 'has a component ending with ".lock"';
  }
  return undefined;
}

/** Validate a ref; returns it (a full commit id lower-cased). Throws E_USAGE. */
export function checkGitRef(ref: string): string {
  const problem = gitRefProblem(ref);
  if (problem) {
    throw new YepError('E_USAGE', `Refusing the git ref ${show(ref)}: it ${problem}.`, {
      hint: 'Give a branch, a tag or a full 40-character commit (url@v1.2.0, url@main, url@<sha>); refs containing "/" use url#feature/x.',
      details: { ref: sanitize(ref, { max: 200 }) },
    });
  }
  return isFullSha(ref) ? ref.toLowerCase() : ref;
}
