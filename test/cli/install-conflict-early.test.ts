/**
 * Conflicts are decided before any download or summary: without a TTY
 * and without --yes, installing another version of an installed crate is refused
 * from the lock and the index alone (the loopback registry sees no .crate request,
 * stdout shows no contribution summary, nothing on disk changes), and "already
 * installed" prints no summary either and downloads nothing (not even from the cache).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { parse } from 'smol-toml';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { configTree } from '../helpers/config-tree.js';
import { mtimesUnder } from '../helpers/file-walk.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;

const manifest = (version: string) =>
  JSON.stringify({ name: 'hello', version, yolop: { protocol_version: '1.0', capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }] } });
const publish = (version: string) =>
  reg.publish({ name: HELLO, vers: version, data: fixtureCrate(HELLO, version, { files: { 'plugin.json': manifest(version) } }) });
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const downloads = () => reg.requestsTo('/crates/').length;
/** The summary's head line, as renderPreview prints it. */
const SUMMARY = /hello \d\.\d\.\d from 127\.0\.0\.1:\d+:yolop-extension-hello@/;

/** Every path under the config directory (test/helpers/config-tree.ts). */
const state = () => configTree(home.configDir);

/** The shared download cache of this home (paths.ts: ~/.cache/yep-ext). */
const downloadCache = () => join(home.env.HOME!, '.cache', 'yep-ext');
const lockFile = () => join(home.configDir, 'extensions', 'extensions.lock');

beforeEach(async () => {
  reg = await startRegistry();
  home = makeTempHome();
  publish('0.1.0');
  publish('0.2.0');
});
afterEach(async () => {
  await reg.close();
  home.cleanup();
});

