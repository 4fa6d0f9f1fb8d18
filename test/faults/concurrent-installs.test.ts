/**
 * Eight `yep-ext install` processes started at once into one home, each with a
 * different extension from the loopback registry: every one succeeds and ends
 * up in the lock and the store, beside what was there before, with no staging
 * left behind. They download in parallel and queue only for the lock write.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BYSTANDER, faultCrate, stagingLeft } from '../helpers/faults.js';
import { jsonOf, makeTempHome, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const NAMES = Array.from({ length: 8 }, (_, i) => `c${i}`);
let reg: TestRegistry;
let home: TempHome;

beforeAll(async () => {
  reg = await startRegistry();
  // The eight download at once, each large enough to take a while; base is installed before them.
  for (const n of NAMES) reg.publish({ name: `yolop-extension-${n}`, vers: '1.0.0', data: faultCrate(n, '1.0.0') });
  reg.publish({ name: 'yolop-extension-base', vers: '1.0.0', data: faultCrate('base', '1.0.0', BYSTANDER) });
  home = makeTempHome('yep-fault-concurrent-');
});
afterAll(async () => {
  await reg.close();
  home.cleanup();
});

describe('concurrent installs into one home', () => {
  it('eight processes at once: all succeed, all are pinned, nothing is lost', async () => {
    const env = { ...home.env, YEP_EXT_INDEX: reg.indexUrl };
    expect((await runCli(['install', 'base'], { env })).code).toBe(0);
    const results = await Promise.all(NAMES.map((n) => runCliProcess(['install', n], { env, timeoutMs: 120_000 })));
    for (const [i, r] of results.entries()) expect(r.code, `${NAMES[i]}: ${r.stderr}`).toBe(0);

    const lock = parse(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')) as { extensions: Array<{ name: string }> };
    expect(lock.extensions.map((e) => e.name).sort()).toEqual(['base', ...NAMES].sort());
    for (const n of ['base', ...NAMES]) expect(existsSync(join(home.configDir, 'extensions', n, 'plugin.json')), n).toBe(true);
    expect(stagingLeft(home)).toEqual([]);
    const list = jsonOf(await runCli(['list', '--json'], { env }));
    expect(list.extensions).toHaveLength(9);
    expect(list.extensions.flatMap((e: { problems: string[] }) => e.problems)).toEqual([]);
    // Each download happened once: nobody re-fetched because another process won a race.
    const downloads = reg.requests.filter((r) => /download/.test(r.url));
    expect(downloads).toHaveLength(9);
  });
});
