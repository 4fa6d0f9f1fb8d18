/**
 * Release-age cooldown through the CLI: versions published 1 h and
 * 10 d ago, `--min-age 3d` (or YEP_EXT_MIN_AGE) installs the older and names the
 * younger; `update` likewise; an exact young version is refused (E_POLICY, exit
 * 13, nothing placed) unless --allow-fresh; entries without pubtime count as old.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { pubtimeAgo, startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let reg: TestRegistry;
let home: TempHome;

const publish = (vers: string, age?: number) =>
  reg.publish({ name: HELLO, vers, data: fixtureCrate(HELLO, vers), ...(age !== undefined ? { extra: { pubtime: pubtimeAgo(age) } } : {}) });
const env = (extra: Record<string, string> = {}) => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', ...extra });
const lockFile = () => join(home.configDir, 'extensions', 'extensions.lock');
const lockText = () => readFileSync(lockFile(), 'utf8');

beforeEach(async () => {
  reg = await startRegistry();
  home = makeTempHome();
  publish('0.3.0', 10 * DAY);
  publish('0.4.1', 1 * HOUR);
});
afterEach(async () => {
  await reg.close();
  home.cleanup();
});

describe('install under a cooldown', () => {
  it('--min-age 3d installs the 10-day-old version and names the 1-hour-old one', async () => {
    const r = await runCli(['install', 'hello', '--min-age', '3d'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.3.0"');
    expect(readFileSync(join(home.configDir, 'extensions', 'hello', 'Cargo.toml'), 'utf8')).toContain('0.3.0');
    expect(r.stdout + r.stderr).toMatch(/0\.4\.1 is 1 h old; cooldown 3 d/);
  });

  it('--json carries the skip in the outcome notes', async () => {
    const r = await runCli(['install', 'hello', '--min-age', '3d', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const out = jsonOf(r).installed[0];
    expect(out.source.version).toBe('0.3.0');
    expect(out.notes.join('\n')).toMatch(/0\.4\.1 is 1 h old; cooldown 3 d/);
  });

  it('YEP_EXT_MIN_AGE does the same; without a cooldown the newest is taken', async () => {
    const a = await runCli(['install', 'hello'], { env: env({ YEP_EXT_MIN_AGE: '36h' }) });
    expect(a.code, a.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.3.0"');
    const b = await runCli(['remove', 'hello'], { env: env() });
    expect(b.code, b.stderr).toBe(0);
    const c = await runCli(['install', 'hello'], { env: env() });
    expect(c.code, c.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.4.1"');
  });

  it('an exact young version is refused (exit 13, nothing placed) unless --allow-fresh', async () => {
    const r = await runCli(['install', 'hello@0.4.1', '--min-age', '3d', '--json'], { env: env() });
    expect(r.code).toBe(13);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_POLICY');
    expect(err.message).toMatch(/0\.4\.1 is 1 h old; cooldown 3 d/);
    expect(err.details).toMatchObject({ rule: 'min_age', item: `${HELLO}@0.4.1` });
    expect(existsSync(lockFile())).toBe(false);
    expect(existsSync(join(home.configDir, 'extensions', 'hello'))).toBe(false);
    expect(reg.requestsTo('/crates/')).toEqual([]);

    const ok = await runCli(['install', 'hello@0.4.1', '--min-age', '3d', '--allow-fresh'], { env: env() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.4.1"');
    expect(ok.stderr).toMatch(/installing it because of --allow-fresh/);
  });

  it('a version without pubtime counts as old', async () => {
    publish('0.5.0');
    const r = await runCli(['install', 'hello', '--min-age', '3d'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.5.0"');
  });

  it('every matching version young: a cooldown refusal, not "no such version"', async () => {
    const r = await runCli(['install', 'hello@^0.4', '--min-age', '1w', '--json'], { env: env() });
    expect(r.code).toBe(13);
    expect(jsonOf(r).error.message).toMatch(/younger than the cooldown: 0\.4\.1 is 1 h old; cooldown 7 d/);
    // Refused before any download: nothing fetched, placed or pinned.
    expect(reg.requestsTo('/crates/')).toEqual([]);
    expect(existsSync(lockFile())).toBe(false);
    expect(existsSync(join(home.configDir, 'extensions', 'hello'))).toBe(false);
  });

  it('a malformed duration is a usage error', async () => {
    const r = await runCli(['install', 'hello', '--min-age', '3 days'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a duration/);
    expect(existsSync(lockFile())).toBe(false);
  });

  it('a malformed duration is refused before anything else, also beside a path source (which resolution never asks)', async () => {
    const r = await runCli(['install', join(process.cwd(), 'examples', 'echo-node'), '--yes', '--min-age', '3x'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--min-age: "3x" is not a duration/);
    expect(existsSync(lockFile())).toBe(false);
    expect(existsSync(join(home.configDir, 'extensions', 'echo-node'))).toBe(false);
    const u = await runCli(['update', '--all', '--min-age', '3x'], { env: env() });
    expect(u.code).toBe(2);
  });
});

describe('update under a cooldown', () => {
  it('stays on the old version and names the young one; without the cooldown it moves', async () => {
    // Install the 20-day-old 0.2.0 under a range that admits every version, then update under the cooldown.
    publish('0.2.0', 20 * DAY);
    const j = await runCli(['install', 'hello@>=0.2', '--min-age', '15d'], { env: env() });
    expect(j.code, j.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.2.0"');
    const u = await runCli(['update', 'hello', '--min-age', '3d', '--json'], { env: env() });
    expect(u.code, u.stderr).toBe(0);
    expect(jsonOf(u).updates[0]).toMatchObject({ status: 'updated', to: { version: '0.3.0' } });
    expect(u.stderr).toMatch(/0\.4\.1 is 1 h old; cooldown 3 d/);
    expect(lockText()).toContain('version = "0.3.0"');
    const v = await runCli(['update', 'hello'], { env: env() });
    expect(v.code, v.stderr).toBe(0);
    expect(lockText()).toContain('version = "0.4.1"');
  });
});
