import { cpSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { agentView } from '../helpers/agent-view.js';

let home: TempHome;
let pkg: string;
const lockText = () => readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8');
const setManifest = (yolop: Record<string, unknown>, version = '0.2.0') => {
  const m = JSON.parse(readFileSync(join(pkg, 'plugin.json'), 'utf8'));
  writeFileSync(join(pkg, 'plugin.json'), JSON.stringify({ ...m, version, yolop: { ...m.yolop, ...yolop } }));
};

beforeEach(async () => {
  home = makeTempHome();
  pkg = writePackage(join(home.root, 'src', 'echo'), { name: 'echo', yolop: { tools: [{ name: 'a' }, { name: 'b' }] } });
  expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
});
afterEach(() => home.cleanup());

describe('update (path source: re-read and re-pinned in place)', () => {
  it('hash-identical is a silent no-op', async () => {
    const before = lockText();
    const r = await runCli(['update', 'echo'], { env: home.env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('echo is up to date.');
    expect(lockText()).toBe(before);
  });

  it('--all with nothing installed says so (exit 0) and changes nothing', async () => {
    expect((await runCli(['remove', 'echo'], { env: home.env })).code).toBe(0);
    const before = lockText();
    const env = home.env;
    const r = await runCli(['update', '--all'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('Nothing to update: no extension is installed.');
    expect(jsonOf(await runCli(['update', '--all', '--json'], { env }))).toEqual({ updates: [] });
    expect(lockText()).toBe(before);
  });

  it('no names is every extension, as --all (npm and cargo update): a changed path package is re-pinned', async () => {
    setManifest({ tools: [{ name: 'a' }] });
    const before = lockText();
    const dry = await runCli(['update', '--dry-run', '--json'], { env: home.env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(jsonOf(dry).updates).toEqual(jsonOf(await runCli(['update', '--all', '--dry-run', '--json'], { env: home.env })).updates);
    expect(jsonOf(dry).updates[0]).toMatchObject({ name: 'echo', status: 'would-update' });
    expect(lockText()).toBe(before);
    const r = await runCli(['update'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Updated echo');
    expect(lockText()).not.toBe(before);
    expect(lockText()).toContain('version = "0.2.0"');
  });

  it('a widening change is refused without a TTY (exit 8, lock unchanged), then accepted by fingerprint', async () => {
    setManifest({ hooks: [{ event: 'pre_tool_use', tool_name_glob: 'bash' }] });
    const before = lockText();
    const refused = await runCli(['update', 'echo'], { env: home.env });
    expect(refused.code).toBe(8);
    expect(refused.stdout).toContain('+ hook pre_tool_use');
    expect(lockText()).toBe(before);

    const dry = jsonOf(await runCli(['update', 'echo', '--dry-run', '--json'], { env: home.env }));
    expect(dry.updates[0]).toMatchObject({ status: 'would-update', consent_needed: true });
    expect(lockText()).toBe(before);
    const fingerprint = dry.updates[0].to.grant as string;

    const wrong = await runCli(['update', 'echo', '--accept', `sha256:${'0'.repeat(64)}`], { env: home.env });
    expect(wrong.code).toBe(8);
    expect(lockText()).toBe(before);

    const ok = await runCli(['update', 'echo', '--accept', fingerprint], { env: home.env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockText()).toContain(`grant = "${fingerprint}"`);
    expect(lockText()).toContain('version = "0.2.0"');
  });

  it('--yes accepts a widening change', async () => {
    setManifest({ commands: [{ name: 'go' }] });
    const r = await runCli(['update', '--all', '--yes'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Updated echo');
  });

  it('a narrowing change is applied without asking and shows the diff', async () => {
    setManifest({ tools: [{ name: 'a' }] });
    const r = await runCli(['update', 'echo', '--json'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    const item = jsonOf(r).updates[0];
    expect(item).toMatchObject({ status: 'updated', consent_needed: false });
    expect(item.diff.changes).toEqual([expect.objectContaining({ facet: 'tools', kind: 'removed', effect: 'narrowing' })]);
  });

  it('a broken new manifest fails the update and keeps the old pin', async () => {
    writeFileSync(join(pkg, 'plugin.json'), '{oops');
    const before = lockText();
    const r = await runCli(['update', 'echo'], { env: home.env });
    expect(r.code).toBe(4);
    expect(lockText()).toBe(before);
    // Said once, as the command's error: not also as a ✖ line on stdout.
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter((l) => l.startsWith('error: '))).toHaveLength(1);
    expect(r.stderr).not.toContain('✖');
  });

  it('several names, some failing: each failure is named once on stderr with its hint, the others on stdout, exit 11', async () => {
    const other = writePackage(join(home.root, 'src', 'other'), { name: 'other', yolop: { tools: [{ name: 'o' }] } });
    const third = writePackage(join(home.root, 'src', 'third'), { name: 'third', yolop: { tools: [{ name: 't' }] } });
    for (const p of [other, third]) expect((await runCli(['install', p], { env: home.env })).code).toBe(0);
    writeFileSync(join(pkg, 'plugin.json'), '{oops');
    writeFileSync(join(third, 'plugin.json'), '{oops');
    const r = await runCli(['update', 'echo', 'other', 'third'], { env: home.env });
    expect(r.code, r.stderr).toBe(11);
    expect(r.stdout.trim()).toBe('other is up to date.');
    for (const name of ['echo', 'third'])
      expect(
        r.stderr.split('\n').filter((l) => l.startsWith(`✖ ${name}: `)),
        r.stderr,
      ).toHaveLength(1);
    expect(r.stderr).toMatch(/^✖ echo: .*\n {2}hint: /m);
    expect(r.stderr).toMatch(/\nerror: 2 of 3 updates failed\.\nhint: The others were updated or already up to date; fix the failures and run again\.\n$/);
  });

  it('a store link swapped to another directory: update does not call it up to date (exit 5), verify, list and outdated name the link, not edits; the repair they name puts the pinned directory back where yolop loads it', async () => {
    expect((await runCli(['enable', 'echo'], { env: home.env })).code).toBe(0);
    const pinned = agentView(home.configDir).echo!.package;
    expect(pinned).not.toBeNull();
    // Another directory holding a package of the same name, linked in by hand (or by another tool).
    const other = writePackage(join(home.root, 'elsewhere', 'echo'), { name: 'echo', files: { 'extra.txt': 'not the pinned one' } });
    const link = join(home.configDir, 'extensions', 'echo');
    rmSync(link);
    symlinkSync(other, link);
    const loaded = agentView(home.configDir).echo!.package;
    expect(loaded, 'yolop now loads the other directory').not.toBe(pinned);
    const before = lockText();

    // update re-reads the pinned directory (unchanged): that is no reason to say "up to date" over the other one.
    const up = await runCli(['update', 'echo', '--json'], { env: home.env });
    expect(up.code, up.stdout).toBe(5);
    expect(jsonOf(up).error.code).toBe('E_INTEGRITY');
    expect(jsonOf(up).error.message).toContain(`the store link leads to ${realpathSync(other)}`);
    expect(jsonOf(up).error.hint).toContain('yep-ext install --force echo');
    expect(lockText()).toBe(before);
    expect(agentView(home.configDir).echo!.package).toBe(loaded);

    // verify: the problem is the link (kind missing), and its hint is not the update that just refused.
    const v = await runCli(['verify', '--json'], { env: home.env });
    expect(v.code).toBe(5);
    const problems = jsonOf(v).error.details.extensions[0].problems;
    expect(problems).toEqual([expect.objectContaining({ kind: 'missing', message: expect.stringContaining(`not to ${pkg}, which extensions.lock pins`) })]);
    expect(jsonOf(v).error.hint).toContain('yep-ext install --force echo');
    expect(jsonOf(v).error.hint).not.toContain('yep-ext update');
    const listed = jsonOf(await runCli(['list', '--json'], { env: home.env })).extensions[0];
    expect(listed.problems.join('\n')).toContain('the store link leads to');
    const od = await runCli(['outdated', '--exit-code', '--json'], { env: home.env });
    expect(od.code).toBe(5);
    expect(jsonOf(od).outdated[0]).toMatchObject({ status: 'damaged', hint: 'yep-ext install --force echo' });

    // The repair named, followed: the pinned directory is what yolop loads again, and verify agrees.
    expect((await runCli(['install', '--force', 'echo'], { env: home.env })).code).toBe(0);
    expect(realpathSync(link)).toBe(realpathSync(pkg));
    expect(agentView(home.configDir).echo!.package).toBe(pinned);
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
  });

  it('a pinned directory that moved: verify and outdated name installing it from where it is now, never `install --force` (which re-reads the gone directory and fails)', async () => {
    renameSync(pkg, join(home.root, 'src', 'echo-moved'));
    const v = await runCli(['verify', '--json'], { env: home.env });
    expect(v.code).toBe(5);
    expect(jsonOf(v).error.details.extensions[0].problems).toEqual([
      expect.objectContaining({ kind: 'missing', message: `missing: the linked directory ${pkg} is gone` }),
    ]);
    const hint = jsonOf(v).error.hint as string;
    expect(hint).toContain('yep-ext install <its directory> --yes');
    expect(hint).toContain('yep-ext remove echo');
    expect(hint).not.toContain('--force');
    expect(hint).not.toContain('--frozen');
    // What the old hint said, tried: it fails, so no hint may name it.
    expect((await runCli(['install', '--force', 'echo'], { env: home.env })).code).toBe(3);
    const od = await runCli(['outdated', '--json'], { env: home.env });
    expect(od.code).toBe(0);
    const row = jsonOf(od).outdated[0];
    expect(row).toMatchObject({ status: 'damaged', hint: 'yep-ext install <its directory> --yes' });
    expect(row.error.hint).not.toContain('--force');
    // Its own advice works: installed from where it is now (--yes: without it, install asks before
    // replacing the entry of another directory, and refuses with no TTY), verify passes.
    expect((await runCli(['install', join(home.root, 'src', 'echo-moved')], { env: home.env })).code).toBe(7);
    expect((await runCli(['install', join(home.root, 'src', 'echo-moved'), '--yes'], { env: home.env })).code).toBe(0);
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
  });

  it('a path package installed as a copy (a real directory, as yolop installs one) is installed state: verify passes and update is up to date; its copy edited, update does not call it up to date (exit 5) and the repair named re-links the pinned directory', async () => {
    expect((await runCli(['enable', 'echo'], { env: home.env })).code).toBe(0);
    const entry = join(home.configDir, 'extensions', 'echo');
    rmSync(entry);
    cpSync(pkg, entry, { recursive: true });
    const copy = agentView(home.configDir).echo!.package;
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
    const up = await runCli(['update', 'echo'], { env: home.env });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout.trim()).toBe('echo is up to date.');

    // The copy drifts (the user's directory does not): what yolop loads is not what the lock pins.
    writeFileSync(join(entry, 'extra.txt'), 'edited in the store');
    expect(agentView(home.configDir).echo!.package).not.toBe(copy);
    const before = lockText();
    const drifted = await runCli(['update', 'echo', '--json'], { env: home.env });
    expect(drifted.code, drifted.stdout).toBe(5);
    expect(jsonOf(drifted).error.hint).toContain('yep-ext install --force echo');
    expect(lockText()).toBe(before);
    const v = await runCli(['verify', '--json'], { env: home.env });
    expect(v.code).toBe(5);
    expect(jsonOf(v).error.hint).toContain('yep-ext install --force echo');
    expect(jsonOf(v).error.hint).not.toContain('yep-ext update');
    expect(jsonOf(await runCli(['outdated', '--json'], { env: home.env })).outdated[0]).toMatchObject({
      status: 'damaged',
      hint: 'yep-ext install --force echo',
    });
    expect((await runCli(['install', '--force', 'echo'], { env: home.env })).code).toBe(0);
    expect(realpathSync(entry)).toBe(realpathSync(pkg));
    expect(agentView(home.configDir).echo!.package).toBe(copy);
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
  });
});
