import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

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
    for (const env of [home.env, { ...home.env, YEP_EXT_NO_FAST_PATH: '1' }]) {
      const r = await runCli(['update', '--all'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe('Nothing to update: no extension is installed.');
      expect(jsonOf(await runCli(['update', '--all', '--json'], { env }))).toEqual({ updates: [] });
    }
    expect(lockText()).toBe(before);
  });

  it('needs names or --all', async () => {
    const r = await runCli(['update'], { env: home.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--all');
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
    for (const name of ['echo', 'third']) expect(r.stderr.split('\n').filter((l) => l.startsWith(`✖ ${name}: `)), r.stderr).toHaveLength(1);
    expect(r.stderr).toMatch(/^✖ echo: .*\n {2}hint: /m);
    expect(r.stderr).toMatch(/\nerror: 2 of 3 updates failed\.\nhint: The others were updated or already up to date; fix the failures and run again\.\n$/);
  });
});
