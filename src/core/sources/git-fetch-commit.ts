/**
 * The one "fetch this commit, with fallbacks" of yep-ext, used by the git source
 * (a checkout into staging, git.ts) and by the mirror (a bare repository holding
 * the commit, mirror/mirror-git.ts). Servers differ in what they let a client ask
 * for, so the commit is asked for in up to three ways, each only when the one
 * before was refused (never after a timeout, a size stop or an auth failure: a
 * larger fetch would not help and would hide the cause):
 *   1. the commit itself (protocol v2 servers allow any reachable commit);
 *   2. the ref it came from, when known (v0 servers advertise only ref tips);
 *   3. every branch and tag (after unshallowing what step 2 left shallow).
 * `shallow` fetches depth 1 (a checkout needs one tree); a mirror takes full
 * history, since a dumb-HTTP client walks parents. Refs the fallbacks bring land
 * under `refPrefix` (the caller deletes or ignores them).
 */
import { GitError, GitPluginError, type SimpleGit } from 'simple-git';
import type { Logger } from '../log.js';
import { logVerbose } from '../log.js';
import { sanitize } from '../text/sanitize.js';
import { isUnadvertisedRefusal } from './git-errors.js';

export interface CommitFetch {
  /** The validated URL to fetch from (after `--`). */
  url: string;
  /** Full lower-case 40-hex commit. */
  rev: string;
  /** The ref the commit was resolved from (`refs/heads/main`), when known: step 2. */
  refName?: string;
  /** Depth 1 (a checkout) or full history (a mirror). */
  shallow: boolean;
  /** Pass `--progress` (a checkout shown to the user as a wait). */
  progress?: boolean;
  /** Namespace for the refs the fallbacks create (`refs/yep`). */
  refPrefix: string;
  /** An aborted operation never falls back. */
  signal?: AbortSignal;
  log: Logger;
  /** The caller's error for a failure that is not a refusal (`action`: "fetch from", "inspect"). */
  fail(e: unknown, action: 'fetch from' | 'inspect'): unknown;
}

/** Whether `git` (a bare repository) holds `rev` as a commit. */
export async function hasCommit(git: SimpleGit, rev: string): Promise<boolean> {
  try {
    return (await git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`])).trim() === rev;
  } catch {
    return false;
  }
}

/** Fetch `o.rev` into the repository `git` works on; true when the commit is there afterwards. */
export async function fetchCommitWithFallback(git: SimpleGit, o: CommitFetch): Promise<boolean> {
  const base = ['fetch', '--no-tags', '--no-recurse-submodules', ...(o.progress ? ['--progress'] : []), '--no-write-fetch-head'];
  const depth = o.shallow ? ['--depth=1'] : [];
  const shown = sanitize(o.url, { max: 200 });
  /** One step: true when it ran, false when the server refused what was asked for. */
  const step = async (args: string[]): Promise<boolean> => {
    try {
      logVerbose(o.log, `git ${args.join(' ')}`);
      await git.raw(args);
      return true;
    } catch (e) {
      if (e instanceof GitError && !(e instanceof GitPluginError) && isUnadvertisedRefusal(e.message) && !o.signal?.aborted) return false;
      throw o.fail(e, 'fetch from');
    }
  };
  if ((await step([...base, ...depth, '--', o.url, o.rev])) && (await hasCommit(git, o.rev))) return true;
  if (o.refName !== undefined) {
    o.log.debug(`git: ${shown} refused commit ${o.rev}; fetching ${o.refName}`);
    if ((await step([...base, ...depth, '--', o.url, `+${o.refName}:${o.refPrefix}/wanted`])) && (await hasCommit(git, o.rev))) return true;
  }
  o.log.debug(`git: ${shown} refused commit ${o.rev}; fetching all branches and tags`);
  // Step 2 may have left a shallow repository whose boundary hides older commits.
  let unshallow: string[] = [];
  if (o.shallow) {
    try {
      unshallow = (await git.raw(['rev-parse', '--is-shallow-repository'])).trim() === 'true' ? ['--unshallow'] : [];
    } catch (e) {
      throw o.fail(e, 'inspect');
    }
  }
  return (
    (await step([...base, ...unshallow, '--', o.url, `+refs/heads/*:${o.refPrefix}/heads/*`, `+refs/tags/*:${o.refPrefix}/tags/*`])) &&
    (await hasCommit(git, o.rev))
  );
}
