/**
 * Real git repositories for tests: a bare repository that tests fetch from (file:// or
 * through the loopback HTTP server), with the history a work repository pushing into it
 * would give. Identity and config come from the environment, never from the machine's
 * global git config.
 *
 * The history is written straight into the bare repository's files, in git's own formats
 * (loose objects, loose refs), without a git process: what the tests put to git is the
 * product fetching from the repository, not the making of it, and the add, commit and push
 * each step took were processes of their own (a push alone starts several). The objects are
 * the ones git writes for the same files, message, identity and date (the same ids). A test
 * that wants to run git in the work repository itself (`repo.git`, `repo.work`) gets one
 * holding that history, and from then on every step goes through git as before.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deflateSync } from 'node:zlib';

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

type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string } | { gitlink: string } | null;
/** Relative path -> content; `null` deletes the path; `{ gitlink }` is a submodule entry at that commit. */
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
    if (typeof spec === 'object' && !Buffer.isBuffer(spec) && 'gitlink' in spec) {
      throw new Error(`git-repo: a gitlink (${rel}) is written only before git runs in the work repository`);
    } else if (typeof spec === 'object' && !Buffer.isBuffer(spec) && 'symlink' in spec) {
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

/** `name <email> <seconds> +0000`, as git writes the identity GIT_TEST_ENV gives it. */
function ident(who: 'AUTHOR' | 'COMMITTER'): string {
  const seconds = Date.parse(GIT_TEST_ENV[`GIT_${who}_DATE`]!) / 1000;
  return `${GIT_TEST_ENV[`GIT_${who}_NAME`]} <${GIT_TEST_ENV[`GIT_${who}_EMAIL`]}> ${seconds} +0000`;
}

/** One entry of a commit's tree: the mode git records and the object (a blob, or a gitlink's commit). */
interface Entry {
  mode: '100644' | '100755' | '120000' | '160000';
  id: string;
}

/** A commit this helper wrote: its files, parents and the trees and blobs it names. */
interface Written {
  files: Map<string, Entry>;
  parents: string[];
  objects: string[];
}

/**
 * The objects of one repository's history, as git stores them loose (zlib of
 * `<type> <size>\0<body>`, named by its SHA-1) in the bare repository's objects directory,
 * each kept here too: a push writes what the repository lacks of what it sends, whatever a
 * prune or a test's copying back of the directory removed meanwhile.
 */
class Objects {
  private readonly stored = new Map<string, Buffer>();
  readonly commits = new Map<string, Written>();
  /** Annotated tag object -> the commit it tags. */
  readonly tagged = new Map<string, string>();

  constructor(private readonly dir: string) {}

  private fileOf(id: string): string {
    return join(this.dir, id.slice(0, 2), id.slice(2));
  }

  /** Keep an object, and write it unless the repository holds it (a commit or a tag is written by its push); its id. */
  write(type: 'blob' | 'tree' | 'commit' | 'tag', body: Buffer): string {
    const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
    const id = createHash('sha1').update(raw).digest('hex');
    // git's own loose objects: its core.looseCompression level.
    if (!this.stored.has(id)) this.stored.set(id, deflateSync(raw, { level: 1 }));
    if (type === 'blob' || type === 'tree') this.put(id);
    return id;
  }

  private put(id: string): boolean {
    const file = this.fileOf(id);
    if (existsSync(file)) return false;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, this.stored.get(id)!, { mode: 0o444 });
    return true;
  }

  /** What a push of `id` (a commit or a tag) writes: every object it reaches that the repository lacks. */
  push(id: string): void {
    const tagged = this.tagged.get(id);
    if (tagged !== undefined) {
      this.put(id);
      this.push(tagged);
      return;
    }
    const commit = this.commits.get(id);
    if (commit === undefined) throw new Error(`git-repo: ${id} is no commit this helper wrote`);
    // A commit the repository holds comes with everything it reaches (a prune keeps or drops the lot).
    if (!this.put(id)) return;
    for (const o of commit.objects) this.put(o);
    for (const p of commit.parents) this.push(p);
  }

  /** Every object `tips` (commits and tags) reach. */
  reachable(tips: string[]): Set<string> {
    const keep = new Set<string>();
    const pending = [...tips];
    while (pending.length > 0) {
      const id = pending.pop()!;
      if (keep.has(id)) continue;
      keep.add(id);
      const tagged = this.tagged.get(id);
      if (tagged !== undefined) pending.push(tagged);
      const commit = this.commits.get(id);
      if (commit === undefined) continue;
      pending.push(...commit.parents);
      for (const o of commit.objects) keep.add(o);
    }
    return keep;
  }

  /** The tree of `files` (path -> entry), its subtrees written first; `named` collects the trees and blobs it names. */
  tree(files: Map<string, Entry>, named: string[]): string {
    const here = new Map<string, Entry | Map<string, Entry>>();
    for (const [path, entry] of files) {
      const slash = path.indexOf('/');
      if (slash === -1) {
        here.set(path, entry);
        continue;
      }
      const dir = path.slice(0, slash);
      const sub = here.get(dir) ?? new Map<string, Entry>();
      if (!(sub instanceof Map)) throw new Error(`git-repo: ${dir} is both a file and a directory`);
      sub.set(path.slice(slash + 1), entry);
      here.set(dir, sub);
    }
    // git orders a tree's entries by name, a subtree's name as if it ended in "/".
    const rows = [...here].map(([name, v]) => {
      const isTree = v instanceof Map;
      const id = isTree ? this.tree(v, named) : v.id;
      if (!isTree && v.mode !== '160000') {
        this.put(id);
        named.push(id);
      }
      return { key: Buffer.from(isTree ? `${name}/` : name), head: Buffer.from(`${isTree ? '40000' : v.mode} ${name}\0`), id };
    });
    rows.sort((a, b) => Buffer.compare(a.key, b.key));
    const id = this.write('tree', Buffer.concat(rows.flatMap((r) => [r.head, Buffer.from(r.id, 'hex')])));
    named.push(id);
    return id;
  }
}

