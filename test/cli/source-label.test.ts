/**
 * `list`'s source column and `info` name the index a crate came from when it is
 * not crates.io: a mirror (`--index`, YEP_EXT_INDEX) install shows the
 * index host, never `crates.io:`. A crate from the default index keeps `crates.io:`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { sourceLabel } from '../../src/core/sources/index.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;

beforeEach(async () => {
  reg = await startRegistry();
  home = makeTempHome();
  reg.publish({ name: HELLO, vers: '1.0.0', data: fixtureCrate(HELLO, '1.0.0') });
});
afterEach(async () => {
  await reg.close();
  home.cleanup();
});

describe('the source of a crate from another index', () => {
  it('list (piped and --json-free table) and info show the index host, not crates.io:', async () => {
    const install = await runCli(['install', 'hello', '--index', reg.indexUrl], { env: { ...home.env, YEP_EXT_HTTP_RETRIES: '0' } });
    expect(install.code, install.stderr).toBe(0);
    const host = new URL(reg.indexUrl).host;

    const list = await runCli(['list'], { env: home.env });
    expect(list.code, list.stderr).toBe(0);
    const row = list.stdout.split('\n').find((l) => l.startsWith('hello\t'));
    expect(row?.split('\t')[3]).toBe(`${host}:${HELLO}@1.0.0`);
    expect(list.stdout).not.toContain('crates.io:');

    const info = await runCli(['info', 'hello'], { env: home.env });
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toContain(`${host}:${HELLO}@1.0.0`);
    expect(info.stdout).not.toContain('crates.io:');
    expect(jsonOf(await runCli(['info', 'hello', '--json'], { env: home.env })).source_text).toBe(`${host}:${HELLO}@1.0.0`);
  });

  it('install names the index host in its summary, its result line and its dry-run plan, as list does', async () => {
    const env = { ...home.env, YEP_EXT_HTTP_RETRIES: '0', YEP_EXT_INDEX: reg.indexUrl };
    const host = new URL(reg.indexUrl).host;
    const dry = await runCli(['install', 'hello', '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`hello 1.0.0 from ${host}:${HELLO}@1.0.0`);
    expect(dry.stdout).toContain(`Would install hello 1.0.0 (${host}:${HELLO}@1.0.0).`);
    const install = await runCli(['install', 'hello'], { env });
    expect(install.code, install.stderr).toBe(0);
    expect(install.stdout).toContain(`Installed hello 1.0.0 (${host}:${HELLO}@1.0.0)`);
    expect(dry.stdout + install.stdout).not.toContain('crates.io:');
  });

  it('info and outdated of a crate with an --index that is no URL: exit 2 (a usage mistake), not exit 0 with "not checked" or 11 with failed rows', async () => {
    const env = { ...home.env, YEP_EXT_HTTP_RETRIES: '0' };
    expect((await runCli(['install', 'hello', '--index', reg.indexUrl], { env })).code).toBe(0);
    const human = await runCli(['info', 'hello', '--index', 'notaurl'], { env });
    expect(human.code, human.stdout).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^error: The registry index notaurl\/: "notaurl\/" is not a valid URL\.\nhint: .*root of a sparse index/);
    const json = await runCli(['info', 'hello', '--index', 'notaurl', '--json'], { env });
    expect(json.code).toBe(2);
    expect(jsonOf(json).error.code).toBe('E_USAGE');
    // A registry that cannot be reached is still reported, not fatal.
    const down = await runCli(['info', 'hello', '--index', 'http://127.0.0.1:9/index/', '--json'], { env });
    expect(down.code, down.stderr).toBe(0);
    expect(jsonOf(down).upstream_error.code).toBe('E_NETWORK');
    // outdated, the same mistake: exit 2, not exit 11 with every crate row "failed".
    for (const extra of [[], ['--json']]) {
      const outdated = await runCli(['outdated', '--index', 'notaurl', ...extra], { env });
      expect(outdated.code, outdated.stdout).toBe(2);
      if (extra.length > 0) expect(jsonOf(outdated).error.code).toBe('E_USAGE');
      else expect(outdated.stderr).toMatch(/^error: The registry index notaurl\/: "notaurl\/" is not a valid URL\.\nhint: .*root of a sparse index/);
    }
    const unreachable = await runCli(['outdated', '--index', 'http://127.0.0.1:9/index/', '--json'], { env });
    // An unreachable registry is still the rows' failure (each "failed", the network's exit 6).
    expect(unreachable.code, unreachable.stderr).toBe(6);
    expect(JSON.stringify(jsonOf(unreachable))).toMatch(/"status":"failed"/);
  });

  it('a crate of the default index keeps crates.io:', () => {
    expect(sourceLabel({ type: 'crate', crate_name: HELLO, version: '1.0.0' })).toBe(`crates.io:${HELLO}@1.0.0`);
    expect(sourceLabel({ type: 'crate', crate_name: HELLO, version: '1.0.0', index: 'sparse+https://index.crates.io' })).toBe(`crates.io:${HELLO}@1.0.0`);
    expect(sourceLabel({ type: 'crate', crate_name: HELLO, version: '1.0.0', index: 'https://mirror.example.org/index/' })).toBe(
      `mirror.example.org:${HELLO}@1.0.0`,
    );
  });
});
