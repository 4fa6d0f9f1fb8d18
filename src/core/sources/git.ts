/**
 * The git source: resolve a ref to a commit, fetch exactly that commit into staging,
 * check it out without running anything from the repository, and hand the tree to
 * the install pipeline. Docs: docs/git.md. Hostile cases: hardening C20-C25.
 *
 * Shape of a fetch (git dir kept OUTSIDE the package tree, so `.git` never enters it):
 *   <staging>/<into>.yep-git   bare repo: init --template=, fetch --depth 1 <sha>
 *   <staging>/<into>           work tree: checkout --detach <sha>, HEAD re-checked
 * then the git dir is deleted and the tree lstat-scanned before plugin.json is read.
 */
import { removeWork } from '../fs/custody.js';
import { treeBytes } from '../fs/tree-bytes.js';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { GitError, GitPluginError, type SimpleGit } from 'simple-git';
import type { Context } from '../context.js';
import { YepError, stateIoError } from '../errors.js';
import { knownDirOf } from '../paths.js';
import { formatTimeout } from '../text/duration.js';
import { sanitize } from '../text/sanitize.js';
import { logVerbose, withStep } from '../log.js';
import type { GitSpec } from './spec.js';
import { checkGitRef, checkGitUrl, isFullSha, type GitUrl } from './git-url.js';
import { gitFailure } from './git-errors.js';
import { fetchCommitWithFallback } from './git-fetch-commit.js';
import { gitMirrorUrl } from './mirror/git-mirror-url.js';
import { createGit } from './git-run.js';
import { scanPackageTree, symlinkRefusal, tooManyBytesRefusal, tooManyFilesRefusal, type TreeStats } from './tree-scan.js';
import type { Fetched } from './source.js';

/** The lock record of a git install (host-compat §4). */
export interface GitRecord {
  type: 'git';
  url: string;
  /** Always the resolved 40-hex commit. */
  rev: string;
  /** What the user asked for (branch, tag, sha); lets `update` move a branch or tag. */
  requested_ref?: string;
  /**
   * What `requested_ref` named when it was resolved: a tag or a branch (cargo's lock records
   * `?tag=` / `?branch=` the same way). `list` and `info` then show a tag as the tag, not its
   * commit. Absent for a commit, the default branch, another `refs/` name, or an older lock.
   */
  ref_kind?: 'tag' | 'branch';
  /** SHA-256 of a prebuilt server binary, when one was provisioned. */
  binary_sha256?: string;
  [extra: string]: unknown;
}

/** What the git fetchers return. */
export type GitFetchResult = Fetched<GitRecord>;

export interface GitLimits {
  /** Overall deadline for one git operation (ls-remote, or the whole fetch + checkout). */
  timeoutMs: number;
  /** Kill git after this long without any output. */
  idleTimeoutMs: number;
  /** Cap on the fetched objects (the temporary git dir), checked while git runs. */
  maxFetchBytes: number;
  /** Cap on the checked-out tree (sum of file sizes), checked before checkout. */
  maxTreeBytes: number;
  /** Cap on the number of files in the tree. */
  maxFiles: number;
}

export const DEFAULT_GIT_LIMITS: GitLimits = {
  timeoutMs: 10 * 60_000,
  idleTimeoutMs: 2 * 60_000,
  maxFetchBytes: 512 * 1024 * 1024,
  maxTreeBytes: 512 * 1024 * 1024,
  maxFiles: 50_000,
};

export interface ResolvedGitRef {
  /** The 40-hex commit the ref points to now. */
  rev: string;
  /** The full ref name that matched (refs/tags/v1, refs/heads/main), if any. */
  refName?: string;
  kind: 'commit' | 'tag' | 'branch' | 'ref' | 'default';
}

/** One ls-remote line set: ref name -> object id (with `^{}` peeled entries, and `HEAD`). */
export interface RemoteRefs {
  refs: Map<string, string>;
  /** Where HEAD points (refs/heads/main), when the server says. */
  headTarget?: string;
}

