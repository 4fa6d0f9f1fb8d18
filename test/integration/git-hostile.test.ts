/**
 * Hostile git sources (hardening.md C20-C25) plus caps and timeouts, against real
 * repositories, a real loopback HTTP git server and a stalled TCP server.
 * "Rejected before git runs" is observed, not assumed: a git wrapper first on PATH
 * records every invocation.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createContext } from '../../src/core/context.js';
import { YepError } from '../../src/core/errors.js';
import { memoryLogger } from '../../src/core/log.js';
import { fetchGit, fetchGitCommit, resolveGitRef, type GitLimits } from '../../src/core/sources/git.js';
import type { GitSpec } from '../../src/core/sources/spec.js';
import { makeStagingDir } from '../../src/core/store/staging.js';
import { fixtureFiles, git, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { startGitHttpServer, startSilentServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
let repo: TestRepo;
let fakebin: string;
let gitLog: string;

const REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

function spec(url: string, ref?: string): GitSpec {
  return { kind: 'git', raw: url, url, ...(ref !== undefined ? { ref } : {}) };
}

function script(path: string, body: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A context whose PATH starts with the git wrapper that logs every run. */
function spiedCtx(extra: Record<string, string> = {}) {
  return home.ctx({ PATH: `${fakebin}:${process.env.PATH}`, ...extra });
}

function gitRuns(): string[] {
  return existsSync(gitLog)
    ? readFileSync(gitLog, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

function ctxWithHome(label: string, gitconfig: string, extra: Record<string, string> = {}) {
  const h = join(home.root, `home-${label}`);
  mkdirSync(h, { recursive: true });
  writeFileSync(join(h, '.gitconfig'), gitconfig);
  return home.ctx({ HOME: h, ...extra });
}

async function newInto(): Promise<string> {
  return join(await makeStagingDir(home.ctx(), 'hostile'), 'pkg');
}

/** Staging holds nothing: no package tree, no temporary git dir. */
function expectNothingLeft(into: string): void {
  expect(existsSync(into)).toBe(false);
  expect(readdirSync(dirname(into))).toEqual([]);
}

async function rejection(p: Promise<unknown>): Promise<YepError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(YepError);
    return e as YepError;
  }
  throw new Error('expected a rejection');
}

beforeAll(() => {
  // Its git repositories, fetches and staged trees are many small files: on a memory filesystem (../helpers/scratch.ts).
  home = makeTempHome('yep-git-hostile-');
  repo = makeRepo(join(home.root, 'repos'), { files: fixtureFiles() });
  repo.tag('v1');
  fakebin = join(home.root, 'fakebin');
  gitLog = join(home.root, 'git-runs.log');
  script(join(fakebin, 'git'), `echo "$*" >> '${gitLog}'\nexec '${REAL_GIT}' "$@"`);
});

afterAll(() => home?.cleanup());

describe('C20: hostile URLs are rejected before git runs', () => {
  const hostile = [
    '--upload-pack=touch /tmp/yep-pwned',
    '--upload-pack=touch%20/tmp/yep-pwned',
    '-oProxyCommand=touch /tmp/yep-pwned',
    'ext::sh -c touch% /tmp/yep-pwned',
    'ext::sh',
    'fd::3',
    'fd::3,4',
    'ssh://-oProxyCommand=touch%20/tmp/yep-pwned/repo',
    'ssh://-oProxyCommand=touch%20/tmp/yep-pwned',
    'git@-oProxyCommand=x:y',
    'git@host:-u/x',
    'https://host/org/repo\u001b[2J',
    'http://example.com/repo.git',
    'git://127.0.0.1/repo.git',
  ];

  test('the git wrapper really logs runs (so the assertions below can fail)', async () => {
    const into = await newInto();
    await fetchGit(spiedCtx(), spec(repo.url, 'v1'), into);
    expect(gitRuns().some((l) => / ls-remote /.test(l))).toBe(true);
    writeFileSync(gitLog, '');
  });

  test.each(hostile)('%j', async (url) => {
    writeFileSync(gitLog, '');
    const into = await newInto();
    const e1 = await rejection(fetchGit(spiedCtx(), spec(url, 'v1'), into));
    expect(e1.code).toBe('E_USAGE');
    expect(e1.message).toMatch(/Refusing the git URL/);
    expect(e1.message).not.toContain('\u001b');
    expect((await rejection(resolveGitRef(spiedCtx(), url, 'main'))).code).toBe('E_USAGE');
    expect((await rejection(fetchGitCommit(spiedCtx(), { url, rev: 'a'.repeat(40) }, into))).code).toBe('E_USAGE');
    expect(gitRuns()).toEqual([]);
    expectNothingLeft(into);
    expect(existsSync('/tmp/yep-pwned')).toBe(false);
  });
});

