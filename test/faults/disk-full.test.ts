/**
 * A full disk during a write leaves the old files intact. The home lives on a
 * small tmpfs (needs root to mount: without it the suite is skipped, saying so, or
 * fails under YEP_EXT_REQUIRE_ALL=1).
 * With the disk filled, every state-changing command fails with a clear error,
 * the lock, settings, secrets, grants and store are byte-identical afterwards and
 * no temp file is left; once space is freed the same commands succeed.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding, need } from '../helpers/needs.js';
import { faultCrate, snapshot, stagingLeft, type StateSnapshot } from '../helpers/faults.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { fixtureFiles, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { startGitHttpServer, type GitHttpServer } from '../helpers/git-http-server.js';
import { mountTmpfs, tmpfsMountable } from '../helpers/tmpfs-mount.js';

// 2 MiB: room for a few small extensions and state files, not for a 3 MiB crate.
const TMPFS = 'size=2m,mode=0755';
const mountable = tmpfsMountable(TMPFS);
const mounted = mountable.ok;
let base: string;
let mnt: string;
let filler: string;

let reg: TestRegistry;
let repo: TestRepo;
let gitServer: GitHttpServer;
let cacheDir: string;
let home: TempHome;
let pkgs: string;
let env: Record<string, string>;

/** Write to the tmpfs until it refuses (ENOSPC); `more` tops up an existing filler. */
function fillDisk(more = false): void {
  const fd = openSync(filler, more ? 'a' : 'w');
  const chunk = Buffer.alloc(more ? 1024 : 16 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
}

/** Every file and directory under `dir` (relative), or none when it does not exist. */
function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
}

/** Temp files a writer may leave beside state files (write-file-atomic: `<name>.<digits>`). */
function strayTemps(): string[] {
  const dirs = [join(mnt, 'config'), join(mnt, 'config', 'extensions'), join(mnt, 'config', 'extensions', '.yep-grants')];
  return dirs.flatMap((d) => {
    try {
      return readdirSync(d).filter((f) => /\.\d+$/.test(f) || f.endsWith('.partial') || f.endsWith('.tmp'));
    } catch {
      return [];
    }
  });
}

