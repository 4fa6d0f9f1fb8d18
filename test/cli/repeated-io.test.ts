/**
 * Repeated I/O: each state file a command needs is read once. Counted
 * under strace (every openat of the exact path, by every thread), so a second
 * parse or check cannot come back unnoticed:
 * - an install parses the store's lock twice (the plan, then under the installer
 *   lock), not once more per commit step;
 * - an install over an installed entry checks the tree once (the stat signature
 *   in `.yep-state/` is read once), not again under the lock;
 * - a warm `install --frozen` reads a skipped entry's manifest once;
 * - `outdated` gets the installed engines verdicts from the manifests its tree check
 *   read (one stat signature and one manifest each: is the tree what the lock pins),
 *   not from a whole `list` (no settings.toml).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { describeNeeding } from '../helpers/needs.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { straceNeed, tracedRun } from '../helpers/syscall-kill.js';

let reg: TestRegistry;
let home: TempHome;
const store = () => join(home.configDir, 'extensions');
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });

/** For each of `paths` (exact, or a pattern): how many openat calls (any thread, any result) a traced run of `args` made of it. */
async function opens(args: string[], paths: Array<string | RegExp>): Promise<number[]> {
  const r = await tracedRun(args, { env: env(), traceFile: join(home.root, 'openat.trace'), syscalls: ['openat'] });
  expect(r.status, r.stderr).toBe(0);
  const opened = [...r.trace.matchAll(/openat\(AT_FDCWD, "([^"]*)"/g)].map((m) => m[1]!);
  return paths.map((p) => opened.filter((o) => (typeof p === 'string' ? o === p : p.test(o))).length);
}

beforeAll(async () => {
  reg = await startRegistry();
  const crate = 'yolop-extension-hello';
  const manifest = { name: 'hello', version: '1.0.0', yolop: { capabilityServer: { command: 'server' }, tools: [{ name: 't' }] } };
  reg.publish({
    name: crate,
    vers: '1.0.0',
    data: buildCrate({
      name: crate,
      version: '1.0.0',
      files: {
        'plugin.json': JSON.stringify(manifest),
        'Cargo.toml': `[package]\nname = "${crate}"\nversion = "1.0.0"\n`,
        'bin/server': { content: '#!/bin/sh\nexec cat\n', mode: 0o755 },
      },
    }),
  });
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

describeNeeding(straceNeed(), 'each state file read once per command', () => {
  it('a repairing install parses the lock twice (plan, apply) and checks the tree once; warm --frozen reads the manifest once; outdated reads one signature and one manifest, no settings', async () => {
    const first = await runCli(['install', 'hello'], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    // A damaged tree, so the install commits (a reinstall): every step of a commit runs.
    appendFileSync(join(store(), 'hello', 'Cargo.toml'), '# edited\n');
    const lock = join(store(), 'extensions.lock');
    const signature = join(store(), '.yep-state', 'hello.json');
    // Lock: the plan's parse, the parse under the installer lock, and the atomic writer's
    // compare-before-write (fs-atomic.ts skips an identical write). Signature: the one check,
    // and the writer's compare when the new signature is recorded.
    const repair = await opens(['install', 'hello'], [lock, signature]);
    expect(repair).toEqual([3, 2]);
    expect(readFileSync(join(store(), 'hello', 'Cargo.toml'), 'utf8')).not.toContain('# edited');

    // Read through the link or in its version directory (.yep-packages/hello.<hash16>/plugin.json).
    const manifest = /\/extensions\/(hello|\.yep-packages\/hello\.[0-9a-f]+(\.\d+)?)\/plugin\.json$/;
    expect(await opens(['install', '--frozen'], [manifest])).toEqual([1]);

    // Enabled, so settings.toml exists: a whole `list` behind outdated would read it.
    const enabled = await runCli(['enable', 'hello'], { env: env() });
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(await opens(['outdated'], [join(home.configDir, 'settings.toml'), signature, manifest])).toEqual([0, 1, 1]);
  });
});