describe('C21: hostile refs are rejected before git runs', () => {
  test.each([
    '-x',
    '--upload-pack=touch /tmp/yep-pwned',
    '--output=/tmp/yep-pwned',
    'a..b',
    'main@{1}',
    'has space',
    'x\ty',
    'x\u001b[31m',
    'x\u0000y',
    'x.lock',
    '.x',
    'a//b',
  ])('%j', async (ref) => {
    writeFileSync(gitLog, '');
    const into = await newInto();
    expect((await rejection(fetchGit(spiedCtx(), spec(repo.url, ref), into))).code).toBe('E_USAGE');
    expect((await rejection(resolveGitRef(spiedCtx(), repo.url, ref))).code).toBe('E_USAGE');
    expect((await rejection(fetchGitCommit(spiedCtx(), { url: repo.url, rev: ref }, into))).code).toMatch(/E_USAGE|E_STATE/);
    expect(gitRuns()).toEqual([]);
    expectNothingLeft(into);
  });
});

describe('C22: a branch force-pushed after locking', () => {
  test('the locked commit is gone: the frozen fetch fails instead of installing the new head', async () => {
    const r = makeRepo(join(home.root, 'force'), { files: fixtureFiles() });
    const locked = (await fetchGit(home.ctx(), spec(r.url, 'main'), await newInto())).source.rev;
    // rewrite history: main now points at an unrelated commit
    r.orphan('rewrite');
    const rewritten = r.commit({ 'README.md': 'rewritten\n' }, 'rewrite');
    r.forcePush('main', rewritten);
    r.prune();
    expect((await resolveGitRef(home.ctx(), r.url, 'main')).rev).toBe(rewritten);

    const into = await newInto();
    const e = await rejection(fetchGitCommit(home.ctx(), { url: r.url, rev: locked, requested_ref: 'main' }, into));
    expect(e.code).toBe('E_NOT_FOUND');
    expect(e.message).toContain(locked);
    expect(e.hint).toMatch(/force-pushed/);
    expectNothingLeft(into);
  });

  test('a v0 server that still stores the commit but no longer advertises it: rejected too', async () => {
    const r = makeRepo(join(home.root, 'force-v0'), { files: fixtureFiles() });
    const locked = r.rev('main');
    r.orphan('rewrite');
    r.forcePush('main', r.commit({ 'README.md': 'rewritten\n' }, 'rewrite'));
    const into = await newInto();
    const ctx = ctxWithHome('force-v0', '[protocol]\n\tversion = 0\n');
    expect((await rejection(fetchGitCommit(ctx, { url: r.url, rev: locked }, into))).code).toBe('E_NOT_FOUND');
    expectNothingLeft(into);
  });
});

