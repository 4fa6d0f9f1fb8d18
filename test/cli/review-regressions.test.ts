/**
 * Regressions from an independent review: each case once let data be lost, a wider
 * grant or other bytes slip in, or the host see something other than what yep-ext showed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { BIN, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry } from '../helpers/registry.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());
const store = () => join(home.configDir, 'extensions');
const lockText = () => readFileSync(join(store(), 'extensions.lock'), 'utf8');

describe('data safety', () => {
  it('refuses to install a directory that is inside the store (it would delete it)', async () => {
    const inside = writePackage(join(store(), 'relx'), { name: 'relx', files: { 'NOTES.md': 'mine\n' } });
    const r = await runCli(['install', '--yes', inside], { env: home.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('inside the extension store');
    expect(readFileSync(join(inside, 'NOTES.md'), 'utf8')).toBe('mine\n');
    expect(lstatSync(inside).isDirectory()).toBe(true);
  });

  it('recovers an install journal of a killed process without deleting the installed package', async () => {
    const pkg = writePackage(join(home.root, 'src', 'foo'), { name: 'foo' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    const lock = lockText();
    // What a process killed right after writing its journal leaves behind (pid 1 is never ours).
    const stage = join(store(), '.yep-staging', '999999-dead-0-crate');
    mkdirSync(join(stage, 'pkg'), { recursive: true });
    writeFileSync(
      join(stage, 'journal.json'),
      JSON.stringify({ op: 'place', name: 'foo', newHash: `sha256:${'0'.repeat(64)}`, tree: join(stage, 'pkg'), pid: 999999 }),
    );
    const r = await runCli(['list', '--json'], { env: home.env });
    expect(r.code).toBe(0);
    const other = writePackage(join(home.root, 'src', 'bar'), { name: 'bar' });
    expect((await runCli(['install', other], { env: home.env })).code).toBe(0);
    expect(readlinkSync(join(store(), 'foo'))).toBe(pkg);
    expect(lockText()).toContain('name = "foo"');
    expect(lock).toContain('name = "foo"');
  });

  it('an interrupted remove whose entry was never moved out is completed by the next run', async () => {
    const pkg = writePackage(join(home.root, 'src', 'foo'), { name: 'foo' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    const stage = join(store(), '.yep-staging', '999999-dead-0-remove-foo');
    mkdirSync(stage, { recursive: true });
    writeFileSync(join(stage, 'journal.json'), JSON.stringify({ op: 'remove', name: 'foo', pid: 999999 }));
    const other = writePackage(join(home.root, 'src', 'bar'), { name: 'bar' });
    expect((await runCli(['install', other], { env: home.env })).code).toBe(0);
    expect(existsSync(join(store(), 'foo'))).toBe(false);
    expect(lockText()).not.toContain('name = "foo"');
    expect(existsSync(join(pkg, 'plugin.json'))).toBe(true);
  });
});

describe('consent and integrity', () => {
  it('re-installing a path whose grant widened needs consent (exit 8), --accept approves exactly that grant', async () => {
    const pkg = writePackage(join(home.root, 'src', 'sec'), { name: 'sec' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    const before = lockText();
    const m = JSON.parse(readFileSync(join(pkg, 'plugin.json'), 'utf8'));
    m.yolop.hooks = [{ event: 'pre_tool_use', on_error: 'block' }];
    writeFileSync(join(pkg, 'plugin.json'), JSON.stringify(m));
    const refused = await runCli(['install', pkg], { env: home.env });
    expect(refused.code).toBe(8);
    expect(lockText()).toBe(before);
    const fingerprint = /--accept (sha256:[0-9a-f]{64})/.exec(refused.stderr)?.[1];
    expect(fingerprint).toBeDefined();
    // A well-formed fingerprint that is not this grant's: told so, with the whole new fingerprint to paste (once); nothing changes.
    const wrong = await runCli(['install', pkg, '--accept', `sha256:${'0'.repeat(64)}`], { env: home.env });
    expect(wrong.code).toBe(8);
    expect(wrong.stderr).toContain(`the fingerprint you passed (sha256:000000000000…) is not the new grant's`);
    expect(wrong.stderr).toContain(`--accept ${fingerprint}`);
    expect(wrong.stderr.split(fingerprint!).length - 1).toBe(1);
    expect(lockText()).toBe(before);
    const ok = await runCli(['install', pkg, '--accept', fingerprint!], { env: home.env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockText()).toContain(`grant = "${fingerprint}"`);
  });

  it('a crate republished at the same version with other bytes is refused by install and update', async () => {
    const reg = await startRegistry();
    try {
      reg.publish({ name: 'yolop-extension-hello', vers: '0.1.0', data: fixtureCrate('yolop-extension-hello', '0.1.0') });
      const env = { ...home.env, YEP_EXT_INDEX: reg.indexUrl };
      expect((await runCli(['install', 'hello@^0.1'], { env })).code).toBe(0);
      const before = lockText();
      const other = await startRegistry();
      try {
        other.publish({ name: 'yolop-extension-hello', vers: '0.1.0', data: fixtureCrate('yolop-extension-hello', '0.1.0', { files: { 'bin/extra': 'x' } }) });
        const env2 = { ...env, YEP_EXT_INDEX: other.indexUrl };
        const install = await runCli(['install', 'hello@0.1.0'], { env: env2 });
        expect(install.code).toBe(5);
        expect(install.stderr).toContain('must never change');
        const update = await runCli(['update', 'hello'], { env: env2 });
        expect(update.code).not.toBe(0);
        expect(lockText()).toBe(before);
      } finally {
        await other.close();
      }
    } finally {
      await reg.close();
    }
  });

  it('list reports a path install edited since it was pinned', async () => {
    const pkg = writePackage(join(home.root, 'src', 'ed'), { name: 'ed' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    writeFileSync(join(pkg, 'bin', 'ed-server'), '#!/bin/sh\necho changed\n');
    const list = jsonOf(await runCli(['list', '--json'], { env: home.env }));
    expect(list.extensions[0].problems.join(' ')).toContain('changed since it was pinned');
  });

  it('verify of an edited path install says to review and re-pin with update (a local directory cannot be repaired), and that works', async () => {
    const pkg = writePackage(join(home.root, 'src', 'ved'), { name: 'ved' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    writeFileSync(join(pkg, 'bin', 'ved-server'), '#!/bin/sh\necho changed\n');
    const v = await runCli(['verify', '--json'], { env: home.env });
    expect(v.code).toBe(5);
    const hint = JSON.parse(v.stdout).error.hint as string;
    expect(hint).toContain('yep-ext update ved');
    expect(hint).not.toContain('install --force');
    expect((await runCli(['update', 'ved', '--yes'], { env: home.env })).code).toBe(0);
    expect((await runCli(['verify'], { env: home.env })).code).toBe(0);
  });
});

describe('what reaches the terminal and the host', () => {
  it('neutralises escape sequences in versions and in error messages', async () => {
    const pkg = writePackage(join(home.root, 'src', 'escx'), { name: 'escx', version: '1.0\u001b[2J\u001b]0;pwned\u0007' });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('\u001b');
    const bad = join(home.root, 'src', 'bad');
    writePackage(bad, { name: 'bad', yolop: { hooks: [{ event: 'pre_tool_use', 'x\u001b[2J': 1 }] } });
    const e = await runCli(['install', bad], { env: home.env });
    expect(e.code).toBe(4);
    expect(e.stderr).not.toContain('\u001b');
  });

  it('doctor warns about a server command containing "/": the newest host resolves it from the package, older hosts from the workspace', async () => {
    const pkg = writePackage(join(home.root, 'src', 'rel'), { name: 'rel', yolop: { capabilityServer: { command: 'bin/rel-server' } } });
    const r = await runCli(['doctor', pkg, '--json', '--timeout', '2'], { env: home.env });
    const command = jsonOf(r).checks.find((c: { name: string }) => c.name === 'command');
    expect(command).toMatchObject({ status: 'warn' });
    expect(command.detail).toContain('bin/rel-server in the package; a command with "/" starts only on hosts that resolve it from the package');
  });

  it('an extension literally named yolop-extension-x is managed by that exact name', async () => {
    const pkg = writePackage(join(home.root, 'src', 'pf'), { name: 'yolop-extension-pf' });
    const short = writePackage(join(home.root, 'src', 'pf2'), { name: 'pf' });
    expect((await runCli(['install', pkg, short], { env: home.env })).code).toBe(0);
    expect((await runCli(['enable', 'yolop-extension-pf'], { env: home.env })).code).toBe(0);
    expect((await runCli(['remove', 'yolop-extension-pf'], { env: home.env })).code).toBe(0);
    expect(existsSync(join(store(), 'pf'))).toBe(true);
    expect(existsSync(join(store(), 'yolop-extension-pf'))).toBe(false);
  });

  it('state is never group- or world-writable, even under umask 000', async () => {
    const pkg = writePackage(join(home.root, 'src', 'um'), { name: 'um' });
    execFileSync(
      'sh',
      ['-c', `umask 000 && "${process.execPath}" "${BIN}" install "${pkg}" >/dev/null && "${process.execPath}" "${BIN}" enable um >/dev/null`],
      { env: home.env },
    );
    for (const p of [
      home.configDir,
      store(),
      join(store(), 'extensions.lock'),
      join(home.configDir, 'settings.toml'),
      join(store(), '.yep-grants', 'um.json'),
    ]) {
      expect((statSync(p).mode & 0o022).toString(8), p).toBe('0');
    }
  });

  it('keeps a byte-order mark in settings.toml across disable and enable', async () => {
    const pkg = writePackage(join(home.root, 'src', 'bom'), { name: 'bom' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    const file = join(home.configDir, 'settings.toml');
    writeFileSync(file, '\ufeff# mine\n[[capabilities]]\nref = "ext:bom"\n');
    expect((await runCli(['disable', 'bom'], { env: home.env })).code).toBe(0);
    expect((await runCli(['enable', 'bom'], { env: home.env })).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('\ufeff# mine\n[[capabilities]]\nref = "ext:bom"\n');
  });

  it('installing several at once never claims to wait for "another process"', async () => {
    const a = writePackage(join(home.root, 'src', 'a'), { name: 'a' });
    const b = writePackage(join(home.root, 'src', 'b'), { name: 'b' });
    const r = await runCli(['install', a, b], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Waiting for another');
  });

  it('a missing argument is named', async () => {
    const r = await runCli(['enable', '--json'], { env: home.env });
    expect(r.code).toBe(2);
    expect(jsonOf(r).error.message).toMatch(/name/);
  });
});
