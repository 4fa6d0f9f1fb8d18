/**
 * `lock export FILE` replaces only its own earlier export: a lock yep-ext did not write
 * (yolop's four-field lock, one written by hand) is refused unless --force, a file that
 * is no lock always; `lock export -` prints the lock on stdout and writes no file.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, type TempHome } from '../helpers/home.js';
import { runInProcess } from '../helpers/in-process.js';
import { writePackage } from '../helpers/packages.js';

let home: TempHome;
let out: string;
beforeEach(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', 'x'), { name: 'x' });
  expect((await runInProcess(['install', pkg], { env: home.env })).code).toBe(0);
  out = join(home.root, 'yolop-extensions.lock');
});
afterEach(() => home.cleanup());

const exportTo = (path: string, ...extra: string[]) => runInProcess(['lock', 'export', path, '--json', ...extra], { env: home.env });
const HOST_LOCK = '[[extensions]]\nname = "mine"\ncontent_hash = "sha256:' + 'a'.repeat(64) + '"\n\n[extensions.source]\ntype = "path"\npath = "/srv/mine"\n';

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
    const r = await runInProcess(['lock', 'export', '-'], { env: home.env, cwd: home.root });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(home.root).sort()).toEqual(before);
    expect(existsSync(join(home.root, '-'))).toBe(false);
    expect((await exportTo(out)).code).toBe(0);
    expect(r.stdout).toBe(readFileSync(out, 'utf8'));
  });
});