/** Parse `git ls-remote --symref` output. Pure; unknown lines are ignored. */
export function parseLsRemote(text: string): RemoteRefs {
  const refs = new Map<string, string>();
  let headTarget: string | undefined;
  for (const line of text.split('\n')) {
    const sym = /^ref: (\S+)\tHEAD$/.exec(line);
    if (sym) {
      headTarget = sym[1];
      continue;
    }
    const m = /^([0-9a-f]{40}|[0-9a-f]{64})\t(\S+)$/.exec(line);
    if (m && !refs.has(m[2]!)) refs.set(m[2]!, m[1]!);
  }
  return { refs, ...(headTarget ? { headTarget } : {}) };
}

/** ls-remote patterns that can name `ref` (exact matches are picked afterwards). */
function refPatterns(ref: string | undefined): string[] {
  if (ref === undefined) return ['HEAD'];
  if (ref.startsWith('refs/')) return [ref, `${ref}^{}`];
  return [`refs/tags/${ref}`, `refs/tags/${ref}^{}`, `refs/heads/${ref}`];
}

/**
 * Pick the commit `ref` names from ls-remote output, git's way: an exact `refs/...`
 * name, else a tag (peeled to its commit), else a branch. Pure.
 */
export function pickRef(remote: RemoteRefs, ref: string | undefined): (ResolvedGitRef & { ambiguous?: boolean }) | undefined {
  const { refs } = remote;
  if (ref === undefined) {
    const rev = refs.get('HEAD');
    return rev ? { rev, kind: 'default', ...(remote.headTarget ? { refName: remote.headTarget } : {}) } : undefined;
  }
  if (ref.startsWith('refs/')) {
    const rev = refs.get(`${ref}^{}`) ?? refs.get(ref);
    return rev ? { rev, refName: ref, kind: ref.startsWith('refs/tags/') ? 'tag' : ref.startsWith('refs/heads/') ? 'branch' : 'ref' } : undefined;
  }
  const tag = refs.get(`refs/tags/${ref}^{}`) ?? refs.get(`refs/tags/${ref}`);
  const branch = refs.get(`refs/heads/${ref}`);
  if (tag) return { rev: tag, refName: `refs/tags/${ref}`, kind: 'tag', ...(branch && branch !== tag ? { ambiguous: true } : {}) };
  if (branch) return { rev: branch, refName: `refs/heads/${ref}`, kind: 'branch' };
  return undefined;
}

/** A deadline + cancellation scope for one operation. */
interface Scope {
  signal: AbortSignal;
  /** Why we stopped git ourselves, if we did. */
  reason(): 'timeout' | 'size' | undefined;
  abortForSize(): void;
  dispose(): void;
  /** When the timer gives up (epoch ms): shown as the wait's deadline. */
  deadlineAt: number;
}

function openScope(ctx: Context, timeoutMs: number): Scope {
  const ours = new AbortController();
  let why: 'timeout' | 'size' | undefined;
  // The operation's deadline runs on ctx.clock (the size watcher below polls the disk in real time).
  const cancel = ctx.clock.timeout(
    () => {
      why ??= 'timeout';
      ours.abort();
    },
    timeoutMs,
    { unref: true },
  );
  return {
    signal: AbortSignal.any([ctx.signal, ours.signal]),
    reason: () => why,
    abortForSize() {
      why ??= 'size';
      ours.abort();
    },
    dispose: cancel,
    deadlineAt: ctx.clock.now() + timeoutMs,
  };
}

interface RunContext {
  ctx: Context;
  url: GitUrl;
  limits: GitLimits;
  scope: Scope;
}

/** Run one git command; every failure becomes a YepError. */
async function run(rc: RunContext, git: SimpleGit, args: string[], action: string): Promise<string> {
  logVerbose(rc.ctx.log, `git ${args.join(' ')}`);
  try {
    return await git.raw(args);
  } catch (e) {
    throw toYepError(rc, e, action);
  }
}

