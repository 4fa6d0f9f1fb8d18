/**
 * `engines.yolop` against the installed agent, through the CLI with a
 * fake `yolop` script on PATH: install walks versions newest first and names what
 * it skipped, an exact version is refused (exit 4) unless --ignore-engines,
 * update moves only as far as the agent allows, enable refuses without touching
 * settings.toml, an unknown agent blocks nothing, and a hanging or garbage agent
 * neither hangs nor crashes yep-ext (and leaves nothing running).
 */
import { existsSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { fakeAgent, fakeAgentScript, pathWithoutAgent } from '../helpers/fake-agent.js';
import { copyHome } from '../helpers/prepared-home.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { waitGone } from '../helpers/proc.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { hostRuns } from '../helpers/settings-model.js';
import { setupInstall } from '../helpers/setup-install.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;

function manifest(version: string, engines: unknown): string {
  return JSON.stringify({
    name: 'hello',
    version,
    ...(engines === undefined ? {} : { engines }),
    yolop: { protocol_version: '1.0', capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }] },
  });
}
/** fixtureCrate builds each (version, manifest) once per worker: every test publishes the same few. */
const publish = (version: string, range?: unknown, engines: unknown = range === undefined ? undefined : { yolop: range }) =>
  reg.publish({ name: HELLO, vers: version, data: fixtureCrate(HELLO, version, { files: { 'plugin.json': manifest(version, engines) } }) });

