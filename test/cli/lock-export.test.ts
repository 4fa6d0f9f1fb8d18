/**
 * `lock export FILE` replaces only its own earlier export: a lock yep-ext did not write
 * (yolop's four-field lock, one written by hand) is refused unless --force, a file that
 * is no lock always; `lock export -` prints the lock on stdout and writes no file.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

let home: TempHome;
let out: string;
beforeEach(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', 'x'), { name: 'x' });
  expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
  out = join(home.root, 'yolop-extensions.lock');
});
afterEach(() => home.cleanup());

const exportTo = (path: string, ...extra: string[]) => runCli(['lock', 'export', path, '--json', ...extra], { env: home.env });
const HOST_LOCK = `[[extensions]]\nname = "mine"\ncontent_hash = "sha256:${'a'.repeat(64)}"\n\n[extensions.source]\ntype = "path"\npath = "/srv/mine"\n`;

describe('lock export FILE', () => {
  it('replaces its own earlier export', async () => {
    expect((await exportTo(out)).code).toBe(0);
    writeFileSync(out, `${readFileSync(out, 'utf8')}\n`);
    const r = await exportTo(out);
    expect(r.code, r.stderr).toBe(0);
    expect((parse(readFileSync(out, 'utf8')) as { extensions: { name: string }[] }).extensions.map((e) => e.name)).toEqual(['x']);
  });

  it("a lock it did not write (yolop's, or by hand) is refused, byte-identical (exit 7); --force replaces it", async () => {
    writeFileSync(out, HOST_LOCK);
    const r = await exportTo(out);
    expect(r.code, r.stderr).toBe(7);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_CONFLICT', details: { file: out } });
    expect(jsonOf(r).error.hint).toContain('--force');
    expect(readFileSync(out, 'utf8')).toBe(HOST_LOCK);
    const forced = await exportTo(out, '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect((parse(readFileSync(out, 'utf8')) as { extensions: { name: string }[] }).extensions.map((e) => e.name)).toEqual(['x']);
  });

  it('a file that is no lock is refused even with --force', async () => {
    writeFileSync(out, '[package]\nname = "mine"\n');
    const r = await exportTo(out, '--force');
    expect(r.code, r.stderr).toBe(7);
    expect(readFileSync(out, 'utf8')).toBe('[package]\nname = "mine"\n');
  });
});

describe('lock export -', () => {
  it('prints the lock on stdout (what a file export holds) and writes no file', async () => {
    const before = readdirSync(home.root).sort();
    const r = await runCli(['lock', 'export', '-'], { env: home.env, cwd: home.root });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(home.root).sort()).toEqual(before);
    expect(existsSync(join(home.root, '-'))).toBe(false);
    expect((await exportTo(out)).code).toBe(0);
    expect(r.stdout).toBe(readFileSync(out, 'utf8'));
  });

  it('with --json: exit 2, writing nothing, and the hint says which of the two to drop', async () => {
    const before = readdirSync(home.root).sort();
    const r = await runCli(['lock', 'export', '-', '--json'], { env: home.env, cwd: home.root });
    expect(r.code).toBe(2);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_USAGE', hint: expect.stringMatching(/^Drop --json to print the lock, or give a path/) });
    expect(readdirSync(home.root).sort()).toEqual(before);
  });
});

describe('a credential in a source URL of the store lock (a lock the host wrote)', () => {
  const TOKEN = 'ghp_SECRETTOKENexport42';
  it.each([
    ['a git URL with a token as user', `https://${TOKEN}@github.com/acme/gx.git`],
    ['a git URL with user:password', `https://me:${TOKEN}@github.com/acme/gx.git`],
    ['an ssh URL with a password', `ssh://git:${TOKEN}@github.com/acme/gx.git`],
    ['a git+https URL with a token as user', `git+https://${TOKEN}@github.com/acme/gx.git`],
    ["git's scp-like form with a password", `deploy:${TOKEN}@github.com:acme/gx.git`],
  ])('%s: not exported to a file or to stdout, and not shown', async (_what, url) => {
    const lockFile = join(home.configDir, 'extensions', 'extensions.lock');
    const hostEntry = `\n[[extensions]]\nname = "gx"\nversion = "0.1.0"\ncontent_hash = "sha256:${'b'.repeat(64)}"\n\n[extensions.source]\ntype = "git"\nurl = "${url}"\nrev = "${'c'.repeat(40)}"\n`;
    writeFileSync(lockFile, readFileSync(lockFile, 'utf8') + hostEntry);
    const r = await exportTo(out);
    expect(r.code, r.stdout).toBe(7);
    expect(jsonOf(r).error).toMatchObject({ code: 'E_STATE', details: { names: ['gx'] } });
    expect(existsSync(out)).toBe(false);
    const printed = await runCli(['lock', 'export', '-'], { env: home.env });
    expect(printed.code).toBe(7);
    for (const t of [r.stdout, r.stderr, printed.stdout, printed.stderr]) expect(t).not.toContain(TOKEN);
  });
});
