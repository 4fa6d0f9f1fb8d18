/**
 * In-process runs (test/helpers/in-process.ts, what home.ts's runCli does) are runs of their
 * own: each gets its test seams through its io, so two runs at once in one process do not
 * share them: one paused at a checkpoint holds up only itself.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

const homes: TempHome[] = [];
const home = (): TempHome => {
  const h = makeTempHome();
  homes.push(h);
  return h;
};
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

const until = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 600 && !what(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(what()).toBe(true);
};

describe('in-process runs at once', () => {
  it("a run paused at its checkpoint does not pause another run: the seams are each run's own", async () => {
    const paused = home();
    const free = home();
    const pauseFile = join(paused.root, 'paused');
    const resume = join(paused.root, 'resume');
    const seamed = runCli(['install', writePackage(join(paused.root, 'src', 'one'), { name: 'one' })], {
      env: { ...paused.env, YEP_EXT_TEST_PAUSE_AT: 'install:after-fetch', YEP_EXT_TEST_PAUSE_FILE: pauseFile, YEP_EXT_TEST_PAUSE_RESUME: resume },
    });
    await until(() => existsSync(pauseFile));
    const other = await runCli(['install', writePackage(join(free.root, 'src', 'two'), { name: 'two' })], { env: free.env });
    expect(other.code, other.stderr).toBe(0);
    expect(existsSync(join(free.configDir, 'extensions', 'two', 'plugin.json'))).toBe(true);
    // The first is still where it paused: nothing of it placed yet.
    expect(existsSync(join(paused.configDir, 'extensions', 'one'))).toBe(false);
    writeFileSync(resume, '');
    const first = await seamed;
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(join(paused.configDir, 'extensions', 'one', 'plugin.json'))).toBe(true);
  });
});