/** A loose ref's value, else a packed one's. */
function readRef(gitDir: string, ref: string): string | undefined {
  const file = join(gitDir, ...ref.split('/'));
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const packed = join(gitDir, 'packed-refs');
  if (!existsSync(packed)) return undefined;
  return readFileSync(packed, 'utf8')
    .split('\n')
    .find((l) => l.endsWith(` ${ref}`))
    ?.slice(0, 40);
}

function writeRef(gitDir: string, ref: string, id: string): void {
  const file = join(gitDir, ...ref.split('/'));
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${id}\n`);
}

export interface TestRepo {
  /** The bare repository tests fetch from. */
  bare: string;
  /** The work repository commits are made in (git's own from the first time it is asked for). */
  readonly work: string;
  /** file:// URL of the bare repository. */
  url: string;
  /** Write files, commit everything on the current branch, push it; returns the commit. */
  commit(files?: FileMap, message?: string): string;
  /** Create (from `from`, default HEAD) or switch to `branch` in the work repo. */
  switchTo(branch: string, from?: string): void;
  /** Start `branch` with no history, keeping the files (`git checkout --orphan`): its next commit has no parent. */
  orphan(branch: string): void;
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

/** The entry a file spec is committed as, its blob written. */
function entryOf(objects: Objects, spec: Exclude<FileSpec, null>): Entry {
  if (typeof spec === 'string' || Buffer.isBuffer(spec)) return { mode: '100644', id: objects.write('blob', Buffer.from(spec)) };
  if ('symlink' in spec) return { mode: '120000', id: objects.write('blob', Buffer.from(spec.symlink)) };
  if ('gitlink' in spec) return { mode: '160000', id: spec.gitlink };
  // git records a file as executable when its owner may execute it.
  return { mode: ((spec.mode ?? 0o644) & 0o100) !== 0 ? '100755' : '100644', id: objects.write('blob', Buffer.from(spec.content)) };
}

/**
 * The repository pair. Until git runs in the work repository, its steps are written here: what
 * they change of it lives where git keeps it (HEAD, its branches and tags under .git), so a
 * test that copies the directories back puts the work repository back too; the files of a
 * commit are known from the commit. From then on each step is git's.
 */
class Repo implements TestRepo {
  readonly url: string;
  private readonly dotGit: string;
  private readonly objects: Objects;
  /** The files of an orphan branch before its first commit (else those of HEAD's commit). */
  private orphaned: Map<string, Entry> | undefined;
  private made: string | undefined;

  constructor(
    private readonly root: string,
    readonly bare: string,
    private readonly workDir: string,
    branch: string,
  ) {
    this.url = pathToFileURL(bare).href;
    this.dotGit = join(workDir, '.git');
    // The files of `git init --bare` that git needs to take the directory for a repository.
    for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) mkdirSync(join(bare, dir), { recursive: true });
    writeFileSync(join(bare, 'HEAD'), `ref: refs/heads/${branch}\n`);
    writeFileSync(join(bare, 'config'), `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n${QUIET_CONFIG}`);
    mkdirSync(this.dotGit, { recursive: true });
    writeFileSync(join(this.dotGit, 'HEAD'), `ref: refs/heads/${branch}\n`);
    this.objects = new Objects(join(bare, 'objects'));
  }

  get work(): string {
    return this.materialize();
  }

  private current(): string {
    return readFileSync(join(this.dotGit, 'HEAD'), 'utf8')
      .trim()
      .replace(/^ref: refs\/heads\//, '');
  }

  /** A commit in the work repository's terms: HEAD, a branch, a tag or a commit. */
  private workRev(rev: string): string {
    const { dotGit } = this;
    const id =
      rev === 'HEAD'
        ? readRef(dotGit, `refs/heads/${this.current()}`)
        : /^[0-9a-f]{40}$/.test(rev)
          ? rev
          : (readRef(dotGit, `refs/heads/${rev}`) ?? readRef(dotGit, `refs/tags/${rev}`));
    const commit = id !== undefined ? (this.objects.tagged.get(id) ?? id) : undefined;
    if (commit === undefined || !this.objects.commits.has(commit)) throw new Error(`git-repo: no commit ${rev} in ${this.workDir}`);
    return commit;
  }

  private filesOfHead(): Map<string, Entry> {
    if (this.orphaned !== undefined) return this.orphaned;
    const head = readRef(this.dotGit, `refs/heads/${this.current()}`);
    return head === undefined ? new Map() : this.objects.commits.get(head)!.files;
  }

  /** The work repository as git's own: these refs over a copy of the objects, HEAD's files checked out. */
  private materialize(): string {
    if (this.made !== undefined) return this.made;
    const { dotGit, workDir, bare } = this;
    if (this.orphaned !== undefined && this.orphaned.size > 0) throw new Error(`git-repo: ${workDir} is on an orphan branch with files`);
    git(['init', '--quiet', workDir], this.root);
    appendFileSync(join(dotGit, 'config'), QUIET_CONFIG);
    // A path git would quote in its config is left to git to write.
    if (/^[^\s"\\;#]+$/.test(bare))
      appendFileSync(join(dotGit, 'config'), `[remote "origin"]\n\turl = ${bare}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`);
    else git(['remote', 'add', 'origin', bare], workDir);
    cpSync(join(bare, 'objects'), join(dotGit, 'objects'), { recursive: true, force: false });
    if (readRef(dotGit, `refs/heads/${this.current()}`) !== undefined) git(['reset', '--quiet', '--hard'], workDir);
    this.made = workDir;
    return workDir;
  }

  commit(changes: FileMap = {}, message = 'change'): string {
    if (this.made !== undefined) {
      writeFiles(this.made, changes);
      git(['add', '--all'], this.made);
      git(['commit', '--quiet', '--allow-empty', '-m', message], this.made);
      git(['push', '--quiet', '--force', 'origin', 'HEAD'], this.made);
      return headOf(this.made);
    }
    const files = new Map(this.filesOfHead());
    for (const [rel, spec] of Object.entries(changes)) {
      // As on disk: what was at the path (a file, or a directory with everything under it) goes first.
      files.delete(rel);
      for (const p of files.keys()) if (p.startsWith(`${rel}/`)) files.delete(p);
      if (spec !== null) files.set(rel, entryOf(this.objects, spec));
    }
    const named: string[] = [];
    const tree = this.objects.tree(files, named);
    const branch = this.current();
    const parent = this.orphaned === undefined ? readRef(this.dotGit, `refs/heads/${branch}`) : undefined;
    const parents = parent !== undefined ? [parent] : [];
    const body = `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}author ${ident('AUTHOR')}\ncommitter ${ident('COMMITTER')}\n\n${message}\n`;
    const id = this.objects.write('commit', Buffer.from(body));
    this.objects.commits.set(id, { files, parents, objects: named });
    this.orphaned = undefined;
    writeRef(this.dotGit, `refs/heads/${branch}`, id);
    this.objects.push(id);
    writeRef(this.bare, `refs/heads/${branch}`, id);
    return id;
  }

  switchTo(branch: string, from?: string): void {
    if (this.made !== undefined) {
      const exists = git(['branch', '--list', branch], this.made) !== '';
      git(exists ? ['checkout', '--quiet', branch] : ['checkout', '--quiet', '-b', branch, from ?? 'HEAD'], this.made);
      return;
    }
    if (readRef(this.dotGit, `refs/heads/${branch}`) === undefined) writeRef(this.dotGit, `refs/heads/${branch}`, this.workRev(from ?? 'HEAD'));
    this.orphaned = undefined;
    writeFileSync(join(this.dotGit, 'HEAD'), `ref: refs/heads/${branch}\n`);
  }

  orphan(branch: string): void {
    if (this.made !== undefined) {
      git(['checkout', '--quiet', '--orphan', branch], this.made);
      return;
    }
    this.orphaned = this.filesOfHead();
    writeFileSync(join(this.dotGit, 'HEAD'), `ref: refs/heads/${branch}\n`);
  }

  tag(name: string, options: { annotated?: boolean; at?: string } = {}): string {
    const at = options.at ?? 'HEAD';
    if (this.made !== undefined) {
      git(options.annotated === false ? ['tag', name, at] : ['tag', '-a', '-m', `release ${name}`, name, at], this.made);
      git(['push', '--quiet', 'origin', `refs/tags/${name}`], this.made);
      return git(['rev-parse', `${name}^{commit}`], this.made);
    }
    if (readRef(this.dotGit, `refs/tags/${name}`) !== undefined) throw new Error(`git-repo: tag ${name} already exists`);
    const commit = this.workRev(at);
    let id = commit;
    if (options.annotated !== false) {
      id = this.objects.write('tag', Buffer.from(`object ${commit}\ntype commit\ntag ${name}\ntagger ${ident('COMMITTER')}\n\nrelease ${name}\n`));
      this.objects.tagged.set(id, commit);
    }
    writeRef(this.dotGit, `refs/tags/${name}`, id);
    this.objects.push(id);
    writeRef(this.bare, `refs/tags/${name}`, id);
    return commit;
  }

  forcePush(branch: string, rev: string): void {
    if (this.made !== undefined) {
      git(['push', '--quiet', '--force', 'origin', `${rev}:refs/heads/${branch}`], this.made);
      return;
    }
    const id = this.workRev(rev);
    this.objects.push(id);
    writeRef(this.bare, `refs/heads/${branch}`, id);
  }

  prune(): void {
    const { bare, objects } = this;
    const refs = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? refs(join(dir, d.name)) : [readFileSync(join(dir, d.name), 'utf8').trim()]));
    const tips = refs(join(bare, 'refs'));
    if (existsSync(join(bare, 'packed-refs')) || tips.some((id) => !objects.commits.has(objects.tagged.get(id) ?? id))) {
      // What git wrote (a commit made with repo.git) is left to git to judge.
      git(['reflog', 'expire', '--expire=now', '--all'], bare);
      git(['gc', '--quiet', '--prune=now'], bare);
      return;
    }
    // Every object in the repository is one this helper wrote, loose, and no reflog keeps one:
    // what no ref reaches is deleted, as `git gc --prune=now` would.
    const keep = objects.reachable(tips);
    for (const dir of readdirSync(join(bare, 'objects'))) {
      if (!/^[0-9a-f]{2}$/.test(dir)) continue;
      for (const f of readdirSync(join(bare, 'objects', dir))) if (!keep.has(dir + f)) rmSync(join(bare, 'objects', dir, f));
    }
  }

  rev(ref: string): string {
    const { bare } = this;
    const plain = ref.replace(/\^\{commit\}$/, '');
    let id: string | undefined;
    if (/^[0-9a-f]{40}$/.test(plain)) id = plain;
    else if (plain === 'HEAD')
      id = readRef(
        bare,
        readFileSync(join(bare, 'HEAD'), 'utf8')
          .trim()
          .replace(/^ref: /, ''),
      );
    else if (plain.startsWith('refs/')) id = readRef(bare, plain);
    else id = readRef(bare, `refs/tags/${plain}`) ?? readRef(bare, `refs/heads/${plain}`);
    const commit = id !== undefined ? (this.objects.tagged.get(id) ?? id) : undefined;
    // What this helper did not write itself (a commit made with repo.git) is asked of git.
    return commit !== undefined && this.objects.commits.has(commit) && existsSync(join(bare, 'objects', commit.slice(0, 2), commit.slice(2)))
      ? commit
      : git(['rev-parse', `${ref}^{commit}`], bare);
  }

  git(args: string[]): string {
    return git(args, this.materialize());
  }
}

/** A bare repo at <root>/<name>.git with a work repo beside it, both on `branch`. */
export function makeRepo(root: string, options: { name?: string; branch?: string; files?: FileMap } = {}): TestRepo {
  const name = options.name ?? 'gitext';
  const repo = new Repo(root, join(root, `${name}.git`), join(root, `${name}-work`), options.branch ?? 'main');
  if (options.files !== undefined) repo.commit(options.files, 'initial');
  return repo;
}