const NO_AGENT_PATH = pathWithoutAgent();
const base = (): Record<string, string> => ({ ...home.env, PATH: NO_AGENT_PATH, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
/** The environment with a fake agent printing `version` first on PATH (null: no agent at all). */
function withAgent(version: string | null): Record<string, string> {
  if (version === null) return base();
  const agent = fakeAgent(join(home.root, 'agents', version), version);
  return { ...base(), PATH: `${agent.dir}:${NO_AGENT_PATH}` };
}
const store = () => join(home.configDir, 'extensions');
const lockText = () => readFileSync(join(store(), 'extensions.lock'), 'utf8');
const installedVersion = () => (JSON.parse(readFileSync(join(store(), 'hello', 'plugin.json'), 'utf8')) as { version: string }).version;
/** Whether yolop would load ext:<name>, reading settings.toml as the host does (no file: nothing enabled). */
const hostLoads = (name: string) => {
  const file = join(home.configDir, 'settings.toml');
  return hostRuns(existsSync(file) ? readFileSync(file, 'utf8') : '', name).enabled;
};
const downloads = () => reg.requestsTo('/crates/').map((r) => /\/crates\/[^/]+\/([^/]+)\/download/.exec(r.url)?.[1]);

/** Back to the three versions every test starts from (with no fault and no request logged). */
let restoreRegistry: () => void;
// One registry for the file, put back before each test: what a test publishes or faults is gone for the next.
beforeAll(async () => {
  reg = await startRegistry();
  publish('0.3.0', '>=0.10');
  publish('0.4.0', '>=0.12');
  publish('0.5.0', '>=0.13');
  restoreRegistry = reg.checkpoint();
});
afterAll(async () => {
  await reg.close();
  for (const h of prepared.values()) h.cleanup();
});
/** Homes as a set-up install left them (by agent and specs), each made once for the file. */
const prepared = new Map<string, TempHome>();
/**
 * The test's home as `setupInstall(withAgent(agent), specs, options)` leaves it, against the
 * registry every test starts from: installed once in a home of its own for the file, and
 * copied into each test's home that asks for it (copyHome: the stat signatures recorded for
 * the copy, as for the install's own trees).
 */
async function installedWith(agent: string | null, specs: string[], options: { ignoreEngines?: boolean } = {}): Promise<void> {
  // The index the install resolves against is part of the key: a test that published before
  // asking gets a home installed against what it published, not another test's.
  const index = specs.map((spec) => reg.indexFile(`yolop-extension-${spec.split('@')[0]}`));
  const key = JSON.stringify([agent, specs, options.ignoreEngines ?? false, index]);
  let from = prepared.get(key);
  if (from === undefined) {
    const test = home;
    home = makeTempHome('yep-engines-prepared-');
    try {
      await setupInstall(withAgent(agent), specs, options);
    } finally {
      from = home;
      home = test;
    }
    prepared.set(key, from);
  }
  copyHome(from, home);
}
beforeEach(() => {
  restoreRegistry();
  home = makeTempHome('yep-engines-');
});
afterEach(() => {
  home.cleanup();
});

describe('install resolves to the newest version the agent can run', () => {
  it('agent 0.12.1: `install x` picks 0.4.0 and names 0.5.0 as skipped (each candidate downloaded and verified)', async () => {
    expect(
      NO_AGENT_PATH.split(':').some((d) => existsSync(join(d, 'yolop'))),
      'the test PATH must hold no real yolop',
    ).toBe(false);
    const r = await runCli(['install', 'hello', '--json'], { env: withAgent('0.12.1') });
    expect(r.code, r.stderr).toBe(0);
    const out = jsonOf(r).installed[0];
    expect(out.version).toBe('0.4.0');
    expect(out.engines).toEqual({
      status: 'admits',
      requires: '>=0.12',
      agent: '0.12.1',
      detail: 'needs yolop >=0.12; you have 0.12.1',
      skipped: [
        {
          version: '0.5.0',
          source: expect.objectContaining({ type: 'crate', version: '0.5.0' }),
          requires: '>=0.13',
          reason: '0.5.0 needs yolop >=0.13; you have 0.12.1',
        },
      ],
      ignored: false,
    });
    expect(r.stderr).toContain('hello: 0.5.0 needs yolop >=0.13; you have 0.12.1: skipped.');
    // What the host reads: the lock pins 0.4.0 and the store holds 0.4.0.
    expect(lockText()).toMatch(/crate_name = "yolop-extension-hello"\nversion = "0.4.0"/);
    expect(installedVersion()).toBe('0.4.0');
    expect(downloads()).toEqual(['0.5.0', '0.4.0']);
    expect(readdirNames(join(store(), '.yep-staging'))).toEqual([]);
  });

  it('agent 0.12.1: `install x@0.5.0` exits 4 with the reason and installs nothing; --ignore-engines installs it', async () => {
    const env = withAgent('0.12.1');
    const r = await runCli(['install', 'hello@0.5.0'], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('hello@0.5.0: 0.5.0 needs yolop >=0.13; you have 0.12.1.');
    expect(r.stderr).toContain('--ignore-engines');
    expect(existsSync(join(store(), 'hello'))).toBe(false);
    expect(existsSync(join(store(), 'extensions.lock'))).toBe(false);

    const j = await runCli(['install', 'hello@0.5.0', '--json'], { env });
    expect(j.code).toBe(4);
    expect(jsonOf(j).error).toMatchObject({ code: 'E_ENGINES', details: { agent: '0.12.1', skipped: [{ version: '0.5.0', requires: '>=0.13' }] } });

    const forced = await runCli(['install', 'hello@0.5.0', '--ignore-engines', '--json'], { env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(jsonOf(forced).installed[0].engines).toMatchObject({ status: 'excludes', ignored: true, skipped: [] });
    expect(forced.stderr).toContain('hello 0.5.0 needs yolop >=0.13; you have 0.12.1; installing it anyway (--ignore-engines).');
    expect(installedVersion()).toBe('0.5.0');
    expect(lockText()).toContain('version = "0.5.0"');
  });

  it('--dry-run shows the same choice and skipped versions, and changes nothing', async () => {
    const r = await runCli(['install', 'hello', '--dry-run', '--json'], { env: withAgent('0.12.1') });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).plan[0]).toMatchObject({ version: '0.4.0', action: 'new', engines: { status: 'admits', skipped: [{ version: '0.5.0' }] } });
    expect(existsSync(join(store(), 'hello'))).toBe(false);
  });

  it('no agent on PATH: install picks 0.5.0, says the agent version is unknown, and nothing fails', async () => {
    const r = await runCli(['install', 'hello', '--json'], { env: withAgent(null) });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).installed[0]).toMatchObject({ version: '0.5.0', engines: { status: 'unknown-agent', requires: '>=0.13', agent: null, skipped: [] } });
    expect(r.stderr).toMatch(/hello 0\.5\.0 needs yolop >=0\.13; the installed yolop's version is unknown \(no yolop on PATH\); not checked/);
    expect(installedVersion()).toBe('0.5.0');
    expect(downloads()).toEqual(['0.5.0']);
  });

  it('YOLOP_BIN names the agent (it wins over PATH)', async () => {
    const named = fakeAgent(join(home.root, 'named'), '0.10.2');
    const r = await runCli(['install', 'hello', '--json'], { env: { ...withAgent('0.13.0'), YOLOP_BIN: named.bin } });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).installed[0]).toMatchObject({ version: '0.3.0', engines: { agent: '0.10.2', skipped: [{ version: '0.5.0' }, { version: '0.4.0' }] } });
    // The store holds what the report says: 0.3.0 installed, and pinned in the lock.
    expect(installedVersion()).toBe('0.3.0');
    expect(readFileSync(join(store(), 'extensions.lock'), 'utf8')).toMatch(/version = "0\.3\.0"/);
  });

  it('the walk is capped at 5 downloads and says so', async () => {
    for (const v of ['0.6.0', '0.7.0', '0.8.0', '0.9.0', '0.10.0']) publish(v, '>=9');
    const r = await runCli(['install', 'hello@>=0.4', '--json'], { env: withAgent('0.12.1') });
    expect(r.code).toBe(4);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_ENGINES');
    expect(err.message).toMatch(
      /^No version of hello@>=0\.4 that yep-ext tried supports yolop 0\.12\.1 \(tried the 5 newest of 7 candidates\): 0\.10\.0 needs yolop >=9; you have 0\.12\.1; /,
    );
    expect(err.details.skipped.map((s: { version: string }) => s.version)).toEqual(['0.10.0', '0.9.0', '0.8.0', '0.7.0', '0.6.0']);
    expect(downloads()).toEqual(['0.10.0', '0.9.0', '0.8.0', '0.7.0', '0.6.0']);
    expect(existsSync(join(store(), 'hello'))).toBe(false);
  });

  it('a malformed range is a warning, not a refusal and not a crash (install, list)', async () => {
    publish('0.6.0', 'not a range');
    publish('0.7.0', undefined, 'yolop>=1');
    const env = withAgent('0.12.1');
    const r = await runCli(['install', 'hello', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).installed[0]).toMatchObject({ version: '0.7.0', engines: { status: 'malformed', requires: 'yolop>=1' } });
    expect(r.stderr).toMatch(/warning: hello 0\.7\.0: "engines" is "yolop>=1", not an object \(ignored\)/);
    const list = jsonOf(await runCli(['list', '--json'], { env }));
    expect(list.extensions[0].engines.status).toBe('malformed');
    expect(list.extensions[0].problems).toEqual(['engines: "engines" is "yolop>=1", not an object (ignored)']);
    const pinned = await runCli(['install', 'hello@0.6.0', '--yes'], { env });
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stderr).toContain('hello 0.6.0: "engines.yolop" "not a range" is not a version range (ignored)');
  });
});