describe('C23: nothing from the repository executes; nothing beyond the one commit is fetched', () => {
  test('.gitmodules payloads (ext:: and a real file:// submodule) are never fetched, even with submodule.recurse=true', async () => {
    const marker = join(home.root, 'submodule-ran');
    const sub = makeRepo(join(home.root, 'sub'), { name: 'sub', files: { 'SECRET.txt': 'from the submodule\n' } });
    const r = makeRepo(join(home.root, 'with-submodules'), { files: fixtureFiles() });
    const subRev = sub.rev('main');
    r.commit(
      {
        '.gitmodules': `[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = ${sub.url}\n[submodule "evil"]\n\tpath = evil\n\turl = ext::sh -c touch% ${marker}\n`,
        'vendor/lib': { gitlink: subRev },
        evil: { gitlink: subRev },
      },
      'add submodules',
    );
    expect(git(['ls-tree', 'HEAD', 'evil'], r.bare)).toMatch(/^160000 commit/);
    const gitconfig =
      '[submodule]\n\trecurse = true\n\tactive = .\n[protocol "ext"]\n\tallow = always\n[protocol "file"]\n\tallow = always\n[fetch]\n\trecurseSubmodules = true\n';

    const into = await newInto();
    const ctx = ctxWithHome('submodules', gitconfig);
    const res = await fetchGit(ctx, spec(r.url), into);
    // a gitlink checks out as an empty directory: nothing of the submodule arrives
    expect(readdirSync(join(into, 'vendor/lib'))).toEqual([]);
    expect(readdirSync(join(into, 'evil'))).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    expect(res.notes?.join('\n')).toMatch(/vendor\/lib.*not fetched/);
    expect(ctx.log.lines.some((l) => l.level === 'warn' && /evil/.test(l.message))).toBe(true);

    // control: plain git with the same user config does run the payload
    try {
      git(['clone', '--quiet', '--recurse-submodules', r.bare, join(home.root, 'control-clone')], home.root, {
        HOME: join(home.root, 'home-submodules'),
        GIT_CONFIG_GLOBAL: join(home.root, 'home-submodules/.gitconfig'),
      });
    } catch {
      // the ext:: "submodule" is not a git server; the clone fails after running it
    }
    expect(existsSync(marker)).toBe(true);
  });

  test('LFS pointers stay pointers: no smudge filter runs, even one the user configured', async () => {
    const marker = join(home.root, 'lfs-ran');
    const smudge = script(join(home.root, 'bin/fake-lfs-smudge'), `touch '${marker}'\necho SMUDGED`);
    const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${'ab'.repeat(32)}\nsize 12345\n`;
    const r = makeRepo(join(home.root, 'with-lfs'), {
      files: { ...fixtureFiles(), '.gitattributes': '*.bin filter=lfs diff=lfs merge=lfs -text\n', 'model.bin': pointer },
    });
    const gitconfig = `[filter "lfs"]\n\tsmudge = ${smudge}\n\trequired = true\n`;
    const into = await newInto();
    await fetchGit(ctxWithHome('lfs', gitconfig), spec(r.url), into);
    expect(readFileSync(join(into, 'model.bin'), 'utf8')).toBe(pointer);
    expect(existsSync(marker)).toBe(false);

    // control: the filter is live for plain git
    git(['clone', '--quiet', r.bare, join(home.root, 'lfs-control')], home.root, { GIT_CONFIG_GLOBAL: join(home.root, 'home-lfs/.gitconfig') });
    expect(existsSync(marker)).toBe(true);
  });

  test("hooks never run: not the repository's, not core.hooksPath, not init.templateDir", async () => {
    const marker = join(home.root, 'hook-ran');
    const hookBody = `echo "$0" >> '${marker}'`;
    script(join(home.root, 'user-hooks/post-checkout'), hookBody);
    script(join(home.root, 'template/hooks/post-checkout'), hookBody);
    script(join(home.root, 'template/hooks/post-merge'), hookBody);
    const r = makeRepo(join(home.root, 'with-hooks'), {
      files: {
        ...fixtureFiles(),
        '.githooks/post-checkout': { content: `#!/bin/sh\n${hookBody}\n`, mode: 0o755 },
        'hooks/post-checkout': { content: `#!/bin/sh\n${hookBody}\n`, mode: 0o755 },
        '.husky/post-checkout': { content: `#!/bin/sh\n${hookBody}\n`, mode: 0o755 },
      },
    });
    const gitconfig = `[core]\n\thooksPath = ${join(home.root, 'user-hooks')}\n[init]\n\ttemplateDir = ${join(home.root, 'template')}\n`;
    const into = await newInto();
    await fetchGit(ctxWithHome('hooks', gitconfig), spec(r.url), into);
    await fetchGitCommit(ctxWithHome('hooks', gitconfig), { url: r.url, rev: r.rev('main') }, await newInto());
    expect(existsSync(marker)).toBe(false);

    // control: plain git with the same config runs the user's hook
    git(['clone', '--quiet', r.bare, join(home.root, 'hooks-control')], home.root, { GIT_CONFIG_GLOBAL: join(home.root, 'home-hooks/.gitconfig') });
    expect(existsSync(marker)).toBe(true);
  });

  test('only the one commit is fetched, shallow', async () => {
    const r = makeRepo(join(home.root, 'history'), { files: fixtureFiles() });
    r.commit({ 'a.txt': 'a' });
    const mid = r.commit({ 'b.txt': 'b' });
    r.tag('mid');
    r.commit({ 'c.txt': 'c' });
    const ctx = home.ctx();
    const res = await fetchGit(ctx, spec(r.url, 'mid'), await newInto());
    expect(res.source.rev).toBe(mid);
    expect(ctx.log.lines.filter((l) => /fetched \d+ commit/.test(l.message)).map((l) => l.message)).toEqual([expect.stringMatching(/fetched 1 commit\(s\)/)]);
  });

  test('stray GIT_* variables in the environment are ignored', async () => {
    const into = await newInto();
    const res = await fetchGit(
      home.ctx({
        GIT_DIR: join(home.root, 'nowhere'),
        GIT_CONFIG_PARAMETERS: `'url.file:///nonexistent/.insteadOf'='file://'`,
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'url.file:///nonexistent/.insteadOf',
        GIT_CONFIG_VALUE_0: 'file://',
        GIT_SSH_COMMAND: 'touch /tmp/yep-pwned',
      }),
      spec(repo.url, 'v1'),
      into,
    );
    expect(res.source.rev).toBe(repo.rev('v1'));
  });
});

