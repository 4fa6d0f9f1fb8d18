/**
 * `yep-ext install <git>` end to end (built CLI, real child processes): local bare
 * repositories over file://, the same over loopback smart HTTP, the lock record,
 * reinstall reproducibility, and hardening C20-C25 with the state left untouched.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { mtimesUnder } from '../helpers/file-walk.js';
import { fixtureFiles, makeRepo, manifestFor, type TestRepo } from '../helpers/git-repo.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

let home: TempHome;
let repo: TestRepo;
let server: GitHttpServer;
const revs = {} as Record<'v1' | 'main' | 'feature', string>;

const store = () => join(home.configDir, 'extensions');
const lockPath = () => join(store(), 'extensions.lock');

interface LockDoc {
  extensions?: Array<{ name: string; content_hash: string; version?: string; source: Record<string, string> }>;
}
const readLock = (): LockDoc => (existsSync(lockPath()) ? (parse(readFileSync(lockPath(), 'utf8')) as LockDoc) : {});

function snapshot(): Record<string, string | null> {
  const read = (p: string) => (existsSync(p) ? readFileSync(p, 'latin1') : null);
  return {
    lock: read(lockPath()),
    settings: read(join(home.configDir, 'settings.toml')),
    secrets: read(join(home.configDir, 'connections.toml')),
    store: existsSync(store())
      ? readdirSync(store())
          .filter((e) => !e.startsWith('.'))
          .sort()
          .join(',')
      : null,
  };
}

/** Staging holds nothing after a run, failed or not. */
function stagingLeft(): string[] {
  const dir = join(store(), '.yep-staging');
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function install(args: string[], env: Record<string, string> = {}) {
  return runCli(['install', ...args, '--json'], { env: { ...home.env, ...env } });
}

/**
 * Clean-up between installs (the tests share one store): the core call `yep-ext remove`
 * makes (src/commands/remove.ts), in this process rather than a CLI run of its own.
 */
async function remove(name: string) {
  const { removeExtension } = await import('../../src/core/operations/remove.js');
  expect((await removeExtension(home.ctx(), name)).name).toBe(name);
  expect(readLock().extensions?.map((e) => e.name) ?? []).not.toContain(name);
}

function script(path: string, body: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

beforeAll(async () => {
  home = makeTempHome('yep-cli-git-');
  repo = makeRepo(join(home.root, 'repos'));
  revs.v1 = repo.commit(fixtureFiles('gitext', '1.0.0'), 'v1');
  repo.tag('v1.0.0');
  revs.main = repo.commit({ 'plugin.json': manifestFor('gitext', '1.1.0') }, 'v1.1');
  repo.switchTo('feature/x');
  revs.feature = repo.commit({ 'plugin.json': manifestFor('gitext', '2.0.0') }, 'feature');
  repo.switchTo('main');
  server = await startGitHttpServer({ root: join(home.root, 'repos'), privatePrefix: '/private/' });
  cpSync(repo.bare, join(home.root, 'repos/private/gitext.git'), { recursive: true });
});

afterAll(async () => {
  await server?.close();
  home?.cleanup();
});

describe('install from git', () => {
  it.each([
    ['the default branch', '', () => revs.main, undefined, '1.1.0', undefined],
    ['a tag (@)', '@v1.0.0', () => revs.v1, 'v1.0.0', '1.0.0', 'tag'],
    ['a branch (@)', '@main', () => revs.main, 'main', '1.1.0', 'branch'],
    ['a branch with "/" (#)', '#feature/x', () => revs.feature, 'feature/x', '2.0.0', 'branch'],
    ['a full commit (@)', '@SHA', () => revs.v1, 'SHA', '1.0.0', undefined],
  ])('%s: lock rev is the resolved commit, requested_ref what was asked, ref_kind what it named', async (_label, suffix, rev, requested, version, kind) => {
    const ref = suffix.replace('SHA', revs.v1);
    const r = await install([`${repo.url}${ref}`]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const out = jsonOf(r).installed[0];
    expect(out).toMatchObject({ name: 'gitext', version, status: 'installed' });

    const entry = readLock().extensions?.[0];
    const expectedRef = requested === 'SHA' ? revs.v1 : requested;
    expect(entry?.source).toEqual({
      type: 'git',
      url: repo.url,
      rev: rev(),
      ...(expectedRef ? { requested_ref: expectedRef } : {}),
      ...(kind ? { ref_kind: kind } : {}),
    });
    const pkg = join(store(), 'gitext');
    // A tree yep-ext owns: the entry is a relative link to its immutable version directory (a copy, not the checkout).
    expect(readlinkSync(pkg)).toBe(`.yep-packages/gitext.${entry?.content_hash.slice(7, 23)}`);
    expect(lstatSync(join(store(), '.yep-packages', `gitext.${entry?.content_hash.slice(7, 23)}`)).isDirectory()).toBe(true);
    expect(existsSync(join(pkg, '.git'))).toBe(false);
    expect(statSync(join(pkg, 'bin/gitext-server')).mode & 0o111).not.toBe(0);
    expect(entry?.content_hash).toBe(await contentHash(pkg));
    expect(out.content_hash).toBe(entry?.content_hash);
    expect(stagingLeft()).toEqual([]);
    await remove('gitext');
  });

  it('over loopback smart HTTP', async () => {
    const r = await install([`${server.url('gitext.git')}@v1.0.0`]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readLock().extensions?.[0]?.source).toEqual({ type: 'git', url: server.url('gitext.git'), rev: revs.v1, requested_ref: 'v1.0.0', ref_kind: 'tag' });
    expect(server.requests.some((q) => q.startsWith('POST /gitext.git/git-upload-pack'))).toBe(true);
    await remove('gitext');
  });

  it("reinstalling the lock's commit reproduces the content_hash; the same commit again is unchanged", async () => {
    expect((await install([`${repo.url}#feature/x`])).code).toBe(0);
    const first = readLock().extensions![0]!;
    const again = await install([`${repo.url}#feature/x`]);
    expect(jsonOf(again).installed[0].status).toBe('unchanged');
    // Decided before any download: the ref resolved (ls-remote), nothing fetched or cloned, no store file rewritten.
    const times = mtimesUnder(store(), ['.yep-cache']);
    const quietly = await runCli(['install', `${repo.url}#feature/x`, '--verbose'], { env: home.env });
    expect(quietly.code, quietly.stderr).toBe(0);
    expect(quietly.stdout).toContain('Already installed: gitext');
    expect(quietly.stderr).toMatch(/Resolving feature\/x/);
    expect(quietly.stderr).not.toMatch(/Fetching |Cloning /);
    expect(mtimesUnder(store(), ['.yep-cache'])).toEqual(times);

    await remove('gitext');
    const byCommit = await install([`${repo.url}@${first.source.rev}`]);
    expect(byCommit.code, byCommit.stderr).toBe(0);
    const second = readLock().extensions![0]!;
    expect(second.source.rev).toBe(first.source.rev);
    expect(second.content_hash).toBe(first.content_hash);
    // the same tree over another transport hashes the same too
    await remove('gitext');
    expect((await install([`${server.url('gitext.git')}@${first.source.rev}`])).code).toBe(0);
    expect(readLock().extensions![0]!.content_hash).toBe(first.content_hash);
    await remove('gitext');
  });

  it('the same commit through another ref is a re-pin: the lock records the new ref, which `update` then follows', async () => {
    // main and the default branch resolve to one commit; v1.0.0 by tag and by full commit too.
    expect((await install([`${repo.url}@main`])).code).toBe(0);
    const pinned = readLock().extensions![0]!;
    expect(pinned.source).toMatchObject({ rev: revs.main, requested_ref: 'main' });
    const viaDefault = await install([`${repo.url}`]);
    expect(viaDefault.code, viaDefault.stderr).toBe(0);
    const out = jsonOf(viaDefault).installed[0];
    expect(out.status).toBe('repinned');
    expect(out.notes).toEqual(['`yep-ext update` now follows the newest (it followed `main`).']);
    const entry = readLock().extensions![0]!;
    expect(entry.source).toEqual({ type: 'git', url: repo.url, rev: revs.main });
    expect(entry.content_hash).toBe(pinned.content_hash);
    // Now it is the same request: unchanged, and the lock keeps it.
    expect(jsonOf(await install([`${repo.url}`])).installed[0].status).toBe('unchanged');
    await remove('gitext');

    expect((await install([`${repo.url}@v1.0.0`])).code).toBe(0);
    const human = await runCli(['install', `${repo.url}@${revs.v1}`], { env: home.env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('Re-pinned gitext 1.0.0');
    expect(human.stdout).toContain(`now follows \`${revs.v1}\` (it followed \`v1.0.0\`)`);
    expect(readLock().extensions![0]!.source).toEqual({ type: 'git', url: repo.url, rev: revs.v1, requested_ref: revs.v1 });
    await remove('gitext');
  });

  it('a different content hash recorded for the same commit is an integrity error; the lock is untouched', async () => {
    expect((await install([`${repo.url}@v1.0.0`])).code).toBe(0);
    const text = readFileSync(lockPath(), 'utf8');
    const recorded = readLock().extensions![0]!.content_hash;
    writeFileSync(lockPath(), text.replace(recorded, `sha256:${'0'.repeat(64)}`));
    const before = snapshot();
    const r = await install([`${repo.url}@v1.0.0`]);
    expect(r.code).toBe(5);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_INTEGRITY', message: expect.stringContaining(revs.v1) });
    expect(snapshot()).toEqual(before);
    writeFileSync(lockPath(), text);
    await remove('gitext');
  });
});

describe('hostile git sources leave store, lock, settings and secrets unchanged', () => {
  let gitLog: string;
  let fakebin: string;

  beforeAll(async () => {
    const keep = makeRepo(join(home.root, 'keep-repo'), { name: 'keep', files: fixtureFiles('keep') });
    expect((await install([keep.url])).code).toBe(0);
    writeFileSync(join(home.configDir, 'settings.toml'), '# mine\n');
    writeFileSync(join(home.configDir, 'connections.toml'), '["ext:keep"]\ntoken = "x"\n', { mode: 0o600 });
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    gitLog = join(home.root, 'cli-git-runs.log');
    fakebin = join(home.root, 'cli-fakebin');
    script(join(fakebin, 'git'), `echo "$*" >> '${gitLog}'\nexec '${realGit}' "$@"`);
  });

  it.each([
    ['C20 --upload-pack', 'git+--upload-pack=touch%20/tmp/yep-pwned'],
    ['C20 ext::', 'git+ext::sh -c touch% /tmp/yep-pwned'],
    ['C20 fd::', 'git+fd::3'],
    ['C20 ssh://-oProxyCommand', 'ssh://-oProxyCommand=touch%20/tmp/yep-pwned/x'],
    ['C20 git@-oProxyCommand', 'git@-oProxyCommand=x:y'],
    ['C20 plain http to a remote host', 'http://example.com/acme/ext.git'],
    ['C20 a token in the URL', 'https://me:ghp_token@example.com/acme/ext.git'],
    ['C21 ref with a leading -', 'https://example.com/acme/ext.git@--output=/tmp/yep-pwned'],
    ['C21 ref with ..', 'https://example.com/acme/ext.git#a..b'],
    ['C21 ref with @{', 'https://example.com/acme/ext.git#main@{1}'],
    ['C21 ref with a space', 'https://example.com/acme/ext.git#a b'],
    ['C21 ref with a control character', 'https://example.com/acme/ext.git#a\u001bb'],
  ])('%s: exit 2 before any git process', async (_label, spec) => {
    writeFileSync(gitLog, '');
    const before = snapshot();
    const r = await install([spec], { PATH: `${fakebin}:${process.env.PATH}` });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(jsonOf(r).error.code).toBe('E_USAGE');
    expect(readFileSync(gitLog, 'utf8')).toBe('');
    expect(snapshot()).toEqual(before);
    expect(stagingLeft()).toEqual([]);
    expect(existsSync('/tmp/yep-pwned')).toBe(false);
  });

  it('the git wrapper does log real runs (control for the test above)', async () => {
    writeFileSync(gitLog, '');
    const r = await install([`${repo.url}@v1.0.0`], { PATH: `${fakebin}:${process.env.PATH}` });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readFileSync(gitLog, 'utf8')).toMatch(/ ls-remote /);
    await remove('gitext');
  });

  it('C22: the locked commit force-pushed away: reinstalling it fails, the lock is unchanged', async () => {
    const r = makeRepo(join(home.root, 'forced'), { name: 'forced', files: fixtureFiles('forced') });
    expect((await install([`${r.url}@main`])).code).toBe(0);
    const locked = readLock().extensions!.find((e) => e.name === 'forced')!.source.rev!;
    await remove('forced');
    r.orphan('rewrite');
    r.forcePush('main', r.commit(fixtureFiles('forced', '9.9.9'), 'rewritten'));
    r.prune();
    const before = snapshot();
    const again = await install([`${r.url}@${locked}`]);
    expect(again.code).toBe(3);
    expect(jsonOf(again).error).toMatchObject({ code: 'E_NOT_FOUND', hint: expect.stringMatching(/force-pushed/) });
    expect(snapshot()).toEqual(before);
    expect(stagingLeft()).toEqual([]);
  });

  it('C23: hooks and submodule payloads do not run, even when the user enables them', async () => {
    const marker = join(home.root, 'cli-payload-ran');
    const hook = `echo ran >> '${marker}'`;
    script(join(home.root, 'cli-hooks/post-checkout'), hook);
    const r = makeRepo(join(home.root, 'payload'), {
      name: 'payload',
      files: { ...fixtureFiles('payload'), 'hooks/post-checkout': { content: `#!/bin/sh\n${hook}\n`, mode: 0o755 } },
    });
    r.commit({ '.gitmodules': `[submodule "evil"]\n\tpath = evil\n\turl = ext::sh -c touch% ${marker}\n`, evil: { gitlink: r.rev('main') } }, 'payload');
    const userHome = join(home.root, 'cli-user-home');
    mkdirSync(userHome, { recursive: true });
    writeFileSync(
      join(userHome, '.gitconfig'),
      `[core]\n\thooksPath = ${join(home.root, 'cli-hooks')}\n[submodule]\n\trecurse = true\n\tactive = .\n[protocol "ext"]\n\tallow = always\n`,
    );
    const res = await install([r.url], { HOME: userHome });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(jsonOf(res).installed[0].notes.join('\n')).toMatch(/Submodule "evil" was not fetched/);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(join(store(), 'payload', 'evil'))).toEqual([]);
    await remove('payload');
  });

  it('C24: a symlinked plugin.json is refused; nothing is read or placed', async () => {
    const secret = join(home.root, 'home/.ssh/id_ed25519');
    mkdirSync(dirname(secret), { recursive: true });
    writeFileSync(secret, '{"name":"stolen"}');
    const files = fixtureFiles('linked');
    delete files['plugin.json'];
    const r = makeRepo(join(home.root, 'linked'), { name: 'linked', files: { ...files, 'plugin.json': { symlink: secret } } });
    const before = snapshot();
    const res = await install([r.url]);
    expect(res.code).toBe(4);
    expect(jsonOf(res).error).toMatchObject({ code: 'E_UNSAFE_PACKAGE', message: expect.stringMatching(/plugin\.json" is a symbolic link/) });
    expect(snapshot()).toEqual(before);
    expect(stagingLeft()).toEqual([]);
  });

  it('C25: a private repository without credentials fails fast with a credentials hint', async () => {
    const askpassMarker = join(home.root, 'cli-askpass-ran');
    const askpass = script(join(home.root, 'cli-askpass'), `touch '${askpassMarker}'\necho secret`);
    const before = snapshot();
    const started = Date.now();
    const res = await install([server.url('private/gitext.git')], { GIT_ASKPASS: askpass, SSH_ASKPASS: askpass });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(res.code).toBe(6);
    const err = jsonOf(res).error;
    expect(err.code).toBe('E_GIT');
    expect(err.hint).toMatch(/credential helper/);
    expect(err.hint).toMatch(/ssh-agent/);
    expect(existsSync(askpassMarker)).toBe(false);
    expect(snapshot()).toEqual(before);
    expect(stagingLeft()).toEqual([]);

    // without --json a human reads the same hint on stderr
    const human = await runCli(['install', server.url('private/gitext.git')], { env: home.env });
    expect(human.code).toBe(6);
    expect(human.stderr).toMatch(/credential helper/);
  });
});