function toYepError(rc: RunContext, e: unknown, action: string): YepError {
  if (e instanceof YepError) return e;
  const url = sanitize(rc.url.url, { max: 200 });
  if (rc.ctx.signal.aborted) return new YepError('E_INTERRUPTED', `Interrupted while git was working on ${url}.`, { cause: e });
  const why = rc.scope.reason();
  if (why === 'size') return fetchTooBig(rc.url.url, rc.limits.maxFetchBytes);
  if (why === 'timeout' || (e instanceof GitPluginError && e.plugin === 'timeout')) {
    const after = why === 'timeout' ? formatTimeout(rc.limits.timeoutMs) : `${formatTimeout(rc.limits.idleTimeoutMs)} without progress`;
    return new YepError('E_NETWORK', `git timed out after ${after} trying to ${action} ${url}.`, {
      hint:
        why === 'timeout'
          ? 'The server is slow or not answering. Check the URL and your connection, then try again.'
          : 'The server is slow or not answering. Check the URL and your connection, then try again, or give it longer with --timeout (e.g. --timeout 5m).',
      details: { url },
      cause: e,
    });
  }
  if (e instanceof GitPluginError) {
    return new YepError('E_INTERNAL', `simple-git refused to run git (${e.plugin ?? 'plugin'}): ${sanitize(e.message)}`, { cause: e });
  }
  // git writes only into staging, in the store: a full disk there is named by the store.
  const writes = knownDirOf(rc.ctx.paths, rc.ctx.paths.stagingDir);
  if (e instanceof GitError) return gitFailure(e.message, action, rc.url.url, e, writes);
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') {
    return new YepError('E_GIT', 'git is not installed (or not on PATH).', { hint: 'Install git, then run the command again.', cause: e });
  }
  return gitFailure(String((e as Error)?.message ?? e), action, rc.url.url, e, writes);
}

function fetchTooBig(url: string, max: number): YepError {
  return new YepError('E_UNSAFE_PACKAGE', `Refusing ${sanitize(url, { max: 200 })}: the fetched git objects exceed ${max} bytes.`, {
    hint: 'The repository is larger than an extension should be. Ask the author to publish a smaller package (or a crate).',
    details: { url: sanitize(url, { max: 200 }), maxBytes: max },
  });
}

/** Poll the size of `dir` while git writes into it; abort the scope above `max`. */
function watchSize(dir: string, max: number, scope: Scope): { stop(): Promise<number> } {
  let busy: Promise<number> = Promise.resolve(0);
  let last = 0;
  const tick = (): void => {
    busy = busy.then(async () => {
      // Entries git renames while the walk looks are skipped.
      last = treeBytes(dir);
      if (last > max) scope.abortForSize();
      return last;
    });
  };
  const timer = setInterval(tick, 200);
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      tick();
      return busy;
    },
  };
}

/** A place git can run that is ours, and a GIT_DIR that exists nowhere (no repository discovery). */
function neutralDirs(ctx: Context): { cwd: string; gitDir: string } {
  const cwd = existsSync(ctx.paths.configDir) ? ctx.paths.configDir : tmpdir();
  return { cwd, gitDir: join(ctx.paths.stagingDir, `.no-repository-${process.pid}`) };
}

/** The defaults, with the run's total (`--timeout`, ctx.http.limits.totalMs) as the longest git may go without progress. */
function limitsOf(ctx: Context, partial?: Partial<GitLimits>): GitLimits {
  const total = ctx.http.limits.totalMs;
  return { ...DEFAULT_GIT_LIMITS, ...(total > 0 ? { idleTimeoutMs: total } : {}), ...(partial ?? {}) };
}

