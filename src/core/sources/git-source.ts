/**
 * The git kind: a repository pinned by commit. `fetch` resolves the ref the user
 * typed, `findUpdate` moves the recorded ref (a bare commit never moves) and
 * `fetchExactly` fetches the locked commit and nothing else. The heavy half
 * (simple-git, the checkout policy) lives in ./git.ts and loads only on a fetch.
 */
import { YepError } from '../errors.js';
import { sanitize } from '../text/sanitize.js';
import type { GitRecord } from './git.js';
import { checkGitUrl, gitUrlHost, isFullSha } from './git-url.js';
import { recordTable, type Source } from './source.js';
import type { GitSpec } from './spec.js';

export type { GitRecord };

const git = () => import('./git.js');

/**
 * Reinstalling a pinned commit must reproduce its content hash: git objects are
 * content-addressed, so a different hash means the checkout was altered (a filter,
 * a changed policy, tampering). Compared with the lock's entry, whatever its URL.
 */
export function assertSameCommitSameHash(
  previous: { content_hash: string; source: { type: string; rev?: unknown } } | undefined,
  source: GitRecord,
  contentHash: string,
): void {
  if (previous?.source.type !== 'git' || previous.source.rev !== source.rev) return;
  if (previous.content_hash !== contentHash) {
    throw new YepError(
      'E_INTEGRITY',
      `Commit ${source.rev} of ${sanitize(source.url, { max: 200 })} produced content ${contentHash}, but the lock recorded ${previous.content_hash} for the same commit.`,
      {
        hint: 'Something changed the checked-out files (a git filter or attribute in your git config, or tampering). Nothing was installed. Inspect the repository, then reinstall deliberately with `yep-ext remove` + `yep-ext install`.',
        details: { rev: source.rev, wanted: previous.content_hash, got: contentHash },
      },
    );
  }
}

export const gitSource: Source<'git', GitSpec, GitRecord> = {
  kind: 'git',
  noun: 'git repository',
  linked: false,
  buildable: false,

  parseRecord(t) {
    return typeof t.url === 'string' && typeof t.rev === 'string' ? { record: t as GitRecord } : { problem: 'git source without `url`/`rev`' };
  },
  writeRecord: recordTable,

  describe: (rec) => `${rec.url}#${rec.rev.slice(0, 12)}`,
  sameOrigin: (a, b) => a.url === b.url,
  originFacts: (rec) => ({ git_host: gitUrlHost(rec.url) }),
  pin: (rec) => rec.rev,
  commit: (rec) => rec.rev,
  // A full commit as the requested ref resolves to itself: `update` keeps it there.
  pinnedExactly: (rec) => rec.requested_ref !== undefined && isFullSha(rec.requested_ref),
  follows: (rec) => rec.requested_ref ?? '',
  // `update` moves the pin to what the recorded ref names now; commits have no order to tell more.
  updateReaches: (previous, next) => previous.url === next.url && !gitSource.pinnedExactly(previous) && previous.requested_ref === next.requested_ref,
  withFollows: ({ requested_ref: _old, ...rec }, like) => (like.requested_ref !== undefined ? { ...rec, requested_ref: like.requested_ref } : rec),
  checkRepin: (previous, next) => assertSameCommitSameHash(previous, next.source, next.content_hash),

  fetch: async (ctx, spec, into) => (await git()).fetchGit(ctx, spec, into),
  async installedPin(ctx, spec, installed) {
    // Resolved (ls-remote, no download) only when this repository is installed: a new install pays nothing.
    const url = checkGitUrl(spec.url).url;
    // The same repository followed through the same ref: another ref at the same commit is a
    // re-pin (the lock's requested_ref changes, and with it what `update` follows), not "unchanged".
    const sameOrigin = (e: { source: { type: string } }): boolean => {
      const rec = e.source as { url?: unknown; requested_ref?: unknown };
      return e.source.type === 'git' && rec.url === url && rec.requested_ref === spec.ref;
    };
    if (!installed.some(sameOrigin)) return undefined;
    const { rev } = await (await git()).resolveGitRef(ctx, url, spec.ref);
    return { type: 'git', url, rev, ...(spec.ref !== undefined ? { requested_ref: spec.ref } : {}) };
  },
  async upstream(ctx, rec) {
    // The commit the recorded ref names now (ls-remote; a full commit is its own answer).
    const { rev } = await (await git()).resolveGitRef(ctx, rec.url, rec.requested_ref);
    return { wanted: rev, latest: rev, update: rev !== rec.rev, beyond: false, versions: [] };
  },
  async findUpdate(ctx, rec) {
    // A recorded ref (branch or tag) moves; a bare pinned commit never does.
    const { rev } = await (await git()).resolveGitRef(ctx, rec.url, rec.requested_ref);
    if (rev === rec.rev) return undefined;
    return { type: 'git', url: rec.url, rev, ...(rec.requested_ref !== undefined ? { requested_ref: rec.requested_ref } : {}) };
  },
  fetchExactly: async (ctx, rec, into) => (await git()).fetchGitCommit(ctx, rec, into),
  async mirror(ctx, target, name, rec) {
    // A bare repository holding the locked commit, servable by dumb HTTP (mirror/mirror-git.ts).
    const g = await (await import('./mirror/mirror-git.js')).mirrorGit(ctx, target, name, rec);
    return {
      section: 'git',
      report: g,
      record: { url: g.url, commit: g.commit, path: g.path },
      same: (x) => x.path === g.path && x.commit === g.commit,
      files: {},
    };
  },
};
