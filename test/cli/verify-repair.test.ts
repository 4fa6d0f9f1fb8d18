/**
 * Verify and repair: `yep-ext verify`
 * re-hashes every entry (files, provisioned binary, manifest, server command)
 * and exits 5 naming each problem; `list` reports the same problems cheaply;
 * `install --force <name>` and `install --frozen` fetch the locked bytes again
 * and repair; a swapped prebuilt binary is refused by --frozen (exit 5, nothing
 * placed). Checked on disk, through the CLI, on real temp homes.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hostTarget } from '../../src/core/binary/provision-binary.js';
import { BINNY_BINARY, BINNY_OTHER, binnyInstalledOnce, serveBinnyBinary } from '../helpers/binny.js';
import { copyHome } from '../helpers/prepared-home.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { setupInstall } from '../helpers/setup-install.js';
import { writePackage } from '../helpers/packages.js';
import { describeNeeding, need } from '../helpers/needs.js';
import type { TestRegistry } from '../helpers/registry.js';

let reg: TestRegistry;
let home: TempHome;
const BINARY = BINNY_BINARY;
const OTHER = BINNY_OTHER;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const store = () => join(home.configDir, 'extensions');
const pkg = () => join(store(), 'binny');
const lockText = () => readFileSync(join(store(), 'extensions.lock'), 'utf8');
const envOf = (h: TempHome) => ({ ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const env = () => envOf(home);

const serveBinary = (content: string): void => serveBinnyBinary(reg, content);

/**
 * The set-up install, made once in this process (test/helpers/setup-install.ts: the core call
 * `yep-ext install` makes, signatures of the real files) in a home of its own: each test starts
 * from a copy of that home (prepared-home.ts copyHome: config dir and download cache, each copied
 * tree's stat signature recorded again for the copy as the product records a tree it placed).
 * The judges after it are the subject. A test about what the install itself recorded makes its
 * own install instead (freshInstall).
 */
let installed: TempHome;
beforeAll(async () => {
  ({ reg, installed } = await binnyInstalledOnce());
});
afterAll(() => {
  installed.cleanup();
  reg.close();
});
beforeEach(() => {
  home = makeTempHome();
  serveBinary(BINARY);
  copyHome(installed, home);
});
afterEach(() => {
  reg.clearFaults();
  home.cleanup();
});

/** This test's home made by the set-up install itself, not copied: for what the install recorded. */
async function freshInstall(): Promise<void> {
  home.cleanup();
  home = makeTempHome();
  expect(await setupInstall(env(), ['binny'])).toEqual(['binny']);
}

interface Problem {
  kind: string;
  message: string;
  files: string[] | null;
}
async function verify(): Promise<{ code: number | null; problems: Problem[]; report: Record<string, unknown> }> {
  const r = await runCli(['verify', '--json'], { env: env() });
  const json = jsonOf(r);
  const report = r.code === 0 ? json : json.error.details;
  return { code: r.code, problems: report.extensions.flatMap((e: { problems: Problem[] }) => e.problems), report };
}