async function listRemote(rc: RunContext, patterns: string[]): Promise<RemoteRefs> {
  const { cwd, gitDir } = neutralDirs(rc.ctx);
  const git = createGit(rc.ctx, {
    remote: rc.url,
    allowedProtocols: rc.url.allowedProtocols,
    cwd,
    gitDir,
    signal: rc.scope.signal,
    idleTimeoutMs: rc.limits.idleTimeoutMs,
    noRedirects: rc.url.transport === 'http',
  });
  const out = await run(rc, git, ['ls-remote', '--symref', '--', rc.url.url, ...patterns], 'list the refs of');
  return parseLsRemote(out);
}

async function resolveWith(rc: RunContext, ref: string | undefined): Promise<ResolvedGitRef> {
  if (ref !== undefined && isFullSha(ref)) return { rev: ref.toLowerCase(), kind: 'commit' };
  const host = sanitize(rc.url.url, { max: 200 });
  const remote = await withStep(
    rc.ctx.log,
    `Resolving ${ref === undefined ? 'the default branch' : sanitize(ref, { max: 100 })} on ${host}`,
    () => listRemote(rc, refPatterns(ref)),
    {
      // ls-remote prints nothing until it is done: the wait without progress is its deadline.
      deadlineAt: Math.min(rc.scope.deadlineAt, rc.ctx.clock.now() + rc.limits.idleTimeoutMs),
    },
  );
  const picked = pickRef(remote, ref);
  const url = sanitize(rc.url.url, { max: 200 });
  if (!picked) {
    if (ref === undefined) {
      throw new YepError('E_NOT_FOUND', `${url} has no default branch (is the repository empty?).`, {
        hint: 'Name a branch or tag: url@<branch> or url#<ref>.',
      });
    }
    const shown = JSON.stringify(sanitize(ref, { max: 200 }));
    if (/^[0-9a-f]{4,39}$/i.test(ref)) {
      throw new YepError('E_NOT_FOUND', `${url} has no branch or tag named ${shown}, and abbreviated commits cannot be fetched from a server.`, {
        hint: 'Give the full 40-character commit id (git rev-parse <short-sha> in a clone prints it).',
      });
    }
    throw new YepError('E_NOT_FOUND', `${url} has no branch or tag named ${shown}.`, {
      hint: `List what it has with: git ls-remote ${rc.url.url}`,
    });
  }
  if (!/^[0-9a-f]{40}$/.test(picked.rev)) {
    throw new YepError('E_UNSUPPORTED', `${url} uses SHA-256 object ids, which yep-ext (and the lock format) do not support yet.`);
  }
  if (picked.ambiguous) {
    rc.ctx.log.warn(
      `${url}: both a tag and a branch are named ${JSON.stringify(sanitize(ref ?? ''))}; using the tag (write refs/heads/${sanitize(ref ?? '')} for the branch).`,
    );
  }
  const { ambiguous: _ignored, ...resolved } = picked;
  return resolved;
}

/**
 * The commit `ref` points to on `url` right now (`git ls-remote`, no download).
 * A full 40-hex `ref` is returned as is (a commit never moves); no ref = the
 * default branch. Validates url and ref first (E_USAGE).
 */
export async function resolveGitRef(ctx: Context, url: string, ref?: string, limits?: Partial<GitLimits>): Promise<ResolvedGitRef> {
  const checkedUrl = checkGitUrl(url);
  const checkedRef = ref === undefined ? undefined : checkGitRef(ref);
  const lim = limitsOf(ctx, limits);
  const scope = openScope(ctx, lim.timeoutMs);
  try {
    return await resolveWith({ ctx, url: transportOf(ctx, checkedUrl).from, limits: lim, scope }, checkedRef);
  } finally {
    scope.dispose();
  }
}

/** Parsed `git ls-tree -r -l -z` entry. */
export interface TreeEntry {
  mode: string;
  type: string;
  size: number | undefined;
  path: string;
}

