/**
 * Turn a failed git run into a YepError that says what happened and what to do.
 * git's English messages (we force LC_ALL=C) are the only signal git gives, so the
 * classification is by text; anything unrecognised keeps git's last lines.
 */
import { YepError, stateIoError } from '../errors.js';
import { sanitize } from '../text/sanitize.js';

const CREDENTIALS_HINT =
  'If the repository is private, let git authenticate without a prompt: for git@host:... or ssh:// URLs load your key into ssh-agent (ssh-add) or name it in ~/.ssh/config; for https:// URLs configure a git credential helper (git config --global credential.helper ...). Putting a token in the URL is not recommended: the URL is saved in extensions.lock.';

const AUTH_RE =
  /terminal prompts disabled|could not read (?:Username|Password)|Authentication failed|Permission denied \(|HTTP Basic: Access denied|returned error: 40[13]|Repository not found|Invalid username or password|access denied|not authorized/i;
const HOST_KEY_RE = /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/i;
const NOT_FOUND_RE =
  /does not appear to be a git repository|repository '[^']*' not found|not found: did you run git update-server-info|returned error: 404|No such file or directory|not a git repository/i;
const NETWORK_RE =
  /Could not resolve host|Could not resolve hostname|Connection refused|Failed to connect|Connection timed out|Operation timed out|Operation too slow|Connection reset|Network is unreachable|early EOF|the remote end hung up/i;
const PROTOCOL_RE = /transport '[^']*' not allowed/i;

/** curl's prompt for the credentials of a URL: the repository's, or a proxy's. */
const ASKED_FOR_RE = /could not read (?:Username|Password) for '([^']+)'/i;

/** The host:port a URL names (lower case), or undefined when it does not parse. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The last few meaningful lines of git's stderr, safe to show. */
export function gitOutputTail(text: string, lines = 4): string {
  const kept = text
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(?:remote: )?(?:Counting|Compressing|Receiving|Resolving|Enumerating|Total) /.test(l));
  return sanitize(kept.slice(-lines).join(' | '), { max: 600 });
}

/** Did the server refuse a want for a commit it did not advertise (protocol v0)? */
export function isUnadvertisedRefusal(text: string): boolean {
  // A dumb-HTTP server (a static mirror, docs/fleet.md) cannot fetch shallowly: fall back like a refusal.
  return /not our ref|unadvertised object|couldn't find remote ref|no such remote ref|Server does not allow request|dumb http transport does not support shallow/i.test(
    text,
  );
}

const DISK_FULL_RE = /No space left on device|Disk quota exceeded/i;

/**
 * git ran out of disk while writing into `dir` (its objects, a checkout): the disk's
 * state, through the one I/O mapping (stateIoError, exit 7), not a git failure. Undefined
 * when `output` says nothing of the kind.
 */
export function gitDiskFull(output: string, action: string, dir: string, cause?: unknown): YepError | undefined {
  const m = DISK_FULL_RE.exec(output);
  if (!m) return undefined;
  const code = /quota/i.test(m[0]) ? 'EDQUOT' : 'ENOSPC';
  return stateIoError(action, dir, Object.assign(new Error(gitOutputTail(output)), { code, cause }), dir);
}

/** Classify git's failure output for `action` ("fetch", "list refs of") on `url`; `dir` is where git was writing, when it was. */
export function gitFailure(output: string, action: string, url: string, cause?: unknown, dir?: string): YepError {
  const tail = gitOutputTail(output);
  const where = sanitize(url, { max: 200 });
  const full = dir === undefined ? undefined : gitDiskFull(output, `${action} ${where} into`, dir, cause);
  if (full) return full;
  const details = { url: where, git: tail };
  if (HOST_KEY_RE.test(output)) {
    return new YepError('E_GIT', `git could not ${action} ${where}: the server's ssh host key is unknown or changed.`, {
      hint: 'Check the host key and add it to ~/.ssh/known_hosts (for example by running `ssh -T <host>` once); yep-ext never accepts host keys for you.',
      details,
      cause,
    });
  }
  const asked = ASKED_FOR_RE.exec(output)?.[1];
  if (asked !== undefined && hostOf(asked) !== undefined && hostOf(asked) !== hostOf(url)) {
    // curl asks for the password of a proxy written with a user alone (http://TOKEN@proxy): not the repository's.
    return new YepError('E_GIT', `git could not ${action} ${where}: the proxy asked for credentials. git said: ${tail}`, {
      hint: 'Your proxy variable (HTTPS_PROXY or HTTP_PROXY) names a user but no password; git would prompt for it, and yep-ext never lets it prompt. Write both, http://user:password@host:port (percent-encode "@" and ":" inside them), or drop the user name.',
      details,
      cause,
    });
  }
  if (AUTH_RE.test(output)) {
    return new YepError('E_GIT', `git could not ${action} ${where}: the server asked for credentials (or the repository does not exist). git said: ${tail}`, {
      hint: CREDENTIALS_HINT,
      details,
      cause,
    });
  }
  if (PROTOCOL_RE.test(output)) {
    return new YepError('E_GIT', `git could not ${action} ${where}: it tried a transport yep-ext does not allow for this URL. git said: ${tail}`, {
      hint: 'A url.<base>.insteadOf rule in your git config may rewrite this URL; yep-ext allows only https and ssh (file:// and loopback http:// only as typed).',
      details,
      cause,
    });
  }
  if (NOT_FOUND_RE.test(output)) {
    return new YepError('E_NOT_FOUND', `git could not ${action} ${where}: no repository there. git said: ${tail}`, {
      hint: 'Check the URL (and, for a private repository, your credentials).',
      details,
      cause,
    });
  }
  if (NETWORK_RE.test(output)) {
    return new YepError('E_NETWORK', `git could not ${action} ${where}: network failure. git said: ${tail}`, {
      hint: 'Check your connection and proxy settings (https_proxy), then try again.',
      details,
      cause,
    });
  }
  return new YepError('E_GIT', `git could not ${action} ${where}. git said: ${tail || '(nothing)'}`, { details, cause });
}
