/**
 * A store on a file system mounted noexec (hardened machines mount /home or /var so): the
 * server file is intact and keeps its execute bits, but access(X_OK) says EACCES. That is
 * no damage a fetch repairs: `install --frozen` of the unchanged lock leaves the store exactly
 * as it was (same files, same inodes: nothing placed again), and list, verify, doctor and
 * the frozen run itself say the mount forbids running programs instead of suggesting
 * chmod or a reinstall. A server whose execute bits are really gone is still put back.
 * The config dir lives on a small noexec tmpfs (needs root to mount: without it the suite
 * is skipped, saying so, or fails under YEP_EXT_REQUIRE_ALL=1).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { mountTmpfs, tmpfsMountable } from '../helpers/tmpfs-mount.js';

const NOEXEC = 'noexec,size=16m,mode=0755';
const mountable = tmpfsMountable(NOEXEC);
const mounted = mountable.ok;

let base: string;
let mnt: string;
let home: TempHome;
let env: Record<string, string>;
let url: string;
let lockCopy: string;
const store = () => join(mnt, 'config', 'extensions');
const SERVER = 'bin/keep-server';

/**
 * Every entry under `dir`: kind, mode, bytes' digest or link target, and inode and mtime,
 * which a copy placed again under the same name would not keep. Directory mtimes are left
 * out: the installer lock file comes and goes in the store's top directory on every run.
 */
function storeState(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    const p = join(dir, rel);
    const s = lstatSync(p);
    const mode = (s.mode & 0o7777).toString(8);
    if (s.isSymbolicLink()) out[rel] = `link ${readlinkSync(p)} ino ${s.ino}`;
    else if (s.isDirectory()) out[rel] = `dir ${mode} ino ${s.ino}`;
    else out[rel] = `file ${mode} ${createHash('sha256').update(readFileSync(p)).digest('hex')} ino ${s.ino} mtime ${s.mtimeMs}`;
  }
  return out;
}

beforeAll(async () => {
  if (!mounted) return;
  base = mkdtempSync(join(tmpdir(), 'yep-noexec-'));
  mnt = join(base, 'mnt');
  mkdirSync(mnt);
  const m = mountTmpfs(mnt, NOEXEC);
  expect(m.status, m.stderr).toBe(0);
  home = makeTempHome('yep-noexec-home-');
  env = { ...home.env, YOLOP_CONFIG_DIR: join(mnt, 'config') };
  // The source lives off the mount (the suite's temp dir allows running programs): only the store is noexec.
  const manifest = {
    name: 'keep',
    version: '0.1.0',
    description: 'a server that must stay put',
    yolop: { capabilityServer: { command: 'keep-server' }, tools: [{ name: 'keep_tool' }] },
  };
  const repo = makeRepo(join(home.root, 'repos'), {
    name: 'keep',
    files: {
      'plugin.json': JSON.stringify(manifest, null, 2),
      [SERVER]: { content: '#!/bin/sh\nexec cat\n', mode: 0o755 },
    },
  });
  repo.commit();
  url = repo.url;
  const r = await runCli(['install', url, '--yes'], { env });
  expect(r.code, r.stderr).toBe(0);
  lockCopy = join(home.root, 'extensions.lock');
  copyFileSync(join(store(), 'extensions.lock'), lockCopy);
});

afterAll(() => {
  if (!mounted) return;
  home.cleanup();
  spawnSync('umount', [mnt]);
  rmSync(base, { recursive: true, force: true });
});

describeNeeding(need(mounted, `root and a mountable tmpfs (mount -t tmpfs -o noexec said: ${mountable.why})`), 'a store on a noexec mount', () => {
  it('keeps the execute bits on the installed server, which the system still refuses to run', () => {
    const server = join(store(), 'keep', SERVER);
    expect(lstatSync(server).mode & 0o111).not.toBe(0);
    const run = spawnSync(server, [], { input: '' });
    expect((run.error as NodeJS.ErrnoException | undefined)?.code).toBe('EACCES');
  });

  it('install --frozen of the unchanged lock, twice, leaves the store identical and says why the server cannot start', async () => {
    const before = storeState(store());
    expect(Object.keys(before).some((p) => p.endsWith(SERVER))).toBe(true);
    for (let run = 1; run <= 2; run++) {
      const r = await runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r).frozen).toMatchObject([{ name: 'keep', status: 'skipped' }]);
      expect(r.stderr).toContain(`the file system at ${mnt} is mounted noexec`);
      expect(r.stderr).not.toMatch(/chmod/);
      expect(storeState(store()), `after frozen run ${run}`).toEqual(before);
    }
    // A plain install of the same pin agrees: already installed, nothing placed.
    const again = await runCli(['install', url, '--yes', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(jsonOf(again).installed).toMatchObject([
      { name: 'keep', status: 'unchanged', command: { found: false, detail: expect.stringContaining('mounted noexec') } },
    ]);
    expect(storeState(store())).toEqual(before);
  });

  it('list, verify and doctor name the noexec mount, and verify does not suggest a reinstall', async () => {
    const list = await runCli(['list', '--json'], { env });
    expect(list.code, list.stderr).toBe(0);
    const row = jsonOf(list).extensions.find((e: { name: string }) => e.name === 'keep');
    expect(row.problems.join('\n')).toContain(`the file system at ${mnt} is mounted noexec`);

    const verify = await runCli(['verify', '--json'], { env });
    expect(verify.code).toBe(5);
    const err = jsonOf(verify).error;
    expect(err.message).toContain('match their lock entry but cannot start their server here');
    expect(err.details.extensions[0].problems).toEqual([
      { kind: 'exec-refused', message: expect.stringContaining(`the file system at ${mnt} is mounted noexec`), files: [SERVER] },
    ]);
    expect(err.hint).toContain('without noexec');
    expect(err.hint).not.toContain('install --force');

    const doctor = await runCli(['doctor', 'keep', '--json'], { env });
    expect(doctor.code).not.toBe(0);
    const command = jsonOf(doctor).checks.find((c: { name: string }) => c.name === 'command');
    expect(command).toMatchObject({ status: 'fail', detail: expect.stringContaining(`the file system at ${mnt} is mounted noexec`) });
  });

  it('a server whose execute bits are gone is still damage: chmod is named and install --frozen puts the file back', async () => {
    const server = join(store(), 'keep', SERVER);
    const serverBytes = readFileSync(server);
    chmodSync(server, 0o644);
    const verify = await runCli(['verify', '--json'], { env });
    expect(verify.code).toBe(5);
    expect(jsonOf(verify).error.details.extensions[0].problems.map((p: { kind: string }) => p.kind)).toEqual(['not-executable']);
    const r = await runCli(['install', '--frozen', '--lockfile', lockCopy, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).frozen[0].status).not.toBe('skipped');
    expect(lstatSync(join(store(), 'keep', SERVER)).mode & 0o111).not.toBe(0);
    // Put back as the lock pins it: the server's bytes are the package's, the lock is the one given.
    expect(readFileSync(join(store(), 'keep', SERVER)).equals(serverBytes)).toBe(true);
    expect(readFileSync(join(store(), 'extensions.lock'), 'utf8')).toBe(readFileSync(lockCopy, 'utf8'));
  });
});