/** Parse `git ls-tree -r -l -z` output. Pure. */
export function parseLsTree(text: string): TreeEntry[] {
  const out: TreeEntry[] = [];
  for (const rec of text.split('\0')) {
    if (rec === '') continue;
    const m = /^(\d{6}) (\w+) ([0-9a-f]{40,64}) +(-|\d+)\t([\s\S]*)$/.exec(rec);
    if (!m) throw new YepError('E_GIT', `Unexpected output from git ls-tree: ${sanitize(rec, { max: 200 })}`);
    out.push({ mode: m[1]!, type: m[2]!, size: m[4] === '-' ? undefined : Number(m[4]), path: m[5]! });
  }
  return out;
}

/**
 * Check a commit's tree from git's own listing, before anything is written:
 * symlinks are refused (the same rule as the lstat scan, earlier), caps enforced,
 * submodules reported (never fetched: they stay empty directories).
 */
export function inspectTree(entries: TreeEntry[], limits: Pick<GitLimits, 'maxFiles' | 'maxTreeBytes'>): { notes: string[] } {
  const notes: string[] = [];
  let files = 0;
  let bytes = 0;
  for (const e of entries) {
    if (e.mode === '120000') throw symlinkRefusal(e.path);
    if (e.mode === '160000') {
      notes.push(`Submodule "${sanitize(e.path)}" was not fetched (yep-ext never fetches submodules); it is an empty directory.`);
      continue;
    }
    if (e.type !== 'blob') continue;
    files++;
    bytes += e.size ?? 0;
  }
  if (files > limits.maxFiles) throw tooManyFilesRefusal(limits.maxFiles, '.', files);
  if (bytes > limits.maxTreeBytes) throw tooManyBytesRefusal(limits.maxTreeBytes, '.', bytes);
  return { notes };
}

async function makeDir(dir: string, mode: number): Promise<void> {
  try {
    mkdirSync(dir, { mode });
  } catch (e) {
    throw stateIoError('create', dir, e);
  }
}

/**
 * How much history the fetch brought, from the shallow boundary git recorded (`<gitDir>/shallow`,
 * read rather than asking git to count: no process for a debug line): a boundary of `rev`
 * alone is that one commit; none is the whole history (a server that needed the fallback).
 */
async function fetchedHistory(gitDir: string, rev: string): Promise<string> {
  const shallow = await readFile(join(gitDir, 'shallow'), 'utf8').then(
    (text) => text.split('\n').filter(Boolean),
    () => [],
  );
  if (shallow.length === 0) return 'the whole history';
  return shallow.length === 1 && shallow[0] === rev ? '1 commit(s)' : `a shallow history with ${shallow.length} boundary commit(s)`;
}

/**
 * HEAD after the detached checkout of `rev`, read from the git dir's HEAD file, where git writes
 * a detached HEAD's commit: no process for the usual answer. Whatever else the file holds (a
 * symbolic ref, another commit, a ref storage that keeps HEAD elsewhere) is asked of git, so a
 * HEAD that is not `rev` is judged as git resolves it.
 */
