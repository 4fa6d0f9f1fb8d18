import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { BIN, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { withSeams } from '../helpers/seams.mjs';
import { writePackage } from '../helpers/packages.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

const store = () => join(home.configDir, 'extensions');
const lockPath = () => join(store(), 'extensions.lock');

/** Bytes of every state file, to assert "nothing changed". */
function snapshot(): Record<string, string | null> {
  const read = (p: string) => (existsSync(p) && lstatSync(p).isFile() ? readFileSync(p, 'latin1') : existsSync(p) ? 'non-file' : null);
  const storeEntries = existsSync(store())
    ? readdirSync(store())
        .filter((e) => !e.startsWith('.'))
        .sort()
        .join(',')
    : null;
  return {
    lock: read(lockPath()),
    settings: read(join(home.configDir, 'settings.toml')),
    secrets: read(join(home.configDir, 'connections.toml')),
    store: storeEntries,
  };
}

describe('yep-ext --help and --version', () => {
  it('lists the commands', async () => {
    const r = await runCli(['--help'], { env: home.env });
    expect(r.code).toBe(0);
    for (const c of ['install', 'list', 'remove']) expect(r.stdout).toContain(c);
  });
  it('prints the version', async () => {
    const r = await runCli(['--version'], { env: home.env });
    expect(r.stdout).toMatch(/^yep-ext\/\d+\.\d+\.\d+ /);
  });
});

describe('install from a path, list, remove', () => {
  it('installs in place, pins the host lock, lists, and removes only the link', async () => {
    const pkg = writePackage(join(home.root, 'src', 'echo'), { name: 'echo' });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/tools \(1\)\s+echo_tool/);
    expect(r.stdout).toMatch(/grant sha256:[0-9a-f]{64}/);
    expect(r.stdout).toContain('Installed echo 0.1.0');
    expect(readlinkSync(join(store(), 'echo'))).toBe(pkg);

    const lock = parse(readFileSync(lockPath(), 'utf8')) as { extensions: Array<Record<string, any>> };
    expect(lock.extensions).toHaveLength(1);
    const entry = lock.extensions[0]!;
    expect(entry).toMatchObject({ name: 'echo', version: '0.1.0', source: { type: 'path', path: pkg } });
    expect(entry.content_hash).toBe(await contentHash(pkg));

    const list = jsonOf(await runCli(['list', '--json'], { env: home.env }));
    expect(list.extensions).toMatchObject([{ name: 'echo', version: '0.1.0', enabled: false, problems: [] }]);
    const table = await runCli(['list'], { env: home.env });
    // Piped: tab-separated under a header (a terminal gets the box table; test/cli/list-table.test.ts).
    expect(table.stdout).toMatch(/^echo\t0\.1\.0\tno\t/m);

    const rm = await runCli(['remove', 'yolop-extension-echo'], { env: home.env });
    expect(rm.code, rm.stderr).toBe(0);
    expect(existsSync(join(store(), 'echo'))).toBe(false);
    expect(existsSync(join(pkg, 'plugin.json'))).toBe(true);
    expect((parse(readFileSync(lockPath(), 'utf8')) as { extensions?: unknown[] }).extensions ?? []).toHaveLength(0);
    expect((await runCli(['list'], { env: home.env })).stdout).toContain('No extensions installed');
  });

  it('re-installing the same path is a no-op; a different source needs --yes', async () => {
    const a = writePackage(join(home.root, 'a', 'echo'), { name: 'echo' });
    const b = writePackage(join(home.root, 'b', 'echo'), {
      name: 'echo',
      version: '0.2.0',
      yolop: { hooks: [{ event: 'pre_tool_use', tool_name_glob: 'bash' }] },
    });
    expect((await runCli(['install', a], { env: home.env })).code).toBe(0);
    const again = await runCli(['install', a], { env: home.env });
    expect(again.stdout).toContain('Already installed');
    const before = snapshot();
    const other = await runCli(['install', b], { env: home.env });
    expect(other.code).toBe(7);
    expect(other.stderr).toContain('already installed from');
    expect(other.stderr).toContain('--yes');
    expect(snapshot()).toEqual(before);
    const forced = await runCli(['install', b, '--yes'], { env: home.env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('Changes against the installed echo');
    expect(forced.stdout).toMatch(/hook.*bash/);
    expect(readlinkSync(join(store(), 'echo'))).toBe(b);
    const lock = parse(readFileSync(lockPath(), 'utf8')) as { extensions: Array<Record<string, any>> };
    const json = jsonOf(await runCli(['install', b, '--json'], { env: home.env }));
    expect(json.installed[0].status).toBe('unchanged');
    expect(lock.extensions[0]!.grant).toBe(json.installed[0].grant);
  });

  it('a bare word is a crate even when a same-named directory exists', async () => {
    writePackage(join(home.root, 'echo'), { name: 'echo' });
    // Nothing listens at the index: the retries stay, their backoff sleeps (~3 s) do not (test seam).
    const noBackoff = { YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '20', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '80' };
    const r = await runCli(['install', 'echo', '--json'], { env: { ...home.env, ...noBackoff, YEP_EXT_INDEX: 'http://127.0.0.1:9/' }, cwd: home.root });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toContain('./echo');
  });
});

describe('bad inputs leave store, lock, settings and secrets unchanged', () => {
  beforeEach(async () => {
    const pkg = writePackage(join(home.root, 'src', 'keep'), { name: 'keep' });
    expect((await runCli(['install', pkg], { env: home.env })).code).toBe(0);
    writeFileSync(join(home.configDir, 'settings.toml'), '# mine\n[[capabilities]]\nref = "ext:keep"\n');
    writeFileSync(join(home.configDir, 'connections.toml'), '["ext:keep"]\ntoken = "x"\n', { mode: 0o600 });
  });

  const cases: Array<[string, () => string[], number, RegExp]> = [
    ['missing path', () => ['install', join(home.root, 'nope')], 3, /No such directory/],
    [
      'no plugin.json',
      () => {
        mkdirSync(join(home.root, 'empty'), { recursive: true });
        return ['install', join(home.root, 'empty')];
      },
      4,
      /No plugin\.json/,
    ],
    [
      'invalid JSON',
      () => {
        mkdirSync(join(home.root, 'bad'), { recursive: true });
        writeFileSync(join(home.root, 'bad', 'plugin.json'), '{nope');
        return ['install', join(home.root, 'bad')];
      },
      4,
      /invalid JSON/,
    ],
    [
      'no contributions',
      () => {
        writePackage(join(home.root, 'nc'), { name: 'nc', yolop: { tools: [] } });
        return ['install', join(home.root, 'nc')];
      },
      4,
      /contributes nothing/,
    ],
    [
      'bad manifest name',
      () => {
        writePackage(join(home.root, 'bn'), { name: '../x' });
        return ['install', join(home.root, 'bn')];
      },
      4,
      /must match/,
    ],
    // A path is read as the directory an extension came from (never joined onto the store): none did.
    ['remove ../x', () => ['remove', '../x'], 3, /No installed extension comes from the directory \.\.\/x/],
    ['remove a:b', () => ['remove', 'a:b'], 2, /Invalid extension name/],
    ['remove unknown', () => ['remove', 'ghost'], 3, /"ghost" is not installed/],
    ['empty spec', () => ['install', ''], 2, /empty source/],
  ];
  it.each(cases)('%s', async (_label, args, code, message) => {
    const argv = args();
    const before = snapshot();
    const r = await runCli(argv, { env: home.env });
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/hint: /);
    expect(snapshot()).toEqual(before);
    const j = await runCli([...argv, '--json'], { env: home.env });
    expect(jsonOf(j).error).toMatchObject({ code: expect.stringMatching(/^E_/), message: expect.any(String) });
  });

  it('a corrupt lock is reported, named, and never overwritten', async () => {
    writeFileSync(lockPath(), 'this is [not toml');
    const before = snapshot();
    const pkg = writePackage(join(home.root, 'src', 'new'), { name: 'new' });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(lockPath());
    expect(snapshot()).toEqual(before);
    expect((await runCli(['list'], { env: home.env })).code).toBe(7);
  });

  it('a lock that is a directory is an error', async () => {
    const { rmSync } = await import('node:fs');
    rmSync(lockPath());
    mkdirSync(lockPath());
    const pkg = writePackage(join(home.root, 'src', 'new'), { name: 'new' });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('is a directory');
    expect(existsSync(join(store(), 'new'))).toBe(false);
  });

  it('a file where the installer lock (a directory) belongs: said at once, with what to do, not waited on as a process', async () => {
    const installerLock = join(store(), '.yep-ext.lock');
    writeFileSync(installerLock, 'left by another tool\n');
    const before = snapshot();
    const pkg = writePackage(join(home.root, 'src', 'new'), { name: 'new' });
    const r = await runCli(['install', pkg], { env: home.env });
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/Could not lock .*\.yep-ext\.lock: ENOTDIR/);
    expect(r.stderr).toMatch(/hint: .*move it aside/);
    expect(r.stderr).not.toMatch(/Waiting for another yep-ext process/);
    expect(snapshot()).toEqual(before);
    expect(readFileSync(installerLock, 'utf8')).toBe('left by another tool\n');
  });

  it('a read-only config dir is a clear error with no partial state', async () => {
    if (process.getuid?.() === 0) {
      // root ignores permission bits; use a read-only bind of nothing: point the store below a file instead.
      const file = join(home.root, 'afile');
      writeFileSync(file, '');
      const r = await runCli(['install', writePackage(join(home.root, 'src', 'n2'), { name: 'n2' })], {
        env: { ...home.env, YOLOP_CONFIG_DIR: join(file, 'yolop') },
      });
      expect(r.code).toBe(7);
      expect(r.stderr).toMatch(/Could not create the extension store/);
      return;
    }
    const ro = join(home.root, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    const r = await runCli(['install', writePackage(join(home.root, 'src', 'n2'), { name: 'n2' })], {
      env: { ...home.env, YOLOP_CONFIG_DIR: join(ro, 'yolop') },
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/writable/);
  });
});

describe('concurrency and crashes', () => {
  it('two installs started at once both end up in the lock', async () => {
    const a = writePackage(join(home.root, 'a'), { name: 'alpha' });
    const b = writePackage(join(home.root, 'b'), { name: 'beta' });
    const [ra, rb] = await Promise.all([runCli(['install', a], { env: home.env }), runCli(['install', b], { env: home.env })]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const lock = parse(readFileSync(lockPath(), 'utf8')) as { extensions: Array<{ name: string }> };
    expect(lock.extensions.map((e) => e.name)).toEqual(['alpha', 'beta']);
  });

  it.each(['install:after-fetch', 'place:after-move-old', 'place:before-lock', 'place:after-lock'])(
    'kill -9 at %s, then run again: clean state, install succeeds',
    async (point) => {
      const old = writePackage(join(home.root, 'old'), { name: 'echo' });
      expect((await runCli(['install', old], { env: home.env })).code).toBe(0);
      const before = snapshot();
      const fresh = writePackage(join(home.root, 'new'), { name: 'echo', version: '0.2.0' });
      const pauseFile = join(home.root, 'paused');
      const child = spawn(process.execPath, [BIN, 'install', fresh, '--yes'], {
        env: withSeams({ ...home.env, YEP_EXT_TEST_PAUSE_AT: point, YEP_EXT_TEST_PAUSE_FILE: pauseFile }),
        stdio: 'ignore',
      });
      const started = Date.now();
      while (!existsSync(pauseFile)) {
        if (Date.now() - started > 20_000) throw new Error('never paused');
        await new Promise((r) => setTimeout(r, 25));
      }
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));
      // The killed holder's installer lock goes stale 5 s after its last heartbeat
      // (install-lock.ts STALE_MS): age it by a minute instead of waiting that out, as
      // crash-points' recover() does. The rerun still has to find it stale and take it over.
      const lockDir = join(store(), '.yep-ext.lock');
      if (existsSync(lockDir)) utimesSync(lockDir, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      // The next command (any that takes the lock) recovers: state is entirely before or entirely after.
      const list = await runCli(['list', '--json'], { env: home.env });
      expect(list.code).toBe(0);
      const rerun = await runCli(['install', old, '--yes'], { env: home.env });
      expect(rerun.code, rerun.stderr).toBe(0);
      const after = snapshot();
      expect(after.store).toBe(before.store);
      expect(readlinkSync(join(store(), 'echo'))).toBe(old);
      expect(readdirSync(join(store(), '.yep-staging'))).toEqual([]);
      const lock = parse(readFileSync(lockPath(), 'utf8')) as { extensions: Array<{ source: { path: string } }> };
      expect(lock.extensions[0]!.source.path).toBe(old);
    },
  );
});