describe('C24: symlinks are refused before any file is read', () => {
  test.each([
    ['plugin.json -> ~/.ssh/id_ed25519', 'plugin.json', 'SSH', /manifest itself/],
    ['bin -> /usr/bin', 'bin', '/usr/bin', /"bin" is a symbolic link/],
    ['an in-tree link (policy: no links at all)', 'docs/readme', '../README.md', /"docs\/readme" is a symbolic link/],
  ])('%s', async (_label, path, target, message) => {
    const sshKey = join(home.root, 'home/.ssh/id_ed25519');
    mkdirSync(dirname(sshKey), { recursive: true });
    writeFileSync(sshKey, 'PRIVATE KEY\n');
    const files = fixtureFiles();
    if (path === 'plugin.json') delete files['plugin.json'];
    if (path === 'bin') delete files['bin/gitext-server'];
    const r = makeRepo(join(home.root, `link-${path.replace(/\W/g, '_')}`), {
      files: { ...files, [path]: { symlink: target === 'SSH' ? sshKey : target } },
    });
    const into = await newInto();
    const e = await rejection(fetchGit(home.ctx(), spec(r.url), into));
    expect(e.code).toBe('E_UNSAFE_PACKAGE');
    expect(e.message).toMatch(message);
    expectNothingLeft(into);
  });
});

describe('C25: a private repository without credentials fails fast, never prompts', () => {
  let server: GitHttpServer;
  let askpassMarker: string;
  let askpass: string;

  beforeAll(async () => {
    mkdirSync(join(home.root, 'served/private'), { recursive: true });
    cpSync(repo.bare, join(home.root, 'served/private/gitext.git'), { recursive: true });
    server = await startGitHttpServer({ root: join(home.root, 'served'), privatePrefix: '/private/', credentials: { user: 'user', password: 'secret' } });
    askpassMarker = join(home.root, 'askpass-ran');
    askpass = script(join(home.root, 'bin/askpass'), `touch '${askpassMarker}'\necho secret`);
  });
  afterAll(async () => server?.close());

  test('https-style auth over HTTP: E_GIT with a credentials hint, quickly, no askpass', async () => {
    const ctx = home.ctx({ GIT_ASKPASS: askpass, SSH_ASKPASS: askpass, DISPLAY: ':0', SSH_ASKPASS_REQUIRE: 'force' });
    const into = await newInto();
    const started = Date.now();
    const e = await rejection(fetchGit(ctx, spec(server.url('private/gitext.git')), into));
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(e.code).toBe('E_GIT');
    expect(e.message).toMatch(/credentials/);
    expect(e.hint).toMatch(/credential helper/);
    expect(e.hint).toMatch(/ssh-agent/);
    expect(e.hint).toMatch(/token in the URL is not recommended/);
    expect(existsSync(askpassMarker)).toBe(false);
    expectNothingLeft(into);
    expect(server.requests.some((r) => r.startsWith('GET /private/'))).toBe(true);
  });

  test('with a credential helper configured, the same repository installs', async () => {
    const store = join(home.root, 'git-credentials');
    writeFileSync(store, `${server.base.replace('http://', 'http://user:secret@').replace(/\/$/, '')}\n`);
    const ctx = ctxWithHome('creds', `[credential]\n\thelper = store --file=${store}\n`);
    const res = await fetchGit(ctx, spec(server.url('private/gitext.git'), 'v1'), await newInto());
    expect(res.source.rev).toBe(repo.rev('v1'));
    expect(res.source.url).not.toContain('secret');
  });

  test('ssh: BatchMode, no askpass; a key refusal gives the ssh-agent hint', async () => {
    const sshLog = join(home.root, 'ssh-argv.log');
    const sshBin = join(home.root, 'fake-ssh-bin');
    script(join(sshBin, 'ssh'), `echo "$* ASKPASS=[$SSH_ASKPASS]" >> '${sshLog}'\necho 'git@example.invalid: Permission denied (publickey).' >&2\nexit 255`);
    const ctx = home.ctx({ PATH: `${sshBin}:${process.env.PATH}`, SSH_ASKPASS: askpass, GIT_SSH_COMMAND: `touch ${askpassMarker}` });
    const into = await newInto();
    const e = await rejection(fetchGit(ctx, spec('git@example.invalid:acme/private.git', 'v1'), into));
    expect(e.code).toBe('E_GIT');
    expect(e.hint).toMatch(/ssh-agent/);
    const argv = readFileSync(sshLog, 'utf8');
    expect(argv).toMatch(/-o BatchMode=yes/);
    expect(argv).toContain('ASKPASS=[]');
    expect(argv).toContain('git@example.invalid');
    expect(existsSync(askpassMarker)).toBe(false);
    expectNothingLeft(into);
  });
});