describeNeeding(
  need(hostTarget() !== undefined, `a platform with a prebuilt-binary target (this is ${process.platform}-${process.arch})`),
  'verify and repair',
  () => {
    it('a path install whose server is not built yet (yep-ext new -l rust, then install): the hint is the build, not install --force, which finds the same directory', async () => {
      const dir = writePackage(join(home.root, 'src', 'unbuilt'), { name: 'unbuilt' });
      rmSync(join(dir, 'bin', 'unbuilt-server'));
      expect((await runCli(['install', dir], { env: env() })).code).toBe(0);
      const r = await runCli(['verify', '--json'], { env: env() });
      expect(r.code).toBe(5);
      const { error } = jsonOf(r);
      expect(error.details.extensions.find((e: { name: string }) => e.name === 'unbuilt').problems.map((p: { kind: string }) => p.kind)).toEqual(['command']);
      expect(error.hint).toMatch(/^Build or restore the server command in the local directory of unbuilt/);
      expect(error.hint).toContain(`yep-ext doctor ${dir}`);
      expect(error.hint).not.toContain('install --force');
    });

    it('a clean home verifies (exit 0) with every key of the report present', async () => {
      await freshInstall();
      const v = await verify();
      expect(v.code).toBe(0);
      expect(v.report).toEqual({
        ok: true,
        extensions: [
          {
            name: 'binny',
            ok: true,
            dir: realpathSync(pkg()),
            content_hash: { expected: expect.stringMatching(/^sha256:/), actual: expect.stringMatching(/^sha256:/), checked: 'hashed' },
            binary: { path: 'bin/binny-server', expected: sha(BINARY), actual: sha(BINARY) },
            command: { ok: true, detail: 'bin/binny-server (executable)' },
            problems: [],
            engines: expect.objectContaining({ status: 'none', requires: null }),
            warnings: [],
          },
        ],
        custody_restored: [],
        leftovers: [],
      });
      // The stat signature recorded at install (docs/formats.md).
      const state = JSON.parse(readFileSync(join(store(), '.yep-state', 'binny.json'), 'utf8'));
      expect(state).toMatchObject({ format: 1, name: 'binny', dir: realpathSync(pkg()), binary_file_sha256: sha(BINARY) });
      expect(Object.keys(state.files).sort()).toEqual(['Cargo.toml', 'README.md', 'bin/binny-server', 'plugin.json', 'src/lib.txt']);
      const human = await runCli(['verify'], { env: env() });
      expect(human.code).toBe(0);
    });

    it('a package in the store that no lock entry pins (the host loads it): verify exits 5 naming it as unlocked; verify <locked name> is unaffected; after remove, 0', async () => {
      // What the host discovers: <store>/extra/plugin.json naming extra, enabled in settings.toml.
      const extra = join(store(), 'extra');
      mkdirSync(join(extra, 'bin'), { recursive: true });
      writeFileSync(
        join(extra, 'plugin.json'),
        JSON.stringify({ name: 'extra', version: '9.9.9', yolop: { capabilityServer: { command: 'extra' }, tools: [{ name: 't' }] } }),
      );
      writeFileSync(join(extra, 'bin', 'extra'), '#!/bin/sh\nexec cat\n', { mode: 0o755 });
      writeFileSync(join(home.configDir, 'settings.toml'), '[[capabilities]]\nref = "ext:extra"\n');
      const lockBefore = lockText();
      expect(lockBefore).not.toContain('extra');
      const v = await verify();
      expect(v.code).toBe(5);
      const byName = Object.fromEntries((v.report.extensions as { name: string; ok: boolean; problems: Problem[] }[]).map((e) => [e.name, e]));
      expect(byName.binny?.ok).toBe(true);
      expect(byName.extra?.ok).toBe(false);
      expect(byName.extra?.problems.map((p) => p.kind)).toEqual(['unlocked']);
      const human = await runCli(['verify'], { env: env() });
      expect(human.code).toBe(5);
      expect(human.stderr).toContain('extra: not in extensions.lock');
      expect(human.stderr).toContain('yep-ext remove extra');
      expect((await runCli(['verify', 'binny'], { env: env() })).code).toBe(0);
      // Named, it is the same finding, not "extra is not installed" (exit 3).
      const named = await runCli(['verify', 'extra', '--json'], { env: env() });
      expect(named.code, named.stdout).toBe(5);
      expect(jsonOf(named).error.details.extensions).toEqual([
        expect.objectContaining({ name: 'extra', ok: false, problems: [expect.objectContaining({ kind: 'unlocked' })] }),
      ]);
      // info answers from the store, not from the registry's crate yolop-extension-extra (another package).
      const crateRequests = reg.requests.length;
      const info = await runCli(['info', 'extra', '--json'], { env: env() });
      expect(info.code, info.stderr).toBe(0);
      expect(jsonOf(info)).toMatchObject({
        name: 'extra',
        installed: true,
        version: '9.9.9',
        enabled: true,
        source: null,
        registry: null,
        verify: { ok: false, problems: [expect.stringContaining('not in extensions.lock')] },
      });
      expect(reg.requests.length).toBe(crateRequests);
      // update has nothing to update it from; it says so, not "install extra" (the crate yolop-extension-extra).
      const up = await runCli(['update', 'extra', '--json'], { env: env() });
      expect(up.code).toBe(3);
      expect(jsonOf(up).error.message).toContain('no lock entry pins it');
      expect(jsonOf(up).error.hint).not.toContain('yep-ext install extra');
      expect(reg.requests.length).toBe(crateRequests);
      // list says what the host does with it: enabled (settings.toml), not "?".
      const listed = jsonOf(await runCli(['list', '--json'], { env: env() })).extensions as { name: string; enabled?: boolean | null; problems: string[] }[];
      expect(listed.find((e) => e.name === 'extra')).toMatchObject({ enabled: true, problems: [expect.stringContaining('not in extensions.lock')] });
      // verify changes nothing: the package and the lock are as they were.
      expect(existsSync(join(extra, 'plugin.json'))).toBe(true);
      expect(lockText()).toBe(lockBefore);
      expect((await runCli(['remove', 'extra'], { env: env() })).code).toBe(0);
      expect(existsSync(extra)).toBe(false);
      expect((await verify()).code).toBe(0);
    });

    it('settings.toml enables a name that nothing installs (the host is told to load what is not there): verify exits 5 naming it as not-installed, list shows it enabled with the problem; a disabled one is no problem; after remove, 0 and the table gone', async () => {
      const settings = join(home.configDir, 'settings.toml');
      writeFileSync(settings, '# mine\n[[capabilities]]\nref = "ext:ghost"\n\n[[capabilities]]\nref = "ext:off"\nenabled = false\n');
      const lockBefore = lockText();
      const v = await verify();
      expect(v.code).toBe(5);
      const byName = Object.fromEntries((v.report.extensions as { name: string; ok: boolean; problems: Problem[] }[]).map((e) => [e.name, e]));
      expect(byName.binny?.ok).toBe(true);
      expect(byName.ghost?.problems.map((p) => p.kind)).toEqual(['not-installed']);
      expect(byName.off).toBeUndefined();
      const human = await runCli(['verify'], { env: env() });
      expect(human.code).toBe(5);
      expect(human.stderr).toContain('ghost: enabled in settings.toml but not installed');
      expect(human.stderr).toContain('`yep-ext remove ghost`');
      expect((await runCli(['verify', 'binny'], { env: env() })).code).toBe(0);
      const listed = jsonOf(await runCli(['list', '--json'], { env: env() })).extensions as { name: string; enabled?: boolean | null; problems: string[] }[];
      expect(listed.map((e) => e.name)).toEqual(['binny', 'ghost']);
      expect(listed.find((e) => e.name === 'ghost')).toMatchObject({
        enabled: true,
        problems: [expect.stringContaining('enabled in settings.toml but not installed')],
      });
      expect(lockText()).toBe(lockBefore);

      const rm = await runCli(['remove', 'ghost', '--json'], { env: env() });
      expect(rm.code, rm.stderr).toBe(0);
      expect(jsonOf(rm).removed).toEqual({ store: false, lock: false, settings: true, secrets: false, files: false });
      expect(readFileSync(settings, 'utf8')).toBe('# mine\n[[capabilities]]\nref = "ext:off"\nenabled = false\n');
      expect((await verify()).code).toBe(0);
    });

    it('update --all with an empty lock and a package the store holds: says the lock pins nothing and names the package, not "no extension is installed"', async () => {
      const fresh = makeTempHome();
      try {
        const extra = join(fresh.configDir, 'extensions', 'extra');
        mkdirSync(extra, { recursive: true });
        writeFileSync(join(extra, 'plugin.json'), JSON.stringify({ name: 'extra', version: '1.0.0', yolop: { capabilityServer: { command: 'extra' } } }));
        const r = await runCli(['update', '--all'], { env: fresh.env });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain('the lock pins no extension, but the store holds a package it does not pin (extra)');
        expect(r.stdout).not.toContain('no extension is installed');
        rmSync(extra, { recursive: true });
        expect((await runCli(['update', '--all'], { env: fresh.env })).stdout.trim()).toBe('Nothing to update: no extension is installed.');
      } finally {
        fresh.cleanup();
      }
    });

    const damage: Array<[string, () => void, string, string]> = [
      ['editing one file', () => appendFileSync(join(pkg(), 'README.md'), 'edited\n'), 'content', 'README.md'],
      ['deleting one file', () => rmSync(join(pkg(), 'src', 'lib.txt')), 'content', 'src/lib.txt'],
      ['adding one file', () => writeFileSync(join(pkg(), 'added.txt'), 'x\n'), 'content', 'added.txt'],
      ['overwriting the binary', () => writeFileSync(join(pkg(), 'bin', 'binny-server'), OTHER), 'binary', 'bin/binny-server'],
      ['chmod -x on the server (a host-extracted crate)', () => chmodSync(join(pkg(), 'bin', 'binny-server'), 0o644), 'not-executable', 'bin/binny-server'],
    ];
    describe.each([
      ['install --force binny', ['install', '--force', 'binny']],
      ['install --frozen', ['install', '--frozen']],
    ])('repaired by %s', (_label, repair) => {
      it.each(damage)('%s: verify and list name it (exit 5), the repair restores it, verify exits 0', async (_what, breakIt, kind, file) => {
        const lockBefore = lockText();
        breakIt();
        const v = await verify();
        expect(v.code).toBe(5);
        expect(v.problems.map((p) => [p.kind, p.files])).toEqual([[kind, [file]]]);
        const human = await runCli(['verify'], { env: env() });
        expect(human.code).toBe(5);
        expect(human.stderr).toContain(file);
        const list = jsonOf(await runCli(['list', '--json'], { env: env() }));
        expect(list.extensions[0].problems).toContain(v.problems[0]!.message);

        const r = await runCli(repair, { env: env() });
        expect(r.code, r.stderr + r.stdout).toBe(0);
        expect((await verify()).code).toBe(0);
        expect(lockText()).toBe(lockBefore);
        expect(readFileSync(join(pkg(), 'bin', 'binny-server'), 'utf8')).toBe(BINARY);
        expect(statSync(join(pkg(), 'bin', 'binny-server')).mode & 0o111).not.toBe(0);
        expect(existsSync(join(pkg(), 'added.txt'))).toBe(false);
        expect(readFileSync(join(pkg(), 'README.md'), 'utf8')).toBe('hello\n');
      });
    });

    it('an unchanged store: --frozen makes no request and re-hashes nothing it has a signature for', async () => {
      await freshInstall();
      reg.requests.length = 0;
      const r = await runCli(['install', '--frozen', '--json'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r).frozen).toEqual([
        { name: 'binny', status: 'skipped', reason: 'already installed with the locked hash', engines: expect.objectContaining({ status: 'none' }) },
      ]);
      expect(reg.requests).toEqual([]);
    });

    it('install --force on an intact entry reinstalls it; a plain install over a drifted tree places it afresh instead of "already installed"', async () => {
      const forced = await runCli(['install', '--force', 'binny', '--json'], { env: env() });
      expect(forced.code, forced.stderr).toBe(0);
      expect(jsonOf(forced).installed[0].status).toBe('reinstalled');
      const same = await runCli(['install', 'binny', '--json'], { env: env() });
      expect(jsonOf(same).installed[0].status).toBe('unchanged');
      appendFileSync(join(pkg(), 'README.md'), 'edited\n');
      const plain = await runCli(['install', 'binny', '--json'], { env: env() });
      expect(plain.code, plain.stderr).toBe(0);
      expect(jsonOf(plain).installed[0].status).toBe('reinstalled');
      expect(readFileSync(join(pkg(), 'README.md'), 'utf8')).toBe('hello\n');
      expect((await verify()).code).toBe(0);
    });

    it('a wiped store and a release host serving another binary with a matching .sha256: --frozen refuses (exit 5), nothing placed', async () => {
      const lockBefore = lockText();
      rmSync(pkg(), { recursive: true, force: true });
      serveBinary(OTHER);
      const r = await runCli(['install', '--frozen'], { env: env() });
      expect(r.code).toBe(5);
      expect(r.stderr).toContain('- binny:');
      expect(r.stderr).toContain('binary_sha256');
      expect(existsSync(pkg())).toBe(false);
      expect(lockText()).toBe(lockBefore);
    });
  },
);
