/**
 * kill -9 at every named point of `install` (fresh, replacing a version, and
 * replacing with identical content from another source), then:
 *   - the next command that takes the installer lock recovers, and the state
 *     (store, lock, grants, settings, secrets) is entirely what it was before
 *     or entirely what a clean run produces, never a mix;
 *   - running the install again succeeds and ends exactly like a clean run,
 *     with no staging left and nothing for `list` to complain about.
 * The "after" state comes from a twin home that ran the same steps unkilled.
 */
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BYSTANDER, faultCrate, killAt, snapshot, stagingLeft, staleLock, type StateSnapshot } from '../helpers/faults.js';
import { copyHome } from '../helpers/prepared-home.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const FAST = { YEP_EXT_HTTP_TIMEOUT_MS: '10000', YEP_EXT_HTTP_RETRIES: '1', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '20' };

let reg: TestRegistry;
let pkgRoot: TempHome; // holds path packages shared by all homes (lock entries name their absolute path)
const homes: TempHome[] = [];

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: 'yolop-extension-keep', vers: '1.0.0', data: faultCrate('keep', '1.0.0', BYSTANDER) });
  reg.publish({ name: 'yolop-extension-fx', vers: '1.0.0', data: faultCrate('fx', '1.0.0') });
  reg.publish({ name: 'yolop-extension-fx', vers: '2.0.0', data: faultCrate('fx', '2.0.0', { tools: ['one', 'two'] }) });
  pkgRoot = makeTempHome('yep-fault-pkgs-');
});
afterAll(async () => {
  await reg.close();
  for (const h of homes) h.cleanup();
  pkgRoot.cleanup();
});

function newHome(): TempHome {
  const h = makeTempHome('yep-fault-');
  homes.push(h);
  return h;
}
const envOf = (h: TempHome) => ({ ...h.env, ...FAST, YEP_EXT_INDEX: reg.indexUrl });

async function ok(h: TempHome, args: string[]): Promise<void> {
  const r = await runCli(args, { env: envOf(h) });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

interface Scenario {
  title: string;
  setup: (h: TempHome) => Promise<void>;
  op: () => string[];
  points: string[];
}

/** The same content as the fx 1.0.0 crate, as a local directory (a different source, an identical hash). */
function fxAsDirectory(): string {
  const dir = join(pkgRoot.root, 'fx-copy');
  mkdirSync(dir, { recursive: true });
  return dir;
}

const INSTALL_POINTS = ['download:mid', 'unpack:mid', 'install:after-fetch', 'place:after-move-old', 'place:before-lock', 'place:after-lock'];

const scenarios: Scenario[] = [
  {
    title: 'fresh install of a crate',
    setup: (h) => ok(h, ['install', 'keep']),
    op: () => ['install', 'fx@=1.0.0'],
    points: INSTALL_POINTS,
  },
  {
    title: 'install replacing 1.0.0 with 2.0.0',
    setup: async (h) => {
      await ok(h, ['install', 'keep', 'fx@=1.0.0']);
      await ok(h, ['enable', 'fx']);
    },
    op: () => ['install', 'fx@=2.0.0', '--yes'],
    points: INSTALL_POINTS,
  },
  {
    title: 'install replacing a crate with the same content from a directory',
    setup: async (h) => {
      await ok(h, ['install', 'fx@=1.0.0']);
      // Copy the installed tree out (same bytes, so the same content hash), once; the store entry is a symlink to it.
      const dir = fxAsDirectory();
      if (!existsSync(join(dir, 'plugin.json'))) cpSync(join(h.configDir, 'extensions', 'fx'), dir, { recursive: true, dereference: true });
    },
    op: () => ['install', fxAsDirectory(), '--yes'],
    points: ['place:after-move-old', 'place:before-lock', 'place:after-lock'],
  },
];

for (const s of scenarios) {
  describe(`kill -9 during ${s.title}`, () => {
    let before: StateSnapshot;
    let after: StateSnapshot;
    let op: string[];
    /** The twin's home as its setup left it (config dir and HOME): each point's home starts as a copy. */
    let prepared: TempHome;

    beforeAll(async () => {
      op = s.op();
      const twin = newHome();
      await s.setup(twin);
      before = snapshot(twin);
      prepared = newHome();
      copyHome(twin, prepared);
      await ok(twin, op);
      after = snapshot(twin);
      expect(after).not.toEqual(before);
    });

    // Concurrent: each test is half a dozen CLI runs (the stale lock is set back, not waited for).
    // Seven at once on 2 cores come near the config's 60 s each under load: give them room.
    it.concurrent.each(s.points)(
      'at %s: recovered to before or after, and the install then completes',
      async (point) => {
        const h = newHome();
        copyHome(prepared, h);
        expect(snapshot(h)).toEqual(before);
        await killAt(point, op, envOf(h), join(h.root, 'paused'));

        // Any command that takes the installer lock recovers (this one then fails: nothing to remove),
        // once the killed holder's lock is stale: its mtime set back past the 5 s that takes.
        staleLock(h);
        const probe = await runCli(['remove', 'not-installed'], { env: envOf(h) });
        expect(probe.code, probe.stderr).toBe(3);
        const recovered = snapshot(h);
        expect([before, after], `state after recovery at ${point}:\n${JSON.stringify(recovered, null, 1)}`).toContainEqual(recovered);
        expect(stagingLeft(h)).toEqual([]);

        await ok(h, op);
        expect(snapshot(h)).toEqual(after);
        expect(stagingLeft(h)).toEqual([]);
        const list = jsonOf(await runCli(['list', '--json'], { env: envOf(h) }));
        expect(list.extensions.flatMap((e: { problems: string[] }) => e.problems)).toEqual([]);
      },
      180_000,
    );
  });
}
