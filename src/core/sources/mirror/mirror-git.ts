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
import { makeDirs } from '../../fs/custody.js';
import { renameSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SimpleGit } from 'simple-git';
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
import type { MirrorPlan } from './mirror-plan.js';

export interface MirroredGit {
  name: string;
  url: string;
  commit: string;
  /** Path of the bare repository inside the mirror. */
  path: string;
  added: boolean;
}

/**
 * Check and stage one locked git source (mirror-plan.ts). A repository the mirror
 * already holds with the commit needs no fetch; otherwise the commit is fetched now
 * into a bare repository in scratch (full history), and the place phase moves that
 * repository into the mirror, or fetches it from scratch into the mirror's own (a
 * local fetch: no network, nothing that can fail half-way for the origin's sake).
 */
export async function mirrorGit(ctx: Context, plan: MirrorPlan, entryName: string, rec: GitRecord): Promise<MirroredGit> {
  const origin = checkGitUrl(rec.url);
  if (!isFullSha(rec.rev))
    throw new YepError(
      'E_STATE',
      `${entryName}: the lock pins ${sanitize(rec.url, { max: 200 })} to ${JSON.stringify(sanitize(rec.rev, { max: 80 }))}, which is not a 40-hex commit.`,
    );
  const rev = rec.rev.toLowerCase();
  const rel = `git/${gitMirrorPath(origin.url)}`;
  const gitDir = join(plan.root, rel);
  const shown = sanitize(origin.url, { max: 200 });
  const fail = (what: string, e: unknown): YepError =>
    gitDiskFull(e instanceof Error ? e.message : String(e), `${what} ${shown} into`, plan.root, e) ??
    new YepError('E_GIT', `${entryName}: could not ${what} ${shown} for the mirror: ${sanitize(e instanceof Error ? e.message : String(e), { max: 400 })}`, {
      cause: e,
    });
  const gitAt = (dir: string, protocols: readonly string[]) =>
    createGit(ctx, {
      remote: origin,
      allowedProtocols: protocols,
      cwd: plan.scratch,
      gitDir: dir,
      signal: ctx.signal,
      // The run's total (--timeout): the longest git may go without progress.
      idleTimeoutMs: ctx.http.limits.totalMs > 0 ? ctx.http.limits.totalMs : DEFAULT_TOTAL_MS,
      noRedirects: origin.transport === 'http',
    });
  // The mirror's repository, when it has one this mirror made (one it did not make is refused).
  plan.checkDirsOf(rel);
  const inMirror =
    plan.ownsRepo(rel) &&
    (await stat(join(gitDir, 'HEAD')).then(
      () => true,
      () => false,
    ));
  const has = (git: SimpleGit): Promise<boolean> => hasCommit(git, rev);
  let added = false;
  // A bare repository in scratch for this origin (several locked commits of one repository share it).
  const scratchDir = join(plan.scratch, rel);
  if (!(inMirror && (await has(gitAt(gitDir, origin.allowedProtocols))))) {
    await fetchIntoScratch(ctx, gitAt(scratchDir, origin.allowedProtocols), scratchDir, { entryName, url: origin.url, rev, shown, fail });
    added = true;
    if (!inMirror) {
      // A new repository: moved into the mirror whole (scratch is inside the mirror's root, one file system).
      plan.stageStep(`git:${rel}`, async () => {
        await plan.makeDirsOf(rel);
        // ownsRepo found nothing there (a repository the mirror did not make is refused): a new one moves in whole.
        renameSync(scratchDir, gitDir);
      });
    } else {
      plan.stageStep(`git:${rel}:${rev}`, async () => {
        try {
          await gitAt(gitDir, ['file']).raw(['fetch', '--quiet', '--no-tags', '--', scratchDir, `+refs/tags/yep/${rev}:refs/tags/yep/${rev}`]);
        } catch (e) {
          throw fail('add the fetched commit of', e);
        }
      });
    }
  }
  stageRefs(ctx, plan, () => gitAt(gitDir, origin.allowedProtocols), { rec: { ...rec, url: origin.url }, rel, rev, fail });
  return { name: entryName, url: origin.url, commit: rev, path: rel, added };
}

type Fail = (what: string, e: unknown) => YepError;

/**
 * Have `rev` in the scratch repository (made first if absent), fetched with its full history
 * (a dumb-HTTP client walks parents) with the source's fallbacks, and named refs/tags/yep/<rev>.
 */
async function fetchIntoScratch(
  ctx: Context,
  scratch: SimpleGit,
  scratchDir: string,
  job: { entryName: string; url: string; rev: string; shown: string; fail: Fail },
): Promise<void> {
  const { entryName, rev, shown, fail } = job;
  if (
    !(await stat(join(scratchDir, 'HEAD')).then(
      () => true,
      () => false,
    ))
  ) {
    try {
      await makeDirs(scratchDir);
      await scratch.raw(['init', '--bare', '--quiet', '--template=']);
    } catch (e) {
      throw fail('prepare a repository for', e);
    }
  }
  if (!(await hasCommit(scratch, rev))) {
    ctx.log.info(`Mirroring ${shown} at ${rev.slice(0, 12)}`);
    await fetchCommitWithFallback(scratch, {
      url: job.url,
      rev,
      shallow: false,
      refPrefix: 'refs/yep-fetch',
      signal: ctx.signal,
      log: ctx.log,
      fail: (e) => (e instanceof YepError ? e : fail('fetch', e)),
    });
    if (!(await hasCommit(scratch, rev))) {
      throw new YepError('E_NOT_FOUND', `${entryName}: commit ${rev} is not on ${shown} (any more); it cannot be mirrored.`, {
        details: { url: shown, rev },
      });
    }
  }
  try {
    await scratch.raw(['update-ref', `refs/tags/yep/${rev}`, rev]);
  } catch (e) {
    throw fail('index', e);
  }
}

/** Then the refs a resolve against the mirror looks for, and the files dumb HTTP serves: a step of the place phase. */
function stageRefs(ctx: Context, plan: MirrorPlan, mirrorGit: () => SimpleGit, job: { rec: GitRecord; rel: string; rev: string; fail: Fail }): void {
  const { rec, rel, rev, fail } = job;
  plan.stageStep(
    `git:${rel}:${rev}:refs`,
    async () => {
      const git = mirrorGit();
      try {
        await git.raw(['update-ref', `refs/tags/yep/${rev}`, rev]);
        // The ref the lock followed, so a non-exact resolve against the mirror finds it (mirror-git-refs.ts).
        await nameLockedRef(ctx, git, rec, rev);
        // Only the pinned commits are named: drop the refs a fallback fetch brought.
        const extra = (await git.raw(['for-each-ref', '--format=%(refname)', 'refs/yep-fetch/'])).split('\n').filter(Boolean);
        for (const ref of extra) await git.raw(['update-ref', '-d', ref]);
        await git.raw(['update-server-info']);
      } catch (e) {
        throw fail('index', e);
      }
    },
    2,
  );
}
