/**
 * A home whose extensions are baked into a read-only image (or bind-mounted read-only into
 * a container): the store cannot hold the installer's lock file. A command that finds the
 * state already as asked (`install --frozen` over what the lock pins, `enable` of what is
 * enabled) succeeds and changes nothing, as on a writable home; one that must write fails
 * naming the read-only file system (never ENOENT), and changes nothing either; and a
 * transaction a killed process left half done is not run over without the recovery that
 * needs to write. Real read-only bind mounts (root), as readonly-cache.test.ts; skipped,
 * saying so, without them, and a failure under YEP_EXT_REQUIRE_ALL=1.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { agentView } from '../helpers/agent-view.js';
import { makePackage } from '../helpers/ext-package.js';
import { treeBytes } from '../helpers/file-walk.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { bindReadOnly, readOnlyMountable } from '../helpers/readonly-mount.js';

const mountable = readOnlyMountable();

const mounted: string[] = [];
const homes: TempHome[] = [];
afterEach(() => {
  while (mounted.length) spawnSync('umount', [mounted.pop()!]);
});
afterAll(() => {
  for (const h of homes) h.cleanup();
});

/** A home with the path package `ro` installed and enabled, its lock exported beside it. */
async function provisioned(): Promise<{ home: TempHome; lockCopy: string }> {
  const home = makeTempHome('yep-rohome-');
  homes.push(home);
  const dir = makePackage(join(home.root, 'src'), 'ro');
  for (const args of [
    ['install', dir],
    ['enable', 'ro'],
    ['lock', 'export', join(home.root, 'ro.lock')],
  ]) {
    const r = await runCli(args, { env: home.env });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
  return { home, lockCopy: join(home.root, 'ro.lock') };
}

function readOnly(home: TempHome): void {
  const m = bindReadOnly(home.configDir, home.configDir);
  expect(m.status, m.stderr).toBe(0);
  mounted.push(home.configDir);
}

describeNeeding(
  need(mountable.ok, `root and a read-only bind mount (mount --bind / remount,bind,ro said: ${mountable.why})`),
  'a home on a read-only mount',
  () => {
    it('install --frozen (with and without --lockfile, with --enable) and enable of what is in place: exit 0, nothing changed', async () => {
      const { home, lockCopy } = await provisioned();
      const before = { files: treeBytes(home.configDir), loaded: agentView(home.configDir) };
      expect(Object.keys(before.loaded)).toEqual(['ro']);
      readOnly(home);
      // Root writes through file modes; only the mount stops it.
      expect(() => writeFileSync(join(home.configDir, 'probe'), 'x')).toThrow(/EROFS/);
      for (const args of [
        ['install', '--frozen'],
        ['install', '--frozen', '--lockfile', lockCopy],
        ['install', '--frozen', '--enable'],
        ['enable', 'ro'],
      ]) {
        const r = await runCli(args, { env: home.env });
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        expect(r.stderr).not.toMatch(/EROFS|Could not lock|read-only/i);
      }
      expect(treeBytes(home.configDir)).toEqual(before.files);
      expect(agentView(home.configDir)).toEqual(before.loaded);
    });

    it('a command that must write fails naming the read-only file system, and changes nothing', async () => {
      const { home } = await provisioned();
      const before = treeBytes(home.configDir);
      readOnly(home);
      for (const args of [
        ['disable', 'ro'],
        ['remove', 'ro'],
      ]) {
        const r = await runCli(args, { env: home.env });
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(7);
        expect(r.stderr).toMatch(/EROFS/);
        expect(r.stderr).not.toMatch(/ENOENT/);
      }
      expect(treeBytes(home.configDir)).toEqual(before);
    });

    it('a transaction a killed process left half done: refused, saying what to do, not run over', async () => {
      const { home } = await provisioned();
      // A removal journal of a dead process, as a remove killed after its commit leaves it.
      const dead = spawnSync('true').pid;
      const stage = join(home.configDir, 'extensions', '.yep-staging', `${dead}-kx-0-remove`);
      mkdirSync(stage, { recursive: true });
      writeFileSync(join(stage, 'journal.json'), JSON.stringify({ op: 'remove', name: 'ro' }));
      readOnly(home);
      const r = await runCli(['install', '--frozen'], { env: home.env });
      expect(r.code).toBe(7);
      expect(r.stderr).toMatch(/killed while changing ro/);
      expect(r.stderr).toMatch(/read-write/);
    });
  },
);