beforeAll(async () => {
  if (!mounted) return;
  base = mkdtempSync(join(tmpdir(), 'yep-diskfull-'));
  mnt = join(base, 'mnt');
  filler = join(mnt, 'filler');
  mkdirSync(mnt);
  const m = mountTmpfs(mnt, TMPFS);
  expect(m.status, m.stderr).toBe(0);
  reg = await startRegistry();
  // Larger than the whole disk (incompressible data).
  reg.publish({ name: 'yolop-extension-big', vers: '1.0.0', data: faultCrate('big', '1.0.0', { blobBytes: 3 * 1024 * 1024 }) });
  home = makeTempHome('yep-diskfull-home-');
  pkgs = join(home.root, 'pkgs');
  cacheDir = join(home.root, 'cache');
  env = { ...home.env, YOLOP_CONFIG_DIR: join(mnt, 'config'), YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', YEP_EXT_CACHE_DIR: cacheDir };
  // A repository larger than the free space left on the disk (incompressible data). Its objects
  // are stored, not deflated: random bytes do not compress, and git would otherwise deflate the
  // blob at every add, push and fetch (the bare repository's config is upload-pack's).
  repo = makeRepo(join(home.root, 'repos'), { name: 'bulky' });
  for (const config of [join(repo.bare, 'config'), join(repo.work, '.git', 'config')]) appendFileSync(config, '[core]\n\tcompression = 0\n');
  repo.commit({ ...fixtureFiles('bulky'), 'data/blob.bin': randomBytes(3 * 1024 * 1024) }, 'initial');
  gitServer = await startGitHttpServer({ root: join(home.root, 'repos') });
  const a = writePackage(join(pkgs, 'alpha'), {
    name: 'alpha',
    yolop: { config_schema: { type: 'object', properties: { level: { type: 'string' }, token: { type: 'string', secret: true, env: 'ALPHA_TOKEN' } } } },
  });
  writePackage(join(pkgs, 'beta'), { name: 'beta' });
  for (const [args, input] of [
    [['install', a], undefined],
    [['enable', 'alpha', '--config', 'level=debug'], undefined],
    [['set-secret', 'alpha', 'token', '--stdin'], 'first-secret\n'],
  ] as const) {
    const r = await runCli([...args], { env, ...(input ? { input } : {}) });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
});

afterAll(async () => {
  if (!mounted) return;
  await reg.close();
  await gitServer.close();
  home.cleanup();
  spawnSync('umount', [mnt]);
  rmSync(base, { recursive: true, force: true });
});

describeNeeding(need(mounted, `root and a mountable tmpfs (mount -t tmpfs said: ${mountable.why})`), 'a full disk', () => {
  let before: StateSnapshot;
  const homeView = (): TempHome => ({ ...home, configDir: join(mnt, 'config') });

  beforeAll(() => {
    before = snapshot(homeView());
    expect(before.settings).toContain('ext:alpha');
    expect(before.secrets).toContain('first-secret');
    fillDisk();
  });

  const attempts: Array<[string, string[], string | undefined]> = [
    ['disable (settings.toml)', ['disable', 'alpha'], undefined],
    ['enable with new config (settings.toml)', ['enable', 'alpha', '--config', 'level=trace'], undefined],
    ['set-secret (connections.toml)', ['set-secret', 'alpha', 'token', '--stdin'], 'second-secret\n'],
    ['install of a directory (link + lock)', ['install', '__BETA__'], undefined],
    ['install of a crate (download + unpack)', ['install', 'big'], undefined],
    ['remove (lock, then settings and secrets)', ['remove', 'alpha'], undefined],
  ];

  it.each(attempts)('%s fails cleanly and changes nothing', async (_what, args, input) => {
    const r = await runCli(
      args.map((a) => (a === '__BETA__' ? join(pkgs, 'beta') : a)),
      { env, ...(input ? { input } : {}) },
    );
    expect(r.code, r.stdout + r.stderr).not.toBe(0);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.stderr).toMatch(/no space|ENOSPC|disk/i);
    expect(snapshot(homeView())).toEqual(before);
    expect(strayTemps()).toEqual([]);
    expect(stagingLeft(homeView())).toEqual([]);
  });

  // One free page: the transaction journal fits, the new lock does not. The
  // entry has already been moved (into the store, or out of it) when the lock
  // write fails, so this is the rollback path, not the early refusal above.
  it.each([
    ['remove', ['remove', 'alpha']],
    ['install of a directory', ['install', '__BETA__']],
  ] as const)('%s, when only the journal fits, rolls back to exactly before', async (_what, args) => {
    const { truncateSync, statSync } = await import('node:fs');
    truncateSync(filler, statSync(filler).size - 4096);
    try {
      const r = await runCli(
        args.map((a) => (a === '__BETA__' ? join(pkgs, 'beta') : a)),
        { env },
      );
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.stderr).toMatch(/ENOSPC/);
      expect(r.stderr).toMatch(/extensions\.lock/);
      expect(snapshot(homeView())).toEqual(before);
      expect(strayTemps()).toEqual([]);
      expect(stagingLeft(homeView())).toEqual([]);
    } finally {
      fillDisk(true);
    }
  });

  // Room for staging, not for the download: the write fails mid-body. That is the disk, not
  // the network: exit 7 through the one I/O mapping, the hint naming the store that filled,
  // the .partial and the staging directory gone, and no temp file left in the cache.
  it.each([
    ['a crate download', () => ['install', 'big', '--json']],
    ['a git fetch', () => ['install', `${repo.url}`, '--json']],
    ['a git fetch over smart HTTP', () => ['install', gitServer.url('bulky.git'), '--json']],
  ] as const)('%s that fills the disk exits 7 naming the store, and leaves nothing partial', async (_what, args) => {
    const { truncateSync, statSync } = await import('node:fs');
    truncateSync(filler, statSync(filler).size - 512 * 1024);
    try {
      const r = await runCli(args(), { env });
      expect(r.code, r.stdout + r.stderr).toBe(7);
      const err = jsonOf(r).error;
      expect(err.code).toBe('E_STATE');
      const store = join(mnt, 'config', 'extensions');
      expect(err.details).toMatchObject({ dir: store, errno: 'ENOSPC' });
      expect(err.hint).toContain(`The disk holding ${store} is full`);
      expect(snapshot(homeView())).toEqual(before);
      expect(strayTemps()).toEqual([]);
      expect(stagingLeft(homeView())).toEqual([]);
      expect(filesUnder(mnt).filter((f) => /\.partial$|\.tmp$|\.yep-git$/.test(f))).toEqual([]);
      expect(filesUnder(cacheDir).filter((f) => f.startsWith(join('tmp', '')))).toEqual([]);
    } finally {
      fillDisk(true);
    }
  });

  it('once space is freed, the same commands work', async () => {
    rmSync(filler);
    for (const [args, input] of [
      [['disable', 'alpha'], undefined],
      [['set-secret', 'alpha', 'token', '--stdin'], 'second-secret\n'],
      [['install', join(pkgs, 'beta')], undefined],
      [['remove', 'alpha'], undefined],
    ] as const) {
      const r = await runCli([...args], { env, ...(input ? { input } : {}) });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    const after = snapshot(homeView());
    expect(after.lock).toContain('name = "beta"');
    expect(after.lock).not.toContain('name = "alpha"');
    expect(after.secrets ?? '').not.toContain('secret');
  });
});