async function headAfterCheckout(rc: RunContext, git: SimpleGit, gitDir: string, rev: string): Promise<string> {
  const written = await readFile(join(gitDir, 'HEAD'), 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
  return written === rev ? rev : (await run(rc, git, ['rev-parse', '--verify', 'HEAD'], 'check out')).trim();
}

/**
 * Fetch commit `rev` of `url` into a new directory `into` (work tree only).
 * Shallow fetch of the exact commit, with the fallbacks of git-fetch-commit.ts
 * (`refName` shallowly, then every branch and tag) for servers that refuse it.
 */
async function fetchCommitInto(rc: RunContext, rev: string, into: string, refName: string | undefined): Promise<{ notes: string[]; stats: TreeStats }> {
  const parent = dirname(into);
  const gitDir = join(parent, `${basename(into)}.yep-git`);
  const base = {
    remote: rc.url,
    allowedProtocols: rc.url.allowedProtocols,
    cwd: parent,
    gitDir,
    signal: rc.scope.signal,
    idleTimeoutMs: rc.limits.idleTimeoutMs,
    noRedirects: rc.url.transport === 'http',
  };
  const git = createGit(rc.ctx, base);
  const url = rc.url.url;
  const shown = sanitize(url, { max: 200 });
  let created = false;
  let intoCreated = false;
  try {
    await makeDir(gitDir, 0o700);
    created = true;
    await run(rc, git, ['init', '--bare', '--quiet', '--template='], 'prepare a repository for');
    const watcher = watchSize(gitDir, rc.limits.maxFetchBytes, rc.scope);
    const fetched = await fetchCommitWithFallback(git, {
      url,
      rev,
      ...(refName !== undefined ? { refName } : {}),
      shallow: true,
      progress: true,
      refPrefix: 'refs/yep',
      signal: rc.scope.signal,
      log: rc.ctx.log,
      fail: (e, action) => toYepError(rc, e, action),
    }).then(
      (present) => ({ present }),
      (error: unknown) => ({ error }),
    );
    // Past the size limit, that is the error, whatever the fetch did: the watcher aborts a fetch that grows past it.
    const size = await watcher.stop();
    if (size > rc.limits.maxFetchBytes) throw fetchTooBig(url, rc.limits.maxFetchBytes);
    if ('error' in fetched) throw fetched.error;
    const commitPresent = fetched.present;
    if (!commitPresent) {
      throw new YepError('E_NOT_FOUND', `Commit ${rev} is not on ${shown} (any more).`, {
        hint: 'The branch was probably force-pushed or the commit deleted. Install a current ref (yep-ext install <url>@<ref>) or ask the author to restore the commit.',
        details: { url: shown, rev },
      });
    }
    const { notes } = inspectTree(parseLsTree(await run(rc, git, ['ls-tree', '-r', '-l', '-z', '--full-tree', rev], 'inspect')), rc.limits);

    await makeDir(into, 0o755);
    intoCreated = true;
    const worktreeGit = createGit(rc.ctx, { ...base, workTree: into });
    await run(rc, worktreeGit, ['checkout', '--quiet', '--force', '--no-recurse-submodules', '--detach', rev], 'check out');
    const head = await headAfterCheckout(rc, worktreeGit, gitDir, rev);
    if (head !== rev) {
      throw new YepError('E_INTEGRITY', `After checkout HEAD is ${sanitize(head, { max: 80 })}, not the commit ${rev} that was asked for; refusing ${shown}.`, {
        details: { wanted: rev, got: sanitize(head, { max: 80 }) },
      });
    }
    rc.ctx.log.debug(`git: fetched ${await fetchedHistory(gitDir, rev)} of ${shown}, checked out ${rev}`);
    await removeWork(gitDir);
    created = false;
    const stats = await scanPackageTree(into, { maxFiles: rc.limits.maxFiles, maxBytes: rc.limits.maxTreeBytes });
    for (const note of notes) rc.ctx.log.warn(note);
    return { notes, stats };
  } catch (e) {
    // Only what we made: `into` must not have existed, but a caller's bug must not cost data.
    if (intoCreated) await removeWork(into);
    throw toYepError(rc, e, 'fetch from');
  } finally {
    if (created) await removeWork(gitDir);
  }
}

/** The clone as a wait the user sees, with the operation's deadline. */
function cloning<T>(rc: RunContext, rev: string, work: () => Promise<T>): Promise<T> {
  return withStep(rc.ctx.log, `Cloning ${sanitize(rc.url.url, { max: 200 })} at ${rev.slice(0, 12)}`, work, { deadlineAt: rc.scope.deadlineAt });
}

/**
 * Where git talks to for `url`: a git mirror (ctx.gitMirror: --git-mirror / YEP_EXT_GIT_MIRROR,
 * docs/fleet.md) when one is set, for resolving refs and fetching alike, else the
 * origin. The mirror is a transport: records keep the origin URL.
 */
function transportOf(ctx: Context, url: GitUrl): { from: GitUrl; note: string } {
  const mirrored = gitMirrorUrl(ctx.gitMirror, url.url);
  if (mirrored === undefined) return { from: url, note: '' };
  return { from: checkGitUrl(mirrored), note: ` from the mirror ${sanitize(mirrored, { max: 200 })}` };
}

/** The record's `requested_ref` and, for a tag or a branch, its `ref_kind`. Pure. */
export function followed(ref: string | undefined, kind: ResolvedGitRef['kind'] | GitRecord['ref_kind']): Pick<GitRecord, 'requested_ref' | 'ref_kind'> {
  if (ref === undefined) return {};
  return { requested_ref: ref, ...(kind === 'tag' || kind === 'branch' ? { ref_kind: kind } : {}) };
}

/**
 * Fetch a git spec into `into` (which must not exist; its parent must): resolve the
 * ref (default branch, tag, branch, `refs/...` or full commit), fetch only that
 * commit, check it out, drop `.git`, and lstat-scan the tree. URL and ref are
 * validated before any process starts (E_USAGE).
 */
export async function fetchGit(ctx: Context, spec: GitSpec, into: string, limits?: Partial<GitLimits>): Promise<GitFetchResult> {
  const url = checkGitUrl(spec.url);
  const ref = spec.ref === undefined ? undefined : checkGitRef(spec.ref);
  const lim = limitsOf(ctx, limits);
  const scope = openScope(ctx, lim.timeoutMs);
  const { from, note } = transportOf(ctx, url);
  const rc: RunContext = { ctx, url: from, limits: lim, scope };
  try {
    const resolved = await resolveWith(rc, ref);
    ctx.log.info(
      `Fetching ${sanitize(url.url, { max: 200 })} at ${resolved.rev.slice(0, 12)}${ref !== undefined && ref !== resolved.rev ? ` (${sanitize(ref)})` : ''}${note}`,
    );
    const { notes } = await cloning(rc, resolved.rev, () => fetchCommitInto(rc, resolved.rev, into, resolved.refName));
    const source: GitRecord = { type: 'git', url: url.url, rev: resolved.rev, ...followed(spec.ref, resolved.kind) };
    return { dir: into, source, ...(notes.length ? { notes } : {}) };
  } finally {
    scope.dispose();
  }
}

/**
 * Fetch exactly the commit a lock entry pins (frozen install, reinstall). Never
 * follows the requested ref: if the commit is gone (force-push, deletion) this
 * fails with E_NOT_FOUND instead of installing something else.
 */
export async function fetchGitCommit(
  ctx: Context,
  pin: { url: string; rev: string; requested_ref?: string; ref_kind?: GitRecord['ref_kind'] },
  into: string,
  limits?: Partial<GitLimits>,
): Promise<GitFetchResult> {
  const url = checkGitUrl(pin.url);
  if (!isFullSha(pin.rev)) {
    throw new YepError(
      'E_STATE',
      `The lock pins ${sanitize(pin.url, { max: 200 })} to ${JSON.stringify(sanitize(pin.rev, { max: 80 }))}, which is not a 40-hex commit.`,
      {
        hint: 'Reinstall the extension from its source (yep-ext install <url>@<ref>) to record a proper commit.',
      },
    );
  }
  const rev = pin.rev.toLowerCase();
  const lim = limitsOf(ctx, limits);
  const scope = openScope(ctx, lim.timeoutMs);
  const { from, note } = transportOf(ctx, url);
  try {
    ctx.log.info(`Fetching ${sanitize(url.url, { max: 200 })} at ${rev.slice(0, 12)}${note}`);
    const rc: RunContext = { ctx, url: from, limits: lim, scope };
    const { notes } = await cloning(rc, rev, () => fetchCommitInto(rc, rev, into, undefined));
    const source: GitRecord = { type: 'git', url: url.url, rev, ...followed(pin.requested_ref, pin.ref_kind) };
    return { dir: into, source, ...(notes.length ? { notes } : {}) };
  } finally {
    scope.dispose();
  }
}