describe('git and path sources have one candidate', () => {
  it('a path package whose range excludes the agent is refused (exit 4, nothing placed) unless --ignore-engines', async () => {
    const dir = writePackage(join(home.root, 'src', 'local'), { name: 'local', version: '2.0.0' });
    const m = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'));
    writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ ...m, engines: { yolop: '^0.13.0' } }));
    const env = withAgent('0.12.1');
    const r = await runCli(['install', dir], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('2.0.0 needs yolop ^0.13.0; you have 0.12.1');
    expect(existsSync(join(store(), 'local'))).toBe(false);
    const ok = await runCli(['install', dir, '--ignore-engines'], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(store(), 'local', 'plugin.json'))).toBe(true);
    const fine = await runCli(['install', dir, '--json'], { env: withAgent('0.13.5') });
    expect(fine.code, fine.stderr).toBe(0);
    expect(jsonOf(fine).installed[0].engines).toMatchObject({ status: 'admits', agent: '0.13.5' });
  });
});

describe('update moves only as far as the agent allows', () => {
  it('0.3.0 -> 0.4.0 with agent 0.12.1 (0.5.0 skipped), held there, then 0.5.0 with agent 0.13.0', async () => {
    await installedWith('0.10.0', ['hello']);
    expect(installedVersion()).toBe('0.3.0');

    const up = await runCli(['update', 'hello', '--json'], { env: withAgent('0.12.1') });
    expect(up.code, up.stderr).toBe(0);
    expect(jsonOf(up).updates[0]).toMatchObject({
      status: 'updated',
      to: { version: '0.4.0' },
      engines: { status: 'admits', skipped: [{ version: '0.5.0', reason: '0.5.0 needs yolop >=0.13; you have 0.12.1' }] },
    });
    expect(installedVersion()).toBe('0.4.0');

    const lock = lockText();
    const held = await runCli(['update', 'hello'], { env: withAgent('0.12.1') });
    expect(held.code, held.stderr).toBe(0);
    expect(held.stdout).toContain('held hello stays at 0.4.0: 0.5.0 needs yolop >=0.13; you have 0.12.1 (upgrade yolop, or pass --ignore-engines).');
    expect(lockText()).toBe(lock);
    expect(jsonOf(await runCli(['update', 'hello', '--json'], { env: withAgent('0.12.1') })).updates[0]).toMatchObject({
      status: 'held',
      engines: { skipped: [{ version: '0.5.0' }] },
    });

    const moved = await runCli(['update', 'hello', '--json'], { env: withAgent('0.13.0') });
    expect(moved.code, moved.stderr).toBe(0);
    expect(jsonOf(moved).updates[0]).toMatchObject({
      status: 'updated',
      to: { version: '0.5.0' },
      engines: { status: 'admits', agent: '0.13.0', skipped: [] },
    });
    expect(installedVersion()).toBe('0.5.0');
    expect(lockText()).toContain('version = "0.5.0"');
  });

  it('update --ignore-engines takes the newest', async () => {
    await installedWith('0.12.1', ['hello']);
    const r = await runCli(['update', 'hello', '--ignore-engines', '--json'], { env: withAgent('0.12.1') });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).updates[0]).toMatchObject({ status: 'updated', to: { version: '0.5.0' }, engines: { status: 'excludes', ignored: true } });
    expect(r.stderr).toContain('hello 0.5.0 needs yolop >=0.13; you have 0.12.1; updating to it anyway (--ignore-engines).');
    expect(installedVersion()).toBe('0.5.0');
  });
});

