/**
 * Real git repositories for tests: a work repo pushing into a bare repo that tests
 * fetch from (file:// or through the loopback HTTP server). Identity and config
 * come from the environment, never from the machine's global git config.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Environment for helper git commands: fixed identity, no global/system config, no prompts. */
export const GIT_TEST_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent-yep-test-home',
  LC_ALL: 'C',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Yep Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Yep Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** Run git synchronously for a test; returns trimmed stdout, throws with stderr. */
export function git(args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd, env: { ...GIT_TEST_ENV, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string } | null;
/** Relative path -> content; `null` deletes the path. */
export type FileMap = Record<string, FileSpec>;

export function manifestFor(name: string, version = '1.0.0'): string {
  return `${JSON.stringify({ name, version, description: 'a git fixture', yolop: { capabilityServer: { command: `${name}-server` }, prompt: true } }, null, 2)}\n`;
}

/** The fixture extension: plugin.json + an executable bin/<name>-server. */
export function fixtureFiles(name = 'gitext', version = '1.0.0'): FileMap {
  return {
    'plugin.json': manifestFor(name, version),
    [`bin/${name}-server`]: { content: `#!/bin/sh\necho "${name} ${version}"\n`, mode: 0o755 },
    'README.md': `# ${name}\n`,
  };
}

function writeFiles(dir: string, files: FileMap): void {
  for (const [rel, spec] of Object.entries(files)) {
    const abs = join(dir, ...rel.split('/'));
    rmSync(abs, { recursive: true, force: true });
    if (spec === null) continue;
    mkdirSync(dirname(abs), { recursive: true });
    if (typeof spec === 'object' && !Buffer.isBuffer(spec) && 'symlink' in spec) {
      symlinkSync(spec.symlink, abs);
    } else if (typeof spec === 'string' || Buffer.isBuffer(spec)) {
      writeFileSync(abs, spec);
    } else {
      writeFileSync(abs, spec.content);
      if (spec.mode !== undefined) chmodSync(abs, spec.mode);
    }
  }
}

/**
 * Config both repositories get: no automatic gc or maintenance after a commit or a push (a
 * fixture never holds the thousands of loose objects that would trigger one, yet each commit
 * and push still starts the check as processes of their own), and, for the work repo, the
 * `origin` remote `git remote add` would write. Appended to the config file git init wrote,
 * in the form git itself writes it: a process fewer per repository.
 */
const QUIET_CONFIG = '[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[receive]\n\tautogc = false\n';

/** HEAD's commit in a work repository, read from its files as git keeps them (a loose ref after a commit), else asked of git. */
function headOf(work: string): string {
  const dotGit = join(work, '.git');
  const head = readFileSync(join(dotGit, 'HEAD'), 'utf8').trim();
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref: (refs\/\S+)$/.exec(head)?.[1];
  const loose = ref !== undefined ? join(dotGit, ...ref.split('/')) : undefined;
  if (loose !== undefined && existsSync(loose)) {
    const rev = readFileSync(loose, 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(rev)) return rev;
  }
  return git(['rev-parse', 'HEAD'], work);
}

export interface TestRepo {
  /** The bare repository tests fetch from. */
  bare: string;
  /** The work repository commits are made in. */
  work: string;
  /** file:// URL of the bare repository. */
  url: string;
  /** Write files, commit everything on the current branch, push it; returns the commit. */
  commit(files?: FileMap, message?: string): string;
  /** Create (from `from`, default HEAD) or switch to `branch` in the work repo. */
  switchTo(branch: string, from?: string): void;
  /** Tag HEAD (annotated by default) and push the tag. */
  tag(name: string, options?: { annotated?: boolean; at?: string }): string;
  /** Point `branch` in the bare repo at `rev` (history rewrite). */
  forcePush(branch: string, rev: string): void;
  /** Drop unreachable objects from the bare repo (what a host's gc eventually does). */
  prune(): void;
  /** Resolve a ref in the bare repo to its commit. */
  rev(ref: string): string;
  /** Run git in the work repo. */
  git(args: string[]): string;
}

/** A bare repo at <root>/<name>.git with a work repo beside it, both on `branch`. */
export function makeRepo(root: string, options: { name?: string; branch?: string; files?: FileMap } = {}): TestRepo {
  const name = options.name ?? 'gitext';
  const branch = options.branch ?? 'main';
  const bare = join(root, `${name}.git`);
  const work = join(root, `${name}-work`);
  mkdirSync(root, { recursive: true });
  git(['init', '--quiet', '--bare', `--initial-branch=${branch}`, bare], root);
  git(['init', '--quiet', `--initial-branch=${branch}`, work], root);
  appendFileSync(join(bare, 'config'), QUIET_CONFIG);
  appendFileSync(join(work, '.git', 'config'), QUIET_CONFIG);
  // A path git would quote in its config is left to git to write.
  if (/^[^\s"\\;#]+$/.test(bare))
    appendFileSync(join(work, '.git', 'config'), `[remote "origin"]\n\turl = ${bare}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`);
  else git(['remote', 'add', 'origin', bare], work);
  const repo: TestRepo = {
    bare,
    work,
    url: pathToFileURL(bare).href,
    commit(files = {}, message = 'change') {
      writeFiles(work, files);
      git(['add', '--all'], work);
      git(['commit', '--quiet', '--allow-empty', '-m', message], work);
      git(['push', '--quiet', '--force', 'origin', 'HEAD'], work);
      return headOf(work);
    },
    switchTo(b, from) {
      const exists = git(['branch', '--list', b], work) !== '';
      git(exists ? ['checkout', '--quiet', b] : ['checkout', '--quiet', '-b', b, from ?? 'HEAD'], work);
    },
    tag(tagName, tagOptions = {}) {
      const at = tagOptions.at ?? 'HEAD';
      git(tagOptions.annotated === false ? ['tag', tagName, at] : ['tag', '-a', '-m', `release ${tagName}`, tagName, at], work);
      git(['push', '--quiet', 'origin', `refs/tags/${tagName}`], work);
      return git(['rev-parse', `${tagName}^{commit}`], work);
    },
    forcePush(b, rev) {
      git(['push', '--quiet', '--force', 'origin', `${rev}:refs/heads/${b}`], work);
    },
    prune() {
      git(['reflog', 'expire', '--expire=now', '--all'], bare);
      git(['gc', '--quiet', '--prune=now'], bare);
    },
    rev(ref) {
      return git(['rev-parse', `${ref}^{commit}`], bare);
    },
    git(args) {
      return git(args, work);
    },
  };
  if (options.files !== undefined) repo.commit(options.files, 'initial');
  return repo;
}
