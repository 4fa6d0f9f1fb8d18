/**
 * The git source against real repositories: local bare repos over file:// and the
 * same repos over real smart HTTP on 127.0.0.1 (git http-backend behind node:http).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createContext } from '../../src/core/context.js';
import { contentHash } from '../../src/core/package/content-hash.js';
import { YepError } from '../../src/core/errors.js';
import { memoryLogger } from '../../src/core/log.js';
import { fetchGit, fetchGitCommit, resolveGitRef } from '../../src/core/sources/git.js';
import type { GitSpec } from '../../src/core/sources/spec.js';
import { makeStagingDir } from '../../src/core/store/staging.js';
import { fixtureFiles, makeRepo, manifestFor, type TestRepo } from '../helpers/git-repo.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';

let home: TempHome;
let repo: TestRepo;
let server: GitHttpServer;
const revs = {} as Record<'first' | 'tagV1' | 'light' | 'second' | 'feature' | 'main', string>;

function spec(url: string, ref?: string): GitSpec {
  return { kind: 'git', raw: url, url, ...(ref !== undefined ? { ref } : {}) };
}

/** A context whose git reads `gitconfig` as the user's ~/.gitconfig. */
function ctxWithGitconfig(label: string, gitconfig: string) {
  const h = join(home.root, `home-${label}`);
  mkdirSync(h, { recursive: true });
  writeFileSync(join(h, '.gitconfig'), gitconfig);
  return home.ctx({ HOME: h });
}

async function newInto(ctx = home.ctx()): Promise<string> {
  return join(await makeStagingDir(ctx, 'git-test'), 'pkg');
}

function version(dir: string): string {
  return JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')).version;
}

beforeAll(async () => {
  home = makeTempHome('yep-git-src-');
  repo = makeRepo(join(home.root, 'repos'));
  revs.first = repo.commit(fixtureFiles('gitext', '1.0.0'), 'v1.0.0');
  revs.tagV1 = repo.tag('v1.0.0');
  revs.light = repo.tag('light', { annotated: false });
  revs.second = repo.commit({ 'plugin.json': manifestFor('gitext', '1.1.0') }, 'v1.1.0');
  repo.switchTo('feature/x');
  revs.feature = repo.commit({ 'plugin.json': manifestFor('gitext', '2.0.0-beta') }, 'feature');
  repo.switchTo('main');
  revs.main = revs.second;
  server = await startGitHttpServer({ root: join(home.root, 'repos') });
});

afterAll(async () => {
  await server?.close();
  home?.cleanup();
});

