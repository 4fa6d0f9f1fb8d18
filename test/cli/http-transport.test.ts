/**
 * A direct GET does not load undici (src/core/net/send.ts): an install from the
 * loopback registry with no proxy in the environment goes over node:http, and
 * neither our bundle's undici nor Node's own copy (which undici would pull in
 * through globalThis.Headers) is loaded. The proxied path, which must still be
 * undici's, is checked in proxy-ca.test.ts (a loopback host is never proxied).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { makeTempHome, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { moduleLog, undiciIn } from '../helpers/module-log.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let h: TempHome;

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0'), description: 'Says hello' });
  h = makeTempHome();
});
afterAll(async () => {
  await reg?.close();
  h?.cleanup();
});

it.each([['install', 'dist/bundle/cli.cjs']] as const)(
  '%s with no proxy set: the index file, config.json and the .crate over node:http, undici never loaded',
  async (_label, bundle) => {
    const log = moduleLog(h.root, 'install');
    const before = reg.requestsTo('/crates/').length;
    const r = await runCliProcess(['install', 'hello@^0.3'], { env: { ...h.env, ...log.env, YEP_EXT_INDEX: reg.indexUrl } });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(h.configDir, 'extensions', 'extensions.lock'), 'utf8')).toContain('version = "0.3.0"');
    expect(existsSync(join(h.configDir, 'extensions', 'hello', 'plugin.json'))).toBe(true);
    expect(reg.requestsTo('/crates/').length).toBe(before + 1);
    const modules = log.read();
    // Control: the log is of this run (through that path) and saw the client it used.
    expect(modules.some((m) => m.endsWith(bundle))).toBe(true);
    expect(modules).toContain('NativeModule http');
    expect(undiciIn(modules)).toEqual([]);
    // The next case downloads again: the package and the download cache go.
    expect((await runCli(['remove', 'hello'], { env: h.env })).code).toBe(0);
    rmSync(join(h.env.HOME!, '.cache', 'yep-ext'), { recursive: true, force: true });
  },
);