describe('caps and timeouts', () => {
  const small = (over: Partial<GitLimits>): Partial<GitLimits> => over;

  test('fetched objects above the cap: E_UNSAFE_PACKAGE, nothing left', async () => {
    // Incompressible, four times the cap: well over it, and every byte more is zlib work for git's add, push and fetch.
    const r = makeRepo(join(home.root, 'big-pack'), { files: { ...fixtureFiles(), 'blob.bin': randomBytes(1024 * 1024) } });
    const into = await newInto();
    const e = await rejection(fetchGit(home.ctx(), spec(r.url), into, small({ maxFetchBytes: 256 * 1024 })));
    expect(e.code).toBe('E_UNSAFE_PACKAGE');
    expect(e.message).toMatch(/exceed 262144 bytes/);
    expectNothingLeft(into);
  });

  test('a small pack that would expand into a huge tree: refused before checkout', async () => {
    // Twice the cap once checked out, a few kilobytes packed (git still deflates every byte of it on add and push).
    const r = makeRepo(join(home.root, 'zip-bomb'), { files: { ...fixtureFiles(), 'zeros.bin': Buffer.alloc(2 * 1024 * 1024) } });
    const into = await newInto();
    const ctx = home.ctx();
    const e = await rejection(fetchGit(ctx, spec(r.url), into, small({ maxTreeBytes: 1024 * 1024 })));
    expect(e.code).toBe('E_UNSAFE_PACKAGE');
    expect(e.message).toMatch(/more than 1048576/);
    // Judged from the commit's tree listing: git never wrote a byte of it out (the scan after a
    // checkout would refuse it too, but only once the bytes were on disk).
    const gitRan = ctx.log.lines.filter((l) => l.message.startsWith('git ')).map((l) => l.message.split(' ')[1]);
    expect(gitRan).toContain('ls-tree');
    expect(gitRan).not.toContain('checkout');
    expectNothingLeft(into);
  });

  test('too many files', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 30; i++) many[`f/${i}.txt`] = String(i);
    const r = makeRepo(join(home.root, 'many'), { files: { ...fixtureFiles(), ...many } });
    const e = await rejection(fetchGit(home.ctx(), spec(r.url), await newInto(), small({ maxFiles: 10 })));
    expect(e.code).toBe('E_UNSAFE_PACKAGE');
  });

  test('a server that accepts and never answers: overall deadline', async () => {
    const silent = await startSilentServer();
    try {
      const into = await newInto();
      const started = Date.now();
      const e = await rejection(fetchGit(home.ctx(), spec(`${silent.base}x.git`), into, small({ timeoutMs: 1500 })));
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(e.code).toBe('E_NETWORK');
      expect(e.message).toMatch(/timed out/);
      expectNothingLeft(into);
    } finally {
      await silent.close();
    }
  });

  test('a server that stalls: idle timeout', async () => {
    const silent = await startSilentServer();
    try {
      const started = Date.now();
      const e = await rejection(resolveGitRef(home.ctx(), `${silent.base}x.git`, 'main', small({ idleTimeoutMs: 1000 })));
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(e.code).toBe('E_NETWORK');
    } finally {
      await silent.close();
    }
  });

  test('Ctrl-C stops git promptly: E_INTERRUPTED', async () => {
    const silent = await startSilentServer();
    try {
      const ac = new AbortController();
      const ctx = createContext({ env: home.env, log: memoryLogger(), signal: ac.signal });
      setTimeout(() => ac.abort(), 300);
      const started = Date.now();
      const e = await rejection(fetchGit(ctx, spec(`${silent.base}x.git`), await newInto()));
      expect(e.code).toBe('E_INTERRUPTED');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await silent.close();
    }
  });
});