describe('fetchGit over file://', () => {
  test('the default branch: resolved commit, no requested_ref, files and exec bits kept, no .git', async () => {
    const ctx = home.ctx();
    const into = await newInto(ctx);
    const r = await fetchGit(ctx, spec(repo.url), into);
    expect(r).toEqual({ dir: into, source: { type: 'git', url: repo.url, rev: revs.main } });
    expect(version(into)).toBe('1.1.0');
    expect(readdirSync(into).sort()).toEqual(['README.md', 'bin', 'plugin.json']);
    expect(statSync(join(into, 'bin/gitext-server')).mode & 0o111).not.toBe(0);
    expect(statSync(join(into, 'README.md')).mode & 0o111).toBe(0);
    // the temporary git dir lived beside the tree and is gone
    expect(readdirSync(join(into, '..'))).toEqual(['pkg']);
    expect(ctx.log.lines.some((l) => /fetched 1 commit\(s\)/.test(l.message))).toBe(true);
  });

  test('an annotated tag resolves to its commit, not the tag object', async () => {
    const into = await newInto();
    const r = await fetchGit(home.ctx(), spec(repo.url, 'v1.0.0'), into);
    expect(r.source).toEqual({ type: 'git', url: repo.url, rev: revs.first, requested_ref: 'v1.0.0', ref_kind: 'tag' });
    expect(revs.tagV1).toBe(revs.first);
    expect(version(into)).toBe('1.0.0');
  });

  test('a lightweight tag', async () => {
    const into = await newInto();
    const r = await fetchGit(home.ctx(), spec(repo.url, 'light'), into);
    expect(r.source.rev).toBe(revs.first);
  });

  test('a branch with "/" in its name (the #ref form)', async () => {
    const into = await newInto();
    const r = await fetchGit(home.ctx(), spec(repo.url, 'feature/x'), into);
    expect(r.source).toEqual({ type: 'git', url: repo.url, rev: revs.feature, requested_ref: 'feature/x', ref_kind: 'branch' });
    expect(version(into)).toBe('2.0.0-beta');
  });

  test('a full ref name', async () => {
    const r = await fetchGit(home.ctx(), spec(repo.url, 'refs/heads/main'), await newInto());
    expect(r.source.rev).toBe(revs.main);
  });

  test('a full commit that no ref points at (not a tip)', async () => {
    const into = await newInto();
    const r = await fetchGit(home.ctx(), spec(repo.url, revs.first.toUpperCase()), into);
    expect(r.source).toEqual({ type: 'git', url: repo.url, rev: revs.first, requested_ref: revs.first.toUpperCase() });
    expect(version(into)).toBe('1.0.0');
  });

  test('an unknown ref: E_NOT_FOUND and nothing left behind', async () => {
    const into = await newInto();
    await expect(fetchGit(home.ctx(), spec(repo.url, 'nope'), into)).rejects.toMatchObject({ code: 'E_NOT_FOUND', message: /no branch or tag named "nope"/ });
    await expect(fetchGit(home.ctx(), spec(repo.url, revs.first.slice(0, 10)), into)).rejects.toMatchObject({
      code: 'E_NOT_FOUND',
      hint: /full 40-character commit/,
    });
    expect(existsSync(into)).toBe(false);
    expect(readdirSync(join(into, '..'))).toEqual([]);
  });

  test('a commit that does not exist: E_NOT_FOUND', async () => {
    const into = await newInto();
    await expect(fetchGit(home.ctx(), spec(repo.url, 'f'.repeat(40)), into)).rejects.toMatchObject({ code: 'E_NOT_FOUND', message: /is not on/ });
    expect(readdirSync(join(into, '..'))).toEqual([]);
  });

  test('a repository that does not exist: E_NOT_FOUND', async () => {
    await expect(fetchGit(home.ctx(), spec(`${repo.url}-missing`), await newInto())).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });

  test('the same commit always gives the same content hash', async () => {
    const a = await newInto();
    const b = await newInto();
    await fetchGit(home.ctx(), spec(repo.url, 'v1.0.0'), a);
    await fetchGitCommit(home.ctx(), { url: repo.url, rev: revs.first }, b);
    expect(await contentHash(a)).toBe(await contentHash(b));
  });
});

describe('fetchGit over loopback smart HTTP (git http-backend)', () => {
  test('tag, branch with "/", commit and default branch', async () => {
    const url = server.url('gitext.git');
    const before = server.requests.length;
    const cases: [string | undefined, string][] = [
      [undefined, revs.main],
      ['v1.0.0', revs.first],
      ['feature/x', revs.feature],
      [revs.first, revs.first],
    ];
    for (const [ref, rev] of cases) {
      const into = await newInto();
      const r = await fetchGit(home.ctx(), spec(url, ref), into);
      expect(r.source.rev).toBe(rev);
      expect(existsSync(join(into, 'plugin.json'))).toBe(true);
      expect(statSync(join(into, 'bin/gitext-server')).mode & 0o111).not.toBe(0);
    }
    expect(server.requests.slice(before).some((r) => r.startsWith('POST /gitext.git/git-upload-pack'))).toBe(true);
  });

  test('protocol v0 over HTTP (stateless: reachable commits allowed)', async () => {
    const ctx = ctxWithGitconfig('v0http', '[protocol]\n\tversion = 0\n');
    const r = await fetchGit(ctx, spec(server.url('gitext.git'), revs.first), await newInto());
    expect(r.source.rev).toBe(revs.first);
  });
});

describe('a protocol v0 server that refuses unadvertised commits (file:// with protocol.version=0)', () => {
  test('falls back to the ref, then to a full fetch', async () => {
    // the tagged commit is no ref's tip: only the tag object and main are advertised
    const r = makeRepo(join(home.root, 'v0repo'));
    const tagged = r.commit(fixtureFiles('gitext', '1.0.0'));
    r.tag('v1.0.0');
    r.commit({ 'README.md': 'later\n' });
    const ctx = ctxWithGitconfig('v0', '[protocol]\n\tversion = 0\n');
    const byTag = await fetchGit(ctx, spec(r.url, 'v1.0.0'), await newInto());
    expect(byTag.source.rev).toBe(tagged);
    expect(ctx.log.lines.some((l) => /refused commit .* fetching refs\/tags\/v1\.0\.0/.test(l.message))).toBe(true);

    const ctx2 = ctxWithGitconfig('v0b', '[protocol]\n\tversion = 0\n');
    const pinned = await fetchGitCommit(ctx2, { url: r.url, rev: tagged }, await newInto());
    expect(pinned.source.rev).toBe(tagged);
    expect(ctx2.log.lines.some((l) => /fetching all branches and tags/.test(l.message))).toBe(true);
  });
});

