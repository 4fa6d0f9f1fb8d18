/**
 * The ref a locked git entry followed, named in its mirror repository, so that a
 * resolve against the mirror (`install <url>` with a branch, a tag or no ref,
 * `update` of a git entry; docs/fleet.md) finds what the lock pinned:
 *   - no `requested_ref` (the default branch): the mirror's HEAD, detached at the commit;
 *   - a `refs/...` name: that ref;
 *   - a short name: `refs/tags/<name>` or `refs/heads/<name>`, as the origin has it now
 *     (one `ls-remote` of the origin, only while the mirror does not name it yet);
 *   - a full commit id: nothing (a commit resolves itself).
 * A ref already in the mirror only moves forward (when its commit is an ancestor of
 * the locked one): mirroring an older lock never rolls a branch back, and several
 * locks can share one mirror. The commit ids still pin the bytes; a ref only says
 * which commit a non-exact resolve starts from.
 */
import type { SimpleGit } from 'simple-git';
import type { Context } from '../../context.js';
import type { GitRecord } from '../git.js';
import { isFullSha } from '../git-url.js';
import { sanitize } from '../../text/sanitize.js';

async function current(git: SimpleGit, ref: string): Promise<string | undefined> {
  try {
    const out = (await git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])).trim();
    return /^[0-9a-f]{40}$/.test(out) ? out : undefined;
  } catch {
    return undefined;
  }
}

async function isAncestor(git: SimpleGit, older: string, newer: string): Promise<boolean> {
  try {
    await git.raw(['merge-base', '--is-ancestor', older, newer]);
    return true;
  } catch {
    return false;
  }
}

/** The full ref name for `requested` (a short name), from the mirror, else from the origin. */
async function fullRefName(git: SimpleGit, originUrl: string, requested: string): Promise<string | undefined> {
  for (const ref of [`refs/tags/${requested}`, `refs/heads/${requested}`]) if ((await current(git, ref)) !== undefined) return ref;
  const out = await git.raw(['ls-remote', '--', originUrl, `refs/tags/${requested}`, `refs/heads/${requested}`]);
  const names = out.split('\n').map((l) => l.split('\t')[1]);
  // git's order when both exist: the tag.
  return names.includes(`refs/tags/${requested}`)
    ? `refs/tags/${requested}`
    : names.includes(`refs/heads/${requested}`)
      ? `refs/heads/${requested}`
      : undefined;
}

/** Name the lock's requested ref (or the default branch) at `rev` in the mirror repository `git`. */
export async function nameLockedRef(ctx: Context, git: SimpleGit, rec: GitRecord, rev: string): Promise<void> {
  const requested = rec.requested_ref;
  if (requested !== undefined && isFullSha(requested)) return;
  const shown = sanitize(rec.url, { max: 200 });
  const ref = requested === undefined ? 'HEAD' : requested.startsWith('refs/') ? requested : await fullRefName(git, rec.url, requested);
  if (ref === undefined) {
    ctx.log.debug(`mirror: ${shown} has no branch or tag ${JSON.stringify(sanitize(requested ?? ''))} any more; the mirror names only the commit`);
    return;
  }
  const was = await current(git, ref);
  if (was === rev) return;
  if (was !== undefined && !(await isAncestor(git, was, rev))) {
    ctx.log.info(`The mirror keeps ${ref} of ${shown} at ${was.slice(0, 12)}: the lock's ${rev.slice(0, 12)} does not descend from it.`);
    return;
  }
  await git.raw(['update-ref', ...(ref === 'HEAD' ? ['--no-deref'] : []), ref, rev]);
}
