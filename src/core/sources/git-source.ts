/**
 * The git kind: a repository pinned by commit. `fetch` resolves the ref the user
 * typed, `upstream` moves the recorded ref (a bare commit never moves) and
 * `fetchExactly` fetches the locked commit and nothing else. The heavy half
 * (simple-git, the checkout policy) lives in ./git.ts and loads only on a fetch.
 */
import { YepError } from '../errors.js';
import { sanitize } from '../text/sanitize.js';
import type { GitRecord } from './git.js';
import { checkGitUrl, gitUrlHost, isFullSha } from './git-url.js';
import { gitMirrorHost } from './mirror/git-mirror-url.js';
import type { FetchPlace } from './source.js';
import type { Source } from './source.js';
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

/** The git mirror, when this run has one (ctx.gitMirror), as a place the bytes of `url` come from. */
function throughMirror(base: string | undefined, url: string): FetchPlace[] {
  if (!base) return [];
  return [{ git_host: gitMirrorHost(base, url), through: `the git mirror ${sanitize(base, { max: 200 })}` }];
}

export const gitSource: Source<'git', GitSpec, GitRecord> = {
  kind: 'git',
  noun: 'git repository',
  linked: false,
  buildable: false,

  recordKeys: { required: ['url', 'rev'], optional: ['requested_ref', 'ref_kind'] },

  describe: (rec) => `${rec.url}#${rec.rev.slice(0, 12)}`,
  // A tag is read as the tag (`…/ext.git@v1.2.0`): it names that commit for good; a branch moves, so its commit is shown.
  label: (rec) => (rec.ref_kind === 'tag' && typeof rec.requested_ref === 'string' ? `${rec.url}@${rec.requested_ref}` : gitSource.describe(rec)),
  sameOrigin: (a, b) => a.url === b.url,
  originFacts: (rec) => ({ git_host: gitUrlHost(rec.url) }),
  fetchPlaces: (ctx, rec) => throughMirror(ctx.gitMirror, rec.url),
  specPlaces: (ctx, spec) => ({ origin: { git_host: gitUrlHost(spec.url) }, via: throughMirror(ctx.gitMirror, spec.url) }),
  pin: (rec) => rec.rev,
  // A full commit as the requested ref resolves to itself: `update` keeps it there.
  pinnedExactly: (rec) => rec.requested_ref !== undefined && isFullSha(rec.requested_ref),
  follows: (rec) => rec.requested_ref ?? '',
  // `update` moves the pin to what the recorded ref names now; commits have no order to tell more.
  updateReaches: (previous, next) => previous.url === next.url && !gitSource.pinnedExactly(previous) && previous.requested_ref === next.requested_ref,
  withFollows: ({ requested_ref: _old, ref_kind: _kind, ...rec }, like) =>
    like.requested_ref !== undefined ? { ...rec, requested_ref: like.requested_ref, ...(like.ref_kind !== undefined ? { ref_kind: like.ref_kind } : {}) } : rec,
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
    const { followed, resolveGitRef } = await git();
    const { rev, kind } = await resolveGitRef(ctx, url, spec.ref);
    return { type: 'git', url, rev, ...followed(spec.ref, kind) };
  },
  async upstream(ctx, rec) {
    // The commit the recorded ref names now (ls-remote; a full commit is its own answer).
    // A recorded ref (branch or tag) moves; a bare pinned commit never does.
    const { followed, resolveGitRef } = await git();
    const { rev, kind, refName } = await resolveGitRef(ctx, rec.url, rec.requested_ref);
    const tag = kind === 'tag' && refName !== undefined ? refName.replace(/^refs\/tags\//, '') : undefined;
    const moved: GitRecord[] = rev === rec.rev ? [] : [{ type: 'git', url: rec.url, rev, ...followed(rec.requested_ref, kind) }];
    return {
      wanted: rev,
      latest: rev,
      update: rev !== rec.rev,
      beyond: false,
      versions: [],
      candidates: moved,
      outside: null,
      notes: [],
      ...(tag ? { tag } : {}),
    };
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