describe('outdated: newer, but needs a newer yolop', () => {
  it('agent 0.12.1 at 0.3.0: 0.4.0 is the newest runnable, 0.5.0 needs a newer yolop; downloads verified and cached; held does not fail --exit-code', async () => {
    await installedWith('0.10.0', ['hello']);
    const lock = lockText();
    // A download cache of its own: the install above put 0.4.0 and 0.5.0 in the default one.
    const env = { ...withAgent('0.12.1'), YEP_EXT_CACHE_DIR: join(home.root, 'dl-cache') };
    const before = downloads().length;

    const r = await runCli(['outdated', '--json', '--exit-code'], { env });
    // 0.4.0 can be taken: outdated (docs/exit-codes.md).
    expect(r.code, r.stderr).toBe(14);
    const row = jsonOf(r).outdated[0];
    // wanted is where `update` moves: the newest the requirement selects that yolop can run.
    expect(row).toMatchObject({ name: 'hello', current: '0.3.0', wanted: '0.4.0', latest: '0.5.0', status: 'update', hint: 'yep-ext update hello' });
    expect(row.newer_engines).toEqual({
      status: 'checked',
      agent: '0.12.1',
      runnable: '0.4.0',
      runnable_in_requirement: '0.4.0',
      needs_newer_agent: [{ version: '0.5.0', requires: '>=0.13', reason: '0.5.0 needs yolop >=0.13; you have 0.12.1' }],
      tried: 2,
      candidates: 2,
      detail: 'the newest yolop 0.12.1 can run is 0.4.0; 0.5.0 needs yolop >=0.13; you have 0.12.1',
    });
    // Newest first, stopping at the first the agent can run.
    expect(downloads().slice(before)).toEqual(['0.5.0', '0.4.0']);
    // Only read: the lock, the installed tree and the staging area are as they were.
    expect(lockText()).toBe(lock);
    expect(installedVersion()).toBe('0.3.0');
    expect(readdirNames(join(store(), '.yep-staging'))).toEqual([]);

    const human = await runCli(['outdated'], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('hello\t0.3.0\t0.4.0\t0.5.0\tupdate: `yep-ext update hello` (to 0.4.0: 0.5.0 needs yolop >=0.13; you have 0.12.1)');
    // The shared download cache: the second and third runs downloaded nothing.
    expect(downloads().slice(before)).toEqual(['0.5.0', '0.4.0']);

    // At 0.4.0 only 0.5.0 is newer, and yolop 0.12.1 cannot run it: held, not outdated.
    expect((await runCli(['update', 'hello'], { env })).code).toBe(0);
    expect(installedVersion()).toBe('0.4.0');
    const held = await runCli(['outdated', '--json', '--exit-code'], { env });
    expect(held.code, held.stderr).toBe(0);
    expect(jsonOf(held)).toMatchObject({
      outdated_count: 0,
      outdated: [
        {
          status: 'held',
          hint: null,
          newer_engines: {
            status: 'checked',
            runnable: null,
            runnable_in_requirement: null,
            needs_newer_agent: [{ version: '0.5.0', requires: '>=0.13' }],
            tried: 1,
            candidates: 1,
          },
        },
      ],
    });
    const heldText = await runCli(['outdated', '--exit-code'], { env });
    expect(heldText.code).toBe(0);
    expect(heldText.stdout).toContain(
      'hello\t0.4.0\t0.4.0\t0.5.0\theld: no newer version runs on yolop 0.12.1: 0.5.0 needs yolop >=0.13; you have 0.12.1 (upgrade yolop)',
    );
    expect(downloads().slice(before)).toEqual(['0.5.0', '0.4.0']);

    // A newer agent: 0.5.0 is an update again.
    const newer = await runCli(['outdated', '--json', '--exit-code'], { env: { ...env, PATH: withAgent('0.13.0').PATH! } });
    expect(newer.code).toBe(14);
    expect(jsonOf(newer).outdated[0]).toMatchObject({ status: 'update', newer_engines: { runnable: '0.5.0', needs_newer_agent: [] } });
  });

  it('no agent: nothing downloaded, the row says the agent version is unknown, and the index decides', async () => {
    await installedWith(null, ['hello@0.3.0']);
    const before = downloads().length;
    const r = await runCli(['outdated', '--json', '--exit-code'], { env: withAgent(null) });
    expect(r.code, r.stderr).toBe(14);
    expect(jsonOf(r).outdated[0]).toMatchObject({
      status: 'beyond',
      newer_engines: {
        status: 'unknown-agent',
        agent: null,
        runnable: null,
        tried: 0,
        candidates: 2,
        detail: expect.stringContaining("the installed yolop's version is unknown (no yolop on PATH)"),
      },
    });
    expect(downloads()).toHaveLength(before);
    expect((await runCli(['outdated'], { env: withAgent(null) })).stdout).toContain('newer versions not checked against yolop: its version is unknown');
  });

  it('a download that does not match the registry checksum is refused: nothing is read from it, the row keeps the index answer and says why', async () => {
    await installedWith('0.12.1', ['hello@0.3.0']);
    reg.fault(/\/0\.5\.0\/download/, { kind: 'corrupt' });
    const r = await runCli(['outdated', '--json'], { env: withAgent('0.12.1') });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).outdated[0]).toMatchObject({
      status: 'beyond',
      newer_engines: { status: 'failed', runnable: null, needs_newer_agent: [], detail: expect.stringContaining('does not match the registry checksum') },
    });
    expect(r.stderr).toContain("hello: newer versions' engines.yolop not checked");
    expect(readdirNames(join(store(), '.yep-staging'))).toEqual([]);
  });

  it('a range read once is remembered by the registry cksum: a later run fetches nothing (not even from the download cache), the first says what it fetched, a corrupted memo is a miss', async () => {
    await installedWith('0.10.0', ['hello@0.3.0']);
    const cacheDir = join(home.root, 'dl-cache');
    const env = { ...withAgent('0.12.1'), YEP_EXT_CACHE_DIR: cacheDir };
    const expected = { status: 'checked', runnable: '0.4.0', needs_newer_agent: [{ version: '0.5.0', requires: '>=0.13' }], tried: 2, candidates: 2 };
    const before = downloads().length;

    const first = await runCli(['outdated', '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(jsonOf(first).outdated[0].newer_engines).toMatchObject(expected);
    expect(downloads().slice(before)).toEqual(['0.5.0', '0.4.0']);
    expect(first.stderr).toContain('hello: fetched 0.5.0, 0.4.0 (verified, nothing installed) to read engines.yolop');

    // The .crate files leave the download cache: only the remembered ranges are left.
    const cacache = (await import('cacache')).default;
    const crateKeys = Object.keys(await cacache.ls(cacheDir)).filter((k) => k.startsWith('yep-ext:sha256:'));
    expect(crateKeys.length).toBeGreaterThanOrEqual(2);
    for (const k of crateKeys) {
      const info = await cacache.get.info(cacheDir, k);
      await cacache.rm.entry(cacheDir, k);
      await cacache.rm.content(cacheDir, info!.integrity);
    }
    const memoKeys = Object.keys(await cacache.ls(cacheDir)).filter((k) => k.startsWith('yep-ext:engines:'));
    expect(memoKeys).toHaveLength(2);

    const second = await runCli(['outdated', '--json', '--verbose'], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(jsonOf(second).outdated[0].newer_engines).toMatchObject(expected);
    expect(downloads().slice(before)).toEqual(['0.5.0', '0.4.0']);
    expect(second.stderr).not.toContain('hello: fetched');
    expect(second.stderr).toContain('hello: engines.yolop of 0.5.0, 0.4.0 known from an earlier run (nothing fetched)');
    expect(readdirNames(join(store(), '.yep-staging'))).toEqual([]);

    // A memo whose bytes changed no longer matches its integrity: a miss, so fetched and verified again.
    for (const k of memoKeys) {
      const info = await cacache.get.info(cacheDir, k);
      writeFileSync(info!.path, JSON.stringify({ format: 1, engines: { yolop: '>=0.1' } }));
    }
    const third = await runCli(['outdated', '--json'], { env });
    expect(third.code, third.stderr).toBe(0);
    expect(jsonOf(third).outdated[0].newer_engines).toMatchObject(expected);
    expect(downloads().slice(before)).toEqual(['0.5.0', '0.4.0', '0.5.0', '0.4.0']);
  });

  it('one run fetches at most 20 packages for the whole store: the walk past it is "failed" (budget), named once on stderr, and the next run finishes from what was remembered', async () => {
    const names = ['b1', 'b2', 'b3', 'b4', 'b5'];
    for (const n of names) {
      const crate = `yolop-extension-${n}`;
      const m = (v: string, range?: string) =>
        JSON.stringify({
          name: n,
          version: v,
          ...(range ? { engines: { yolop: range } } : {}),
          yolop: { protocol_version: '1.0', capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }] },
        });
      reg.publish({ name: crate, vers: '0.1.0', data: fixtureCrate(HELLO, '0.1.0', { publishAs: crate, files: { 'plugin.json': m('0.1.0') } }) });
      // Five newer versions, none runnable: each walk needs its full five fetches.
      for (const v of ['0.2.0', '0.3.0', '0.4.0', '0.5.0', '0.6.0'])
        reg.publish({ name: crate, vers: v, data: fixtureCrate(HELLO, v, { publishAs: crate, files: { 'plugin.json': m(v, '>=9') } }) });
    }
    const env = withAgent('0.12.1');
    const install = await runCli(['install', ...names.map((n) => `${n}@=0.1.0`)], { env });
    expect(install.code, install.stderr).toBe(0);
    const before = downloads().length;

    const first = await runCli(['outdated', '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(downloads().length - before).toBe(20);
    const rows = jsonOf(first).outdated as Array<{ name: string; status: string; newer_engines: { status: string; tried: number; detail: string } }>;
    const stopped = rows.filter((r) => r.newer_engines.status === 'failed');
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.newer_engines.detail).toContain("this run's budget of 20 downloads is spent");
    expect(stopped[0]!.status).toBe('beyond');
    expect(rows.filter((r) => r.newer_engines.status === 'checked').map((r) => r.newer_engines.tried)).toEqual([5, 5, 5, 5]);
    expect(first.stderr).toContain(`engines.yolop of ${stopped[0]!.name} not checked: this run's download budget is spent`);
    expect(readdirNames(join(store(), '.yep-staging'))).toEqual([]);

    const second = await runCli(['outdated', '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(downloads().length - before).toBe(25);
    const done = jsonOf(second).outdated as typeof rows;
    expect(done.map((r) => [r.newer_engines.status, r.newer_engines.tried, r.status])).toEqual(names.map(() => ['checked', 5, 'held']));
    expect(second.stderr).not.toContain('budget');
  });

  it('the walk is capped at 5 downloads and says so', async () => {
    await installedWith('0.12.1', ['hello@0.3.0']);
    for (const v of ['0.6.0', '0.7.0', '0.8.0', '0.9.0', '0.10.0']) publish(v, '>=9');
    const before = downloads().length;
    const r = await runCli(['outdated', '--json', '--exit-code'], { env: withAgent('0.12.1') });
    expect(r.code, r.stderr).toBe(0);
    const n = jsonOf(r).outdated[0].newer_engines;
    expect(n).toMatchObject({ status: 'checked', runnable: null, tried: 5, candidates: 7 });
    expect(n.detail).toMatch(/^no newer version runs on yolop 0\.12\.1 \(tried the 5 newest of 7\): 0\.10\.0 needs yolop >=9/);
    expect(downloads().slice(before)).toEqual(['0.10.0', '0.9.0', '0.8.0', '0.7.0', '0.6.0']);
  });
});

describe('verify lists an engines mismatch', () => {
  const verifyJson = async (env: Record<string, string>) => {
    const r = await runCli(['verify', '--json'], { env });
    const doc = jsonOf(r);
    return { code: r.code, doc, report: r.code === 0 ? doc : doc.error.details };
  };

  it('not enabled: a warning (exit 0); enabled: a problem (exit 4, E_ENGINES); with damage too: exit 5; a newer or unknown agent: nothing', async () => {
    await installedWith('0.12.1', ['hello@0.5.0'], { ignoreEngines: true });
    const env = withAgent('0.12.1');
    const reason = 'engines: 0.5.0 needs yolop >=0.13; you have 0.12.1';

    // Not enabled (as the host reads settings.toml: no entry): listed, not failing.
    expect(existsSync(join(home.configDir, 'settings.toml'))).toBe(false);
    expect(hostLoads('hello')).toBe(false);
    const off = await verifyJson(env);
    expect(off.code).toBe(0);
    expect(off.report.extensions[0]).toMatchObject({
      name: 'hello',
      ok: true,
      problems: [],
      engines: { status: 'excludes', requires: '>=0.13', agent: '0.12.1' },
      warnings: [{ kind: 'engines', message: `${reason} (not enabled; \`yep-ext enable\` refuses it)`, files: ['plugin.json'] }],
    });
    const offText = await runCli(['verify'], { env });
    expect(offText.code).toBe(0);
    expect(offText.stdout).toContain(`warning: ${reason} (not enabled`);

    // Enabled: yolop would load it: a problem, exit 4.
    expect((await runCli(['enable', 'hello', '--ignore-engines'], { env })).code).toBe(0);
    expect(readFileSync(join(home.configDir, 'settings.toml'), 'utf8')).toContain('ref = "ext:hello"');
    expect(hostLoads('hello')).toBe(true);
    const on = await verifyJson(env);
    expect(on.code).toBe(4);
    expect(on.doc.error.code).toBe('E_ENGINES');
    expect(on.report.extensions[0]).toMatchObject({
      name: 'hello',
      ok: false,
      warnings: [],
      problems: [{ kind: 'engines', message: expect.stringContaining(`${reason}, and it is enabled: yolop cannot run it`) }],
    });
    const onText = await runCli(['verify'], { env });
    expect(onText.code).toBe(4);
    expect(onText.stderr).toContain(`hello: ${reason}, and it is enabled`);

    // An integrity problem as well: exit 5, both listed.
    writeFileSync(join(store(), 'hello', 'added.txt'), 'x\n');
    const both = await verifyJson(env);
    expect(both.code).toBe(5);
    expect(both.report.extensions[0].problems.map((p: { kind: string }) => p.kind).sort()).toEqual(['content', 'engines']);
    rmSync(join(store(), 'hello', 'added.txt'));

    // An agent the range admits, or none at all: nothing listed.
    const admitted = await verifyJson(withAgent('0.13.0'));
    expect(admitted.code).toBe(0);
    expect(admitted.report.extensions[0]).toMatchObject({ ok: true, problems: [], warnings: [], engines: { status: 'admits' } });
    const unknown = await verifyJson(withAgent(null));
    expect(unknown.code).toBe(0);
    expect(unknown.report.extensions[0]).toMatchObject({ ok: true, problems: [], warnings: [], engines: { status: 'unknown-agent' } });
  });
});

describe('enable refused over an extension settings.toml already turns on', () => {
  it('the engines refusal does not say "it was not enabled": it stays enabled, and disable is named', async () => {
    await installedWith('0.12.1', ['hello@0.5.0'], { ignoreEngines: true });
    const settings = join(home.configDir, 'settings.toml');
    const text = '[[capabilities]]\nref = "ext:hello"\n';
    writeFileSync(settings, text);
    expect(hostLoads('hello')).toBe(true);
    const r = await runCli(['enable', 'hello'], { env: withAgent('0.12.1') });
    expect(r.code).toBe(4);
    expect(r.stderr).not.toContain('it was not enabled');
    expect(r.stderr).toContain(
      'hello 0.5.0 needs yolop >=0.13; you have 0.12.1: yolop cannot run it, so this command changed nothing. hello stays enabled: settings.toml already turns it on, and yolop loads it.',
    );
    expect(r.stderr).toContain('`yep-ext disable hello` turns it off.');
    expect(readFileSync(settings, 'utf8')).toBe(text);
    expect(hostLoads('hello')).toBe(true);
    const j = await runCli(['enable', 'hello', '--json'], { env: withAgent('0.12.1') });
    expect(jsonOf(j).error).toMatchObject({ code: 'E_ENGINES', details: { enabled: true, engines: { status: 'excludes' } } });
  });
});

describe('enable refuses what the agent cannot run', () => {
  it('exit 4 and settings.toml byte-identical; --ignore-engines enables; a newer agent enables', async () => {
    await installedWith('0.12.1', ['hello@0.5.0'], { ignoreEngines: true });
    const settings = join(home.configDir, 'settings.toml');
    const text = '# mine\n[[capabilities]]\nref = "ext:other"\n\n[[capabilities]]\nref = "ext:hello"\nenabled = false\n';
    writeFileSync(settings, text);
    const bytes = readFileSync(settings);
    const configFiles = readdirSync(home.configDir).sort();
    expect(hostLoads('hello')).toBe(false);
    expect(hostLoads('other')).toBe(true);
    /** The refusal's claim on disk: the same bytes, the same files beside it (no temp left), the host loads nothing new. */
    const unchanged = () => {
      expect(readFileSync(settings).equals(bytes), 'settings.toml byte-identical').toBe(true);
      expect(readdirSync(home.configDir).sort()).toEqual(configFiles);
      expect(hostLoads('hello')).toBe(false);
      expect(hostLoads('other')).toBe(true);
    };

    const r = await runCli(['enable', 'hello'], { env: withAgent('0.12.1') });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('hello 0.5.0 needs yolop >=0.13; you have 0.12.1: yolop cannot run it, so it was not enabled.');
    expect(readFileSync(settings, 'utf8')).toBe(text);
    unchanged();
    const j = await runCli(['enable', 'hello', '--json'], { env: withAgent('0.12.1') });
    expect(jsonOf(j).error).toMatchObject({ code: 'E_ENGINES', details: { engines: { status: 'excludes', requires: '>=0.13', agent: '0.12.1' } } });
    expect(readFileSync(settings, 'utf8')).toBe(text);
    unchanged();

    const forced = await runCli(['enable', 'hello', '--ignore-engines', '--json'], { env: withAgent('0.12.1') });
    expect(forced.code, forced.stderr).toBe(0);
    expect(jsonOf(forced)).toMatchObject({ name: 'hello', enabled: true, engines: { status: 'excludes' } });
    expect(readFileSync(settings, 'utf8')).toMatch(/ref = "ext:hello"\n*$/);
    expect(hostLoads('hello')).toBe(true);
    expect(hostLoads('other')).toBe(true);
    expect(readFileSync(settings, 'utf8')).toMatch(/^# mine\n/);

    writeFileSync(settings, text);
    expect(hostLoads('hello')).toBe(false);
    const ok = await runCli(['enable', 'hello', '--json'], { env: withAgent('0.13.0') });
    expect(ok.code, ok.stderr).toBe(0);
    expect(jsonOf(ok).engines).toMatchObject({ status: 'admits', agent: '0.13.0' });
    expect(hostLoads('hello')).toBe(true);
    expect(hostLoads('other')).toBe(true);
  });

  it('an unknown agent does not block enable', async () => {
    await installedWith(null, ['hello']);
    const r = await runCli(['enable', 'hello'], { env: withAgent(null) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("the installed yolop's version is unknown");
    expect(readFileSync(join(home.configDir, 'settings.toml'), 'utf8')).toContain('ref = "ext:hello"');
    expect(hostLoads('hello')).toBe(true);
  });
});

describe('install --frozen, list and doctor report it', () => {
  it('--frozen installs what the lock pins and warns; list shows the exclusion', async () => {
    await installedWith('0.12.1', ['hello@0.5.0'], { ignoreEngines: true });
    const lockfile = join(home.root, 'project.lock');
    writeFileSync(lockfile, lockText());
    const fresh = makeTempHome('yep-engines-frozen-');
    try {
      const env = { ...withAgent('0.12.1'), YOLOP_CONFIG_DIR: fresh.configDir, HOME: fresh.env.HOME! };
      const r = await runCli(['install', '--frozen', '--lockfile', lockfile, '--json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r)).toEqual({
        frozen: [
          { name: 'hello', status: 'installed', reason: null, engines: expect.objectContaining({ status: 'excludes', requires: '>=0.13', agent: '0.12.1' }) },
        ],
        enabled: null,
      });
      expect(r.stderr).toContain('hello 0.5.0 needs yolop >=0.13; you have 0.12.1: installed as the lock pins it');
      expect(existsSync(join(fresh.configDir, 'extensions', 'hello', 'plugin.json'))).toBe(true);
      // Warm (the entry already in place: the warm runner, which loads the engines check
      // only for a manifest that declares a range): the same verdict and warning.
      const warm = await runCli(['install', '--frozen', '--lockfile', lockfile, '--json'], { env });
      expect(warm.code, warm.stderr).toBe(0);
      expect(jsonOf(warm)).toEqual({
        frozen: [
          {
            name: 'hello',
            status: 'skipped',
            reason: 'already installed with the locked hash',
            engines: expect.objectContaining({ status: 'excludes', requires: '>=0.13', agent: '0.12.1' }),
          },
        ],
        enabled: null,
      });
      expect(warm.stderr).toContain('hello 0.5.0 needs yolop >=0.13; you have 0.12.1: installed as the lock pins it');

      const list = await runCli(['list', '--json'], { env });
      expect(jsonOf(list).extensions[0]).toMatchObject({
        name: 'hello',
        engines: { status: 'excludes', requires: '>=0.13', agent: '0.12.1' },
        problems: ['engines: needs yolop >=0.13; you have 0.12.1 (yolop cannot run it)'],
      });
      expect((await runCli(['list'], { env })).stdout).toContain('engines: needs yolop >=0.13; you have 0.12.1 (yolop cannot run it)');
      const admitted = await runCli(['list', '--json'], { env: { ...env, PATH: withAgent('0.13.0').PATH! } });
      expect(jsonOf(admitted).extensions[0]).toMatchObject({ engines: { status: 'admits', agent: '0.13.0' }, problems: [] });
    } finally {
      fresh.cleanup();
    }
  });

  it('list asks the agent once per binary (cached by path and mtime), and again after it changes', async () => {
    await installedWith(null, ['hello']);
    const agent = fakeAgent(join(home.root, 'cached'), '0.12.1');
    const env = { ...base(), PATH: `${agent.dir}:${NO_AGENT_PATH}` };
    for (let i = 0; i < 3; i++) {
      const r = await runCli(['list', '--json'], { env });
      expect(jsonOf(r).extensions[0].engines).toMatchObject({ status: 'excludes', agent: '0.12.1' });
    }
    expect(agent.runs()).toBe(1);
    const cache = JSON.parse(readFileSync(join(store(), '.yep-cache', 'agent-version.json'), 'utf8'));
    expect(cache.entries).toEqual([expect.objectContaining({ path: agent.bin, version: '0.12.1' })]);

    // An upgrade in place (same path): the new mtime is a miss.
    fakeAgent(agent.dir, '0.13.1');
    const later = new Date(Date.now() + 5000);
    utimesSync(agent.bin, later, later);
    const r = await runCli(['list', '--json'], { env });
    expect(jsonOf(r).extensions[0].engines).toMatchObject({ status: 'admits', agent: '0.13.1' });
    expect(agent.runs()).toBe(2);
  });

  it('doctor: fail when the range excludes the agent, pass when it admits, warn when the agent is unknown', async () => {
    // examples/echo-node (passes every other check) with a range added.
    const m = JSON.parse(readFileSync(join(import.meta.dirname, '../../examples/echo-node/plugin.json'), 'utf8'));
    const pkg = writePackage(join(home.root, 'echo'), { name: 'echo-node' });
    writeFileSync(join(pkg, 'plugin.json'), JSON.stringify({ ...m, engines: { yolop: '>=0.13' } }));
    writeFileSync(join(pkg, 'bin', 'echo-node'), readFileSync(join(import.meta.dirname, '../../examples/echo-node/bin/echo-node')), { mode: 0o755 });
    const engines = async (version: string | null) => {
      const r = await runCli(['doctor', pkg, '--json', '--timeout', '10'], { env: withAgent(version) });
      return { code: r.code, check: (jsonOf(r).checks as { name: string }[]).find((c) => c.name === 'engines') };
    };
    expect(await engines('0.12.1')).toEqual({
      code: 9,
      check: { name: 'engines', status: 'fail', detail: expect.stringContaining('needs yolop >=0.13; you have 0.12.1: yolop cannot run this version') },
    });
    expect(await engines('0.13.0')).toEqual({ code: 0, check: { name: 'engines', status: 'pass', detail: 'needs yolop >=0.13; you have 0.13.0' } });
    expect(await engines(null)).toEqual({
      code: 0,
      check: { name: 'engines', status: 'warn', detail: expect.stringContaining("the installed yolop's version is unknown (no yolop on PATH)") },
    });
  });
});

describe('a broken agent is "unknown", never a hang or a crash', () => {
  /**
   * The processes of `pids` still alive once the kill has had time to land: a SIGKILLed
   * process is gone when the kernel next schedules it, which on a loaded machine can be after
   * the command returned. One that was never signalled sleeps for 300 s, far past the wait.
   */
  const aliveAfterKill = async (pids: number[]): Promise<number[]> => {
    const gone = await Promise.all(pids.map((pid) => waitGone(pid, 5000)));
    return pids.filter((_, i) => !gone[i]);
  };

  it('a hanging agent (and the child it forked) is killed after the timeout; install goes on', async () => {
    const pids = join(home.root, 'hang-pids');
    const agent = fakeAgentScript(join(home.root, 'hang'), `sleep 300 &\necho $! >> '${pids}'\necho $$ >> '${pids}'\nexec sleep 300`);
    const t0 = Date.now();
    const r = await runCli(['install', 'hello', '--json'], {
      env: { ...base(), PATH: `${agent.dir}:${NO_AGENT_PATH}`, YEP_EXT_TEST_AGENT_TIMEOUT_MS: '700' },
      timeoutMs: 30_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(jsonOf(r).installed[0]).toMatchObject({ version: '0.5.0', engines: { status: 'unknown-agent' } });
    expect(r.stderr).toMatch(/--version` did not answer within 700 ms/);
    const started = readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number);
    expect(started).toHaveLength(2);
    expect(await aliveAfterKill(started)).toEqual([]);
  });

  it('an agent that prints its version and leaves a background child holding the pipes: version read, child killed', async () => {
    const pids = join(home.root, 'daemon-pids');
    const agent = fakeAgentScript(join(home.root, 'daemon'), `echo 'yolop 0.12.1'\nsleep 300 &\necho $! >> '${pids}'\nexit 0`);
    const t0 = Date.now();
    const r = await runCli(['install', 'hello', '--json'], { env: { ...base(), PATH: `${agent.dir}:${NO_AGENT_PATH}` }, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(jsonOf(r).installed[0]).toMatchObject({ version: '0.4.0', engines: { status: 'admits', agent: '0.12.1' } });
    const started = readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number);
    expect(started).toHaveLength(1);
    expect(await aliveAfterKill(started)).toEqual([]);
  });

  it.each([
    ['endless output', 'exec yes "yolop 0.12.1 garbage"', /printed more than 4096 bytes/],
    ['binary garbage', 'head -c 3000 /dev/urandom; exit 0', /printed no version number|printed more than/],
    ['no version in it', 'echo "yolop (development build)"; exit 0', /printed no version number/],
    ['a failing exit status', 'echo "yolop 0.12.1"; exit 3', /exited with status 3/],
    ['a crash by signal', 'kill -SEGV $$', /was killed by SIGSEGV/],
  ])('%s: unknown, and the install goes on', async (_label, body, reason) => {
    const agent = fakeAgentScript(join(home.root, 'bad'), body);
    const r = await runCli(['install', 'hello', '--json'], { env: { ...base(), PATH: `${agent.dir}:${NO_AGENT_PATH}` }, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).installed[0]).toMatchObject({ version: '0.5.0', engines: { status: 'unknown-agent', agent: null } });
    expect(r.stderr).toMatch(reason);
  });

  it("a relative PATH entry is never searched (a cloned repo's ./yolop does not run)", async () => {
    const cwd = join(home.root, 'repo');
    const trap = fakeAgent(cwd, '0.1.0');
    const r = await runCli(['install', 'hello', '--json'], { env: { ...base(), PATH: `.:${NO_AGENT_PATH}` }, cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(trap.runs()).toBe(0);
    expect(jsonOf(r).installed[0].engines.status).toBe('unknown-agent');
  });
});

function readdirNames(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}
