/**
 * kill -9 during `install --frozen --lockfile <target>`, where the target lock
 * also carries what moves no files: a top-level table and, for an extension
 * already installed with the locked hash, an entry that differs in its keys.
 * The store's lock has one writer (the transaction): those changes ride on the
 * placing commit's single lock write, so at every point the state is entirely
 * before or entirely after, and the run then completes like an unkilled twin.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BYSTANDER, faultCrate, killAt, snapshot, stagingLeft, type StateSnapshot, staleLock } from '../helpers/faults.js';
import { copyHome } from '../helpers/prepared-home.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

let reg: TestRegistry;
let target: string;
/** The home that made the target lock: keep and fx 1.0.0 installed. */
let maker: TempHome;
const homes: TempHome[] = [];

function newHome(): TempHome {
  const h = makeTempHome('yep-fault-frozen-');
  homes.push(h);
  return h;
}
const envOf = (h: TempHome) => ({ ...h.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: reg.indexUrl });
async function ok(h: TempHome, args: string[]): Promise<void> {
  const r = await runCli(args, { env: envOf(h) });
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
}

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: 'yolop-extension-keep', vers: '1.0.0', data: faultCrate('keep', '1.0.0', BYSTANDER) });
  reg.publish({ name: 'yolop-extension-fx', vers: '1.0.0', data: faultCrate('fx', '1.0.0') });
  maker = newHome();
  await ok(maker, ['install', 'keep', 'fx@=1.0.0']);
  target = join(maker.root, 'project.lock');
  await ok(maker, ['lock', 'export', target]);
  // What a project lock may add: its own top-level table, and keys on an entry.
  const text = readFileSync(target, 'utf8').replace(/(\[\[extensions\]\]\nname = "keep"\n)/, '$1reviewed_by = "ci"\n');
  expect(text).toContain('reviewed_by = "ci"');
  writeFileSync(target, `${text}\n[project]\nname = "acme"\n`);
});
afterAll(async () => {
  await reg.close();
  for (const h of homes) h.cleanup();
});

describe('kill -9 during install --frozen --lockfile', () => {
  const op = () => ['install', '--frozen', '--lockfile', target];
  let before: StateSnapshot;
  let after: StateSnapshot;
  /** The machine being provisioned already has `keep` (same bytes as the target pins): each point's home starts as a copy. */
  let prepared: TempHome;

  beforeAll(async () => {
    const twin = newHome();
    await ok(twin, ['install', 'keep']);
    prepared = newHome();
    copyHome(twin, prepared);
    before = snapshot(twin);
    await ok(twin, op());
    after = snapshot(twin);
    // The store's lock says what the target lock says: entries, their keys, the top-level table.
    expect(parse(after.lock ?? '')).toEqual(parse(readFileSync(target, 'utf8')));
    expect(after.lock).toContain('[project]');
    expect(after.lock).toContain('reviewed_by = "ci"');
  });

  it.concurrent.each(['install:after-fetch', 'place:after-move-old', 'place:before-lock', 'place:after-lock'])(
    'at %s: recovered to before or after, and the run then completes',
    async (point) => {
      const h = newHome();
      copyHome(prepared, h);
      expect(snapshot(h)).toEqual(before);
      await killAt(point, op(), envOf(h), join(h.root, 'paused'));

      staleLock(h); // the killed holder's lock, as 5 s later
      const probe = await runCli(['remove', 'not-installed'], { env: envOf(h) });
      expect(probe.code, probe.stderr).toBe(3);
      const recovered = snapshot(h);
      expect([before, after], `state after recovery at ${point}:\n${JSON.stringify(recovered, null, 1)}`).toContainEqual(recovered);
      expect(stagingLeft(h)).toEqual([]);

      await ok(h, op());
      expect(snapshot(h)).toEqual(after);
      const list = jsonOf(await runCli(['list', '--json'], { env: envOf(h) }));
      expect(list.extensions.flatMap((e: { problems: string[] }) => e.problems)).toEqual([]);
    },
  );
});

describe('install --frozen --lockfile with nothing to place', () => {
  it("still takes the target lock's top-level table and entry keys (a lock-only transaction commit)", async () => {
    const h = newHome();
    copyHome(maker, h);
    const r = await runCli(['install', '--frozen', '--lockfile', target, '--json'], { env: envOf(h) });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).frozen.map((i: { status: string }) => i.status)).toEqual(['skipped', 'skipped']);
    const lock = snapshot(h).lock ?? '';
    expect(parse(lock)).toEqual(parse(readFileSync(target, 'utf8')));
    expect(stagingLeft(h)).toEqual([]);
  });
});
