/**
 * Case-fold collisions through the CLI: crates whose paths are
 * one name on macOS or Windows under full Unicode case folding (`bin/server` and
 * `bin/ſerver`, `σ.txt` and `ς.txt`, `β.txt` and `ϐ.txt`) are refused as unsafe
 * (exit 4, rule `collision`) and leave no trace: no store entry, no lock, nothing
 * in staging.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const CRATE = 'yolop-extension-folds';
const manifest = (version: string) => JSON.stringify({ name: 'folds', version, yolop: { capabilityServer: { command: 'server' }, tools: [{ name: 'f' }] } });
const server = { content: '#!/bin/sh\ncat\n', mode: 0o755 };

const PAIRS: [string, string, string][] = [
  ['1.0.0', 'bin/server', 'bin/\u017Ferver'],
  ['2.0.0', '\u03C3.txt', '\u03C2.txt'],
  ['3.0.0', '\u03B2.txt', '\u03D0.txt'],
  ['4.0.0', 'docs/STRASSE.md', 'docs/stra\u00DFe.md'],
  ['5.0.0', 'I.txt', '\u0131.txt'],
];

let registry: TestRegistry;
let home: TempHome;
let env: Record<string, string>;

beforeAll(async () => {
  registry = await startRegistry();
  for (const [version, a, b] of PAIRS) {
    const files: Record<string, string | typeof server> = { 'plugin.json': manifest(version), 'bin/server': server, [a]: 'one\n', [b]: 'two\n' };
    registry.publish({ name: CRATE, vers: version, data: buildCrate({ name: CRATE, version, files }) });
  }
  registry.publish({
    name: CRATE,
    vers: '9.0.0',
    data: buildCrate({ name: CRATE, version: '9.0.0', files: { 'plugin.json': manifest('9.0.0'), 'bin/server': server, 'bin/client': server } }),
  });
  home = makeTempHome();
  env = { ...home.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: registry.indexUrl };
});
afterAll(async () => {
  await registry.close();
  home.cleanup();
});

describe('case-fold collisions in a crate', () => {
  it.each(PAIRS)('%s holding %s and %s is refused, leaving nothing behind', async (version, a, b) => {
    const r = await runCli(['install', `folds@=${version}`, '--json'], { env });
    expect(r.code, r.stdout).toBe(4);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_UNSAFE_PACKAGE');
    expect(err.details?.rule).toBe('collision');
    expect(err.message).toContain('differ only in letter case or Unicode normalization');
    const root = `${CRATE}-${version}`;
    expect(
      [`"${root}/${a}"`, `"${root}/${b}"`].every((n) => err.message.includes(n)),
      err.message,
    ).toBe(true);
    const store = join(home.configDir, 'extensions');
    expect(existsSync(join(store, 'folds'))).toBe(false);
    expect(existsSync(join(store, 'extensions.lock'))).toBe(false);
    expect(existsSync(join(store, '.yep-staging')) ? readdirSync(join(store, '.yep-staging')) : []).toEqual([]);
  });

  it('control: distinct names install', async () => {
    const r = await runCli(['install', 'folds@=9.0.0'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(home.configDir, 'extensions', 'folds', 'bin', 'client'))).toBe(true);
  });
});