describe('resolveGitRef', () => {
  test('reports where a ref points now, without fetching', async () => {
    expect(await resolveGitRef(home.ctx(), repo.url)).toEqual({ rev: revs.main, kind: 'default', refName: 'refs/heads/main' });
    expect(await resolveGitRef(home.ctx(), repo.url, 'v1.0.0')).toEqual({ rev: revs.first, kind: 'tag', refName: 'refs/tags/v1.0.0' });
    expect(await resolveGitRef(home.ctx(), server.url('gitext.git'), 'feature/x')).toEqual({
      rev: revs.feature,
      kind: 'branch',
      refName: 'refs/heads/feature/x',
    });
    // a commit never moves: no network needed
    expect(await resolveGitRef(home.ctx(), 'https://unreachable.invalid/x.git', revs.first)).toEqual({ rev: revs.first, kind: 'commit' });
  });

  test('sees a branch move', async () => {
    const r = makeRepo(join(home.root, 'moving'), { files: fixtureFiles() });
    const before = await resolveGitRef(home.ctx(), r.url, 'main');
    const after = r.commit({ 'README.md': 'moved\n' });
    expect((await resolveGitRef(home.ctx(), r.url, 'main')).rev).toBe(after);
    expect(before.rev).not.toBe(after);
  });
});

describe('fetchGitCommit', () => {
  test('fetches exactly the pinned commit and keeps requested_ref and ref_kind', async () => {
    const into = await newInto();
    const r = await fetchGitCommit(home.ctx(), { url: repo.url, rev: revs.first, requested_ref: 'v1.0.0', ref_kind: 'tag' }, into);
    expect(r.source).toEqual({ type: 'git', url: repo.url, rev: revs.first, requested_ref: 'v1.0.0', ref_kind: 'tag' });
    expect(version(into)).toBe('1.0.0');
  });

  test('a lock rev that is not a full commit is a state error', async () => {
    await expect(fetchGitCommit(home.ctx(), { url: repo.url, rev: 'main' }, await newInto())).rejects.toMatchObject({ code: 'E_STATE' });
  });

  test('errors are YepErrors', async () => {
    await expect(fetchGitCommit(home.ctx(), { url: `${repo.url}-nope`, rev: revs.first }, await newInto())).rejects.toBeInstanceOf(YepError);
  });
});

describe('the checkout is checked against the commit', () => {
  test('HEAD is read from the git dir, where the detached checkout wrote the commit: no git process asks for it', async () => {
    const ctx = home.ctx();
    await fetchGit(ctx, spec(repo.url, 'v1.0.0'), await newInto(ctx));
    const ran = ctx.log.lines.filter((l) => l.message.startsWith('git ')).map((l) => l.message);
    expect(ran.some((m) => m.startsWith('git checkout '))).toBe(true);
    expect(ran.filter((m) => m.startsWith('git rev-parse --verify HEAD'))).toEqual([]);
  });

  test('a HEAD that is not the commit after the checkout (here its tree) is judged by git and refused: E_INTEGRITY, nothing left', async () => {
    let gitDir = '';
    const twisted = createContext({
      env: home.env,
      log: memoryLogger(),
      git: (options) => {
        const g = simpleGit(options);
        const env = g.env.bind(g);
        const raw = g.raw.bind(g) as (args: string[]) => Promise<string>;
        return Object.assign(g, {
          env: (vars: Record<string, string>) => {
            gitDir = vars.GIT_DIR ?? gitDir;
            return env(vars);
          },
          raw: async (args: string[]) => {
            const out = await raw(args);
            if (args.includes('checkout')) writeFileSync(join(gitDir, 'HEAD'), `${(await raw(['rev-parse', `${revs.first}^{tree}`])).trim()}\n`);
            return out;
          },
        }) as typeof g;
      },
    });
    const into = await newInto();
    await expect(fetchGit(twisted, spec(repo.url, 'v1.0.0'), into)).rejects.toMatchObject({
      code: 'E_INTEGRITY',
      message: /After checkout HEAD is [0-9a-f]{40}, not the commit/,
    });
    expect(readdirSync(join(into, '..'))).toEqual([]);
  });
});
