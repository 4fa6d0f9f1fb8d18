/**
 * kill -9 at every named point of `update` and `remove`, then the next command
 * that takes the installer lock recovers to entirely-before or entirely-after
 * (store, lock, grants, settings.toml, connections.toml), and repeating the
 * command ends exactly like a clean run. See kill-install.test.ts for install.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BYSTANDER, faultCrate, killAt, snapshot, stagingLeft, type StateSnapshot, staleLock } from '../helpers/faults.js';
import { copyHome } from '../helpers/prepared-home.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const FAST = { YEP_EXT_HTTP_TIMEOUT_MS: '10000', YEP_EXT_HTTP_RETRIES: '1', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '20' };
const homes: TempHome[] = [];
const registries: TestRegistry[] = [];

afterAll(async () => {
  for (const h of homes) h.cleanup();
  for (const r of registries) await r.close();
});

function newHome(): TempHome {
  const h = makeTempHome('yep-fault-');
  homes.push(h);
  return h;
}

async function ok(h: TempHome, reg: TestRegistry, args: string[], input?: string): Promise<void> {
  const r = await runCli(args, { env: { ...h.env, ...FAST, YEP_EXT_INDEX: reg.indexUrl }, ...(input !== undefined ? { input } : {}) });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/**
 * Kill at `point`, run `probe` (any command that takes the installer lock, which
 * recovers), check before-or-after, then finish with `op` and compare with `after`.
 */
async function crashAndRecover(
  h: TempHome,
  reg: TestRegistry,
  op: string[],
  point: string,
  before: StateSnapshot,
  after: StateSnapshot,
  probe: { args: string[]; codes: number[] } = { args: ['remove', 'not-installed'], codes: [3] },
): Promise<void> {
  const env = { ...h.env, ...FAST, YEP_EXT_INDEX: reg.indexUrl };
  expect(snapshot(h)).toEqual(before);
  await killAt(point, op, env, join(h.root, 'paused'));
  staleLock(h); // the killed holder's lock, as 5 s later
  const probed = await runCli(probe.args, { env });
  expect(probe.codes, probed.stderr).toContain(probed.code);
  // Only a crash inside a transaction (journal written) has something to report.
  if (/^(place|remove):/.test(point)) expect(probed.stderr).toMatch(/Recovered: (completed|rolled back) an interrupted/);
  const recovered = snapshot(h);
  expect([before, after], `state after recovery at ${point}:\n${JSON.stringify(recovered, null, 1)}`).toContainEqual(recovered);
  expect(stagingLeft(h)).toEqual([]);
  const again = await runCli(op, { env });
  // Repeating a completed remove is "not installed" (3); anything else must succeed.
  expect([0, 3], again.stderr).toContain(again.code);
  expect(snapshot(h)).toEqual(after);
  expect(stagingLeft(h)).toEqual([]);
  const list = jsonOf(await runCli(['list', '--json'], { env }));
  expect(list.extensions.flatMap((e: { problems: string[] }) => e.problems)).toEqual([]);
}

/**
 * Six crash-and-recover sequences at once (a handful of CLI runs each; the stale lock set back,
 * not waited for) share 2 cores: on a loaded machine each may run past the config's 60 s per
 * test, though alone one is well inside it.
 */
const CONCURRENT_TIMEOUT = 180_000;

const UPDATE_POINTS = ['download:mid', 'unpack:mid', 'install:after-fetch', 'place:after-move-old', 'place:before-lock', 'place:after-lock'];

describe('kill -9 during update --all (1.0.0 -> 1.1.0 with the same grant)', () => {
  // One registry and one twin for every point: the twin installs 1.0.0 before 1.1.0 is published,
  // each point's home starts as a copy of it (config dir and HOME), and the test checks that its
  // home starts in the twin's "before" state.
  let reg: TestRegistry;
  let before: StateSnapshot;
  let after: StateSnapshot;
  /** The twin's home as its set-up left it. */
  let prepared: TempHome;

  beforeAll(async () => {
    reg = await startRegistry();
    registries.push(reg);
    reg.publish({ name: 'yolop-extension-keep', vers: '1.0.0', data: faultCrate('keep', '1.0.0', BYSTANDER) });
    reg.publish({ name: 'yolop-extension-up', vers: '1.0.0', data: faultCrate('up', '1.0.0', { config: true, ...BYSTANDER }) });
    const twin = newHome();
    await ok(twin, reg, ['install', 'keep', 'up']);
    await ok(twin, reg, ['enable', 'up', '--config', 'level=debug']);
    prepared = newHome();
    copyHome(twin, prepared);
    reg.publish({ name: 'yolop-extension-up', vers: '1.1.0', data: faultCrate('up', '1.1.0', { config: true }) });
    before = snapshot(twin);
    await ok(twin, reg, ['update', '--all']);
    after = snapshot(twin);
    expect(after.lock).toContain('version = "1.1.0"');
  }, CONCURRENT_TIMEOUT);

  it.concurrent.each(UPDATE_POINTS)(
    'at %s',
    async (point) => {
      const h = newHome();
      copyHome(prepared, h);
      await crashAndRecover(h, reg, ['update', '--all'], point, before, after);
    },
    CONCURRENT_TIMEOUT,
  );
});

describe('kill -9 during remove (package, lock, approved grant, settings and secrets)', () => {
  let reg: TestRegistry;
  let before: StateSnapshot;
  let after: StateSnapshot;
  /** The twin's home as its set-up left it: each test's home starts as a copy. */
  let prepared: TempHome;
  const setUp = (): TempHome => {
    const h = newHome();
    copyHome(prepared, h);
    return h;
  };

  beforeAll(async () => {
    reg = await startRegistry();
    registries.push(reg);
    reg.publish({ name: 'yolop-extension-keep', vers: '1.0.0', data: faultCrate('keep', '1.0.0', BYSTANDER) });
    // Only removed: never fetched at a kill point.
    reg.publish({ name: 'yolop-extension-fx', vers: '1.0.0', data: faultCrate('fx', '1.0.0', { config: true, ...BYSTANDER }) });
    const twin = newHome();
    await ok(twin, reg, ['install', 'keep', 'fx']);
    await ok(twin, reg, ['enable', 'fx', '--config', 'level=debug']);
    await ok(twin, reg, ['set-secret', 'fx', 'token', '--stdin'], 's3cret-value\n');
    prepared = newHome();
    copyHome(twin, prepared);
    before = snapshot(twin);
    expect(before.settings).toContain('ext:fx');
    expect(before.secrets).toContain('s3cret-value');
    await ok(twin, reg, ['remove', 'fx']);
    after = snapshot(twin);
    expect(after.settings ?? '').not.toContain('ext:fx');
    expect(after.secrets ?? '').not.toContain('s3cret-value');
  });

  it.concurrent.each(['remove:before-lock', 'remove:after-lock', 'remove:between-settings-and-secrets'])(
    'at %s',
    async (point) => {
      await crashAndRecover(setUp(), reg, ['remove', 'fx'], point, before, after);
    },
    CONCURRENT_TIMEOUT,
  );

  it('the next command may be any that takes the installer lock: disable recovers too', async () => {
    const h = setUp();
    // `disable keep` changes nothing (keep was never enabled), so the state is still comparable.
    await crashAndRecover(h, reg, ['remove', 'fx'], 'remove:before-lock', before, after, { args: ['disable', 'keep'], codes: [0] });
  });
});