describe('install over an installed version, without a TTY', () => {
  beforeEach(async () => {
    const r = await runCli(['install', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(SUMMARY);
  });

  it('another version: exit 7 with a hint, before any download and without the summary; nothing changes', async () => {
    const before = state();
    const crates = downloads();
    const r = await runCli(['install', 'hello@0.1.0'], { env: env() });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(
      `hello is installed at ${new URL(reg.indexUrl).host}:${HELLO}@0.2.0; this would replace it with ${new URL(reg.indexUrl).host}:${HELLO}@0.1.0`,
    );
    // A downgrade is no move `update` would make: the hint offers only --yes.
    expect(r.stderr).toMatch(/hint: Pass --yes to replace it\.\s*$/);
    expect(r.stderr).not.toContain('yep-ext update');
    expect(r.stdout).not.toMatch(SUMMARY);
    expect(r.stdout.trim()).toBe('');
    expect(downloads()).toBe(crates);
    expect(state()).toEqual(before);

    const j = await runCli(['install', 'hello@0.1.0', '--json'], { env: env() });
    expect(j.code).toBe(7);
    expect(jsonOf(j).error).toMatchObject({ code: 'E_CONFLICT' });
    expect(downloads()).toBe(crates);

    // A range none of whose candidates is the installed version is as certain.
    const range = await runCli(['install', 'hello@<0.2'], { env: env() });
    expect(range.code).toBe(7);
    expect(downloads()).toBe(crates);

    // --yes replaces it: the summary and then the outcome.
    const yes = await runCli(['install', 'hello@0.1.0', '--yes'], { env: env() });
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toMatch(SUMMARY);
    expect(yes.stdout).toContain('Replaced hello 0.1.0');
    expect(downloads()).toBe(crates + 1);
  });

  it('the same version: "Already installed", exit 0, no summary; through another requirement a re-pin, still without a download', async () => {
    const before = state();
    const r = await runCli(['install', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Already installed: hello 0.2.0 (${new URL(reg.indexUrl).host}:${HELLO}@0.2.0)`);
    expect(r.stdout).not.toMatch(SUMMARY);
    expect(state()).toEqual(before);

    // Decided before any download: with the download cache emptied, any fetch would reach the
    // registry; none does, the cache stays empty, and no file of the store is rewritten (mtimes).
    // The same version through another requirement is a re-pin: only the lock's requirement
    // (what `update` follows) changes, and it is said.
    rmSync(downloadCache(), { recursive: true, force: true });
    const lockText = readFileSync(lockFile(), 'utf8');
    // The lock, its memo (written with it: store/lockfile.ts) and its custody record (store/custody.ts)
    // are written by each re-pin; nothing else.
    const rewritten = ['.yep-cache', 'extensions.lock', '.yep-state/extensions.lock.json', '.yep-grants/hello.lock.json'];
    const times = mtimesUnder(join(home.configDir, 'extensions'), rewritten);
    const crates = downloads();
    for (const [spec, status, requirement] of [
      ['hello', 'unchanged', undefined],
      ['hello@0.2.0', 'repinned', '0.2.0'],
      ['hello@0.2.0', 'unchanged', '0.2.0'],
      ['hello@^0.2', 'repinned', '^0.2'],
      ['hello', 'repinned', undefined],
    ] as const) {
      const again = await runCli(['install', spec, '--json'], { env: env() });
      expect(again.code, again.stderr).toBe(0);
      expect(jsonOf(again).installed).toEqual([
        expect.objectContaining({ name: 'hello', version: '0.2.0', status, source: expect.objectContaining({ crate_name: HELLO, version: '0.2.0' }) }),
      ]);
      const locked = (parse(readFileSync(lockFile(), 'utf8')) as { extensions: Array<{ source: Record<string, unknown> }> }).extensions;
      expect(locked).toHaveLength(1);
      expect(locked[0]!.source.requirement, spec).toBe(requirement);
    }
    const human = await runCli(['install', 'hello@~0.2'], { env: env() });
    expect(human.stdout).toContain(`Re-pinned hello 0.2.0 (${new URL(reg.indexUrl).host}:${HELLO}@0.2.0)`);
    expect(human.stdout).toContain('`yep-ext update` now follows `~0.2` (it followed the newest).');
    expect((await runCli(['install', 'hello'], { env: env() })).code).toBe(0);
    expect(downloads()).toBe(crates);
    expect(existsSync(downloadCache())).toBe(false);
    expect(mtimesUnder(join(home.configDir, 'extensions'), rewritten)).toEqual(times);
    // Back where it started: the lock byte for byte.
    expect(readFileSync(lockFile(), 'utf8')).toBe(lockText);
    expect(state()).toEqual(before);

    // Not provably the same (a file of the tree damaged): fetched again and put back.
    rmSync(join(home.configDir, 'extensions', 'hello', 'plugin.json'));
    const repair = await runCli(['install', 'hello', '--json'], { env: env() });
    expect(repair.code, repair.stderr).toBe(0);
    expect(jsonOf(repair).installed[0].status).toBe('reinstalled');
    expect(downloads()).toBe(crates + 1);
    const tree = (lines: string[]) =>
      lines.filter((l) => l.startsWith('extensions/.yep-packages/')).map((l) => l.replace(/^(extensions\/\.yep-packages\/hello\.[0-9a-f]+)(\.\d+)?\//, '$1/'));
    expect(tree(state())).toEqual(tree(before));
    // --dry-run still shows what it planned, summary included.
    const dry = await runCli(['install', 'hello@0.2.0', '--dry-run'], { env: env() });
    expect(dry.stdout).toMatch(SUMMARY);
  });

  it('a directory of the same name (another origin): exit 7 without the summary', async () => {
    const before = state();
    const dir = writePackage(join(home.root, 'pkgs', 'hello'), { name: 'hello' });
    const r = await runCli(['install', dir], { env: env() });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain(`is already installed from ${new URL(reg.indexUrl).host}:`);
    expect(r.stdout.trim()).toBe('');
    expect(state()).toEqual(before);
  });
});

describe('install of a newer version over one that follows the newest (a move forward, as `update`)', () => {
  beforeEach(async () => {
    // A registry that had only 0.1.0 when hello was installed; 0.2.0 came out since.
    await reg.close();
    reg = await startRegistry();
    publish('0.1.0');
    const first = await runCli(['install', 'hello'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    publish('0.2.0');
  });

  const locked = () => (parse(readFileSync(lockFile(), 'utf8')) as { extensions: Array<{ source: Record<string, unknown> }> }).extensions;

  it('without a TTY or --yes: exit 0, the lock and the store at 0.2.0, one download; the dry run says it asks nothing', async () => {
    const crates = downloads();
    const dry = await runCli(['install', 'hello', '--dry-run'], { env: env() });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('Would move hello forward: hello is installed at');
    const dryJson = jsonOf(await runCli(['install', 'hello', '--dry-run', '--json'], { env: env() }));
    expect(dryJson.plan[0]).toMatchObject({ action: 'replaced', replace_asks: false, version: '0.2.0' });

    // The dry run's download is cached: the install fetches nothing more.
    const r = await runCli(['install', 'hello', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).installed[0]).toMatchObject({ name: 'hello', version: '0.2.0', status: 'replaced' });
    expect(downloads()).toBe(crates + 1);
    expect(locked()).toHaveLength(1);
    expect(locked()[0]!.source).toMatchObject({ crate_name: HELLO, version: '0.2.0' });
    expect(locked()[0]!.source.requirement).toBeUndefined();
    // What the host loads: the store entry's manifest is the new version's.
    expect(JSON.parse(readFileSync(join(home.configDir, 'extensions', 'hello', 'plugin.json'), 'utf8')).version).toBe('0.2.0');
  });

  it('an exact version ahead is a move forward too; back down from it, or to a requirement the installed one does not admit, asks: exit 7', async () => {
    // hello follows the newest: =0.2.0 is within that, and ahead.
    const up = await runCli(['install', 'hello@=0.2.0'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    expect(locked()[0]!.source).toMatchObject({ version: '0.2.0', requirement: '=0.2.0' });
    // Down from an exact pin: it asks, and the hint says `update` keeps the pin where it is.
    const before = state();
    const down = await runCli(['install', 'hello@0.1.0'], { env: env() });
    expect(down.code).toBe(7);
    expect(down.stderr).toContain('installed at an exact pin, so `update` keeps it there');
    expect(state()).toEqual(before);

    // Following ^0.1 at 0.1.0, 0.2.0 is outside what `update` follows: another target, so it asks.
    expect((await runCli(['install', 'hello@^0.1', '--yes'], { env: env() })).code).toBe(0);
    expect(locked()[0]!.source).toMatchObject({ version: '0.1.0', requirement: '^0.1' });
    const after = state();
    const other = await runCli(['install', 'hello@^0.2'], { env: env() });
    expect(other.code).toBe(7);
    expect(other.stderr).toMatch(/hint: Pass --yes to replace it\.\s*$/);
    expect(state()).toEqual(after);
  });

  it('a move forward whose grant widens still asks for it: exit 8 without --yes, nothing changed', async () => {
    const widened = JSON.stringify({
      name: 'hello',
      version: '0.3.0',
      yolop: { protocol_version: '1.0', capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }, { name: 'wipe' }] },
    });
    reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0', { files: { 'plugin.json': widened } }) });
    const before = state();
    const r = await runCli(['install', 'hello'], { env: env() });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stdout).toContain('+ tool wipe');
    expect(state()).toEqual(before);
    expect(locked()[0]!.source).toMatchObject({ version: '0.1.0' });
  });
});
