/**
 * Where a git repository lives in a mirror (docs/fleet.md, "Git in the mirror"):
 * a bare repository at `git/<host>/<path>.git`, served as files (dumb HTTP) or read
 * in place (`file://`). The mapping from the locked URL is fixed and readable, so
 * `--git-mirror <url>` / YEP_EXT_GIT_MIRROR (the mirror's `git/` root, ctx.gitMirror) is all an
 * installer needs:
 *
 *   https://github.com/acme/ext.git      -> <git-mirror>/github.com/acme/ext.git
 *   ssh://git@host:2222/org/ext          -> <git-mirror>/host_2222/org/ext.git
 *   git@host:org/ext.git                 -> <git-mirror>/host/org/ext.git
 *   file:///srv/repos/ext                -> <git-mirror>/file/srv/repos/ext.git
 *
 * Host lower-cased, user and credentials dropped, a port kept as `_port`, a trailing
 * `/` or `.git` dropped and `.git` added. The lock keeps the origin URL: the mirror
 * is a transport, and the commit id pins the bytes wherever they come from.
 */
import { percentDecoded } from '../../text/percent-decode.js';
import { YepError } from '../../errors.js';
import { gitUrlHost, splitGitUrl } from '../git-url.js';

function clean(path: string): string {
  const segs = path.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.some((s) => s === '..' || s.startsWith('.')))
    throw new YepError('E_USAGE', `The git URL path ${JSON.stringify(path)} cannot be mapped into a mirror (a segment starts with ".").`);
  const joined = segs.join('/').replace(/\.git$/, '');
  if (joined === '') throw new YepError('E_USAGE', 'A git URL without a repository path cannot be mapped into a mirror.');
  return `${joined}.git`;
}

/** The repository's path inside the mirror's `git/` root, from its (validated) URL. */
export function gitMirrorPath(url: string): string {
  const parts = splitGitUrl(url);
  if (!parts) throw new YepError('E_USAGE', `The git URL ${JSON.stringify(url)} cannot be mapped into a mirror.`);
  if (parts.form === 'scp') return `${mirrorHost(parts.host ?? '')}/${clean(parts.path)}`;
  // The path as a URL reads it (dot segments resolved, percent-escapes decoded).
  const decoded = percentDecoded(new URL(url).pathname);
  if (decoded === undefined)
    throw new YepError('E_USAGE', `The git URL ${JSON.stringify(url)} cannot be mapped into a mirror (its path is not UTF-8 once decoded).`);
  const path = clean(decoded);
  if (parts.scheme === 'file') return `file/${path}`;
  const port = parts.port === undefined ? undefined : Number(parts.port);
  const shownPort = port === undefined || port === DEFAULT_PORTS[parts.scheme] ? '' : `_${port}`;
  return `${mirrorHost(parts.host ?? '')}${shownPort}/${path}`;
}

/** A scheme's default port is not part of the layout (https://h:443/x is https://h/x). */
const DEFAULT_PORTS: Record<string, number> = { https: 443, http: 80 };

/** Lower-cased, an IPv6 address without brackets and with `_` for `:` (a file name). */
function mirrorHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replaceAll(':', '_');
}

/** The URL to fetch `url` from through the git mirror rooted at `base` (ctx.gitMirror), else undefined. */
export function gitMirrorUrl(base: string | undefined, url: string): string | undefined {
  if (!base) return undefined;
  return `${base.endsWith('/') ? base : `${base}/`}${gitMirrorPath(url)}`;
}

/**
 * The host this run fetches `url` from through the git mirror rooted at `base`, in a
 * policy file's terms (`file` for a mirror read in place): the policy's `git_hosts`
 * admits it as well as the origin the lock records.
 */
export function gitMirrorHost(base: string, url: string): string {
  return gitUrlHost(gitMirrorUrl(base, url) ?? base) || 'file';
}
