/**
 * One locked git source into the mirror: a bare repository at
 * `git/<host>/<path>.git` (git-mirror-url.ts) holding the locked commit, under
 * `refs/tags/yep/<commit>` so a dumb-HTTP client that cannot ask for a bare
 * commit finds it among the tags, with `git update-server-info` run so any static
 * file server can serve it (dumb HTTP). Full history of the commit, not shallow: a
 * dumb-HTTP client walks parents, and a shallow repository would send it to
 * objects that are not there.
 *
 * Why repositories and not tarballs of the tree: installing from the mirror must
 * give the same content hash as from the origin, and the surest way is that the
 * very same fetch-and-checkout path runs (git.ts), only against another URL; a
 * tarball would have to reproduce git's checkout (modes, symlinks, attributes).
 * Git objects are content-addressed, so the commit id verifies what is fetched.
 */
import { stat } from 'node:fs/promises';
import { ensureDir } from '../../fs/fs-atomic.js';
import { dirname, join } from 'node:path';
import type { Context } from '../../context.js';
import { YepError } from '../../errors.js';
import type { GitRecord } from '../git.js';
import { checkGitUrl, isFullSha } from '../git-url.js';
import { createGit } from '../git-run.js';
import { gitDiskFull } from '../git-errors.js';
import { DEFAULT_TOTAL_MS } from '../../net/http-settings.js';
import { fetchCommitWithFallback, hasCommit } from '../git-fetch-commit.js';
import { sanitize } from '../../text/sanitize.js';
import { gitMirrorPath } from './git-mirror-url.js';
import { nameLockedRef } from './mirror-git-refs.js';

export interface MirroredGit {
  name: string;
  url: string;
  commit: string;
  /** Path of the bare repository inside the mirror. */
  path: string;
  added: boolean;
}

export async function mirrorGit(ctx: Context, root: string, entryName: string, rec: GitRecord): Promise<MirroredGit> {
  const origin = checkGitUrl(rec.url);
  if (!isFullSha(rec.rev))
    throw new YepError(
      'E_STATE',
      `${entryName}: the lock pins ${sanitize(rec.url, { max: 200 })} to ${JSON.stringify(sanitize(rec.rev, { max: 80 }))}, which is not a 40-hex commit.`,
    );
  const rev = rec.rev.toLowerCase();
  const rel = `git/${gitMirrorPath(origin.url)}`;
  const gitDir = join(root, rel);
  const git = createGit(ctx, {
    remote: origin,
    allowedProtocols: origin.allowedProtocols,
    cwd: root,
    gitDir,
    signal: ctx.signal,
    // The run's total (--timeout): the longest git may go without progress.
    idleTimeoutMs: ctx.http.limits.totalMs > 0 ? ctx.http.limits.totalMs : DEFAULT_TOTAL_MS,
    noRedirects: origin.transport === 'http',
  });
  await ensureDir(dirname(gitDir));
  const exists = await stat(join(gitDir, 'HEAD')).then(
    () => true,
    () => false,
  );
  const shown = sanitize(origin.url, { max: 200 });
  const fail = (what: string, e: unknown): YepError =>
    gitDiskFull(e instanceof Error ? e.message : String(e), `${what} ${shown} into`, root, e) ??
    new YepError('E_GIT', `${entryName}: could not ${what} ${shown} for the mirror: ${sanitize(e instanceof Error ? e.message : String(e), { max: 400 })}`, {
      cause: e,
    });
  const has = (): Promise<boolean> => hasCommit(git, rev);
  if (!exists) {
    try {
      await git.raw(['init', '--bare', '--quiet', '--template=']);
    } catch (e) {
      throw fail('prepare a repository for', e);
    }
  }
  let added = false;
  if (!(await has())) {
    ctx.log.info(`Mirroring ${shown} at ${rev.slice(0, 12)}`);
    // Full history (a dumb-HTTP client walks parents), with the source's fallbacks.
    await fetchCommitWithFallback(git, {
      url: origin.url,
      rev,
      shallow: false,
      refPrefix: 'refs/yep-fetch',
      signal: ctx.signal,
      log: ctx.log,
      fail: (e) => (e instanceof YepError ? e : fail('fetch', e)),
    });
    if (!(await has())) {
      throw new YepError('E_NOT_FOUND', `${entryName}: commit ${rev} is not on ${shown} (any more); it cannot be mirrored.`, { details: { url: shown, rev } });
    }
    added = true;
  }
  try {
    await git.raw(['update-ref', `refs/tags/yep/${rev}`, rev]);
    // The ref the lock followed, so a non-exact resolve against the mirror finds it (mirror-git-refs.ts).
    await nameLockedRef(ctx, git, { ...rec, url: origin.url }, rev);
    // Only the pinned commits are named: drop the refs a fallback fetch brought.
    const extra = (await git.raw(['for-each-ref', '--format=%(refname)', 'refs/yep-fetch/'])).split('\n').filter(Boolean);
    for (const ref of extra) await git.raw(['update-ref', '-d', ref]);
    await git.raw(['update-server-info']);
  } catch (e) {
    throw fail('index', e);
  }
  return { name: entryName, url: origin.url, commit: rev, path: rel, added };
}
