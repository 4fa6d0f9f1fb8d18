import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureFiles, makeRepo, manifestFor, type TestRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { keepHome, type KeptHome } from '../helpers/prepared-home.js';

let home: TempHome;
let repo: TestRepo;
/** The home (repository and installed store) as the install left it, put back before each test. */
let installed: KeptHome;
const lockText = () => readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8');
const withHook = () => {
  const m = JSON.parse(manifestFor('gitext', '1.1.0'));
  m.yolop.hooks = [{ event: 'pre_tool_use', tool_name_glob: 'bash' }];
  return `${JSON.stringify(m, null, 2)}\n`;
};

// The repository and the install every test starts from are made once: each test gets a copy
// of them at the same paths (the lock names the repository's path, the store links inside the
// home are relative and kept as they are), so what it commits, removes or updates is its own.
beforeAll(async () => {
  home = makeTempHome();
  repo = makeRepo(join(home.root, 'repos'), { files: fixtureFiles('gitext', '1.0.0') });
  const r = await runCli(['install', `${repo.url}@main`], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
  // Kept whole and put back at its own path (prepared-home.ts keepHome), re-signed so each
  // test's commands take the fast path a user's home takes.
  installed = keepHome(home);
});
beforeEach(() => installed.restore());
afterAll(() => {
  home.cleanup();
  installed.cleanup();
});

describe('update (git: the recorded ref moves to its new commit)', () => {
  it('no new commit: up to date, lock untouched', async () => {
    const before = lockText();
    const r = await runCli(['update', 'gitext'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('up to date');
    expect(lockText()).toBe(before);
  });

  it('no new commit but the store entry is gone: not "up to date" (exit 5), lock untouched', async () => {
    const before = lockText();
    const { rmSync } = await import('node:fs');
    rmSync(join(home.configDir, 'extensions', 'gitext'));
    const r = await runCli(['update', 'gitext', '--json'], { env: home.env });
    expect(r.code).toBe(5);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_INTEGRITY', hint: expect.stringContaining('yep-ext install --force gitext') });
    expect(lockText()).toBe(before);
  });

  it('a new commit with the same grant updates without asking and pins the new commit', async () => {
    const rev = repo.commit({ 'README.md': 'docs only\n' });
    const r = await runCli(['update', 'gitext', '--json'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).updates[0]).toMatchObject({ status: 'updated', consent_needed: false });
    expect(lockText()).toContain(`rev = "${rev}"`);
    expect(lockText()).toContain('requested_ref = "main"');
  });

  it('says which commits moved when the version stays the same', async () => {
    const before = repo.rev('main');
    const rev = repo.commit({ 'README.md': 'docs only\n' });
    const r = await runCli(['update', 'gitext'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    const move = `1.0.0 (${before.slice(0, 7)} → ${rev.slice(0, 7)})`;
    expect(r.stdout).toContain(`gitext ${move}`);
    expect(r.stdout).toContain(`Updated gitext: ${move}.`);
    expect(r.stdout).not.toMatch(/1\.0\.0 -> 1\.0\.0/);
    expect(lockText()).toContain(`rev = "${rev}"`);
  });

  it('a commit adding a hook is refused without a TTY, then accepted with --yes', async () => {
    const before = lockText();
    const rev = repo.commit({ 'plugin.json': withHook() });
    const refused = await runCli(['update', 'gitext'], { env: home.env });
    expect(refused.code).toBe(8);
    expect(refused.stdout).toContain('+ hook pre_tool_use');
    expect(lockText()).toBe(before);
    const ok = await runCli(['update', 'gitext', '--yes'], { env: home.env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockText()).toContain(`rev = "${rev}"`);
  });

  it('a repository that vanished fails the update and keeps the old version', async () => {
    const before = lockText();
    const { rmSync } = await import('node:fs');
    rmSync(repo.bare, { recursive: true, force: true });
    const r = await runCli(['update', 'gitext'], { env: home.env });
    expect(r.code).not.toBe(0);
    expect(lockText()).toBe(before);
    const list = jsonOf(await runCli(['list', '--json'], { env: home.env }));
    expect(list.extensions[0].problems).toEqual([]);
  });
});
