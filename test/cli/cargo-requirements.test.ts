/**
 * Cargo's requirement grammar through the CLI: text cargo
 * refuses is refused (exit 2, before any request, even beside other sources:
 * nothing installed), and numbers above 2^53 that are valid u64 resolve as cargo resolves
 * them. The full grammar is table-tested in test/unit/cargo-semver.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const CRATE = 'yolop-extension-big';
const VERSIONS = ['1.0.0', '1.2.0', '9007199254740992.0.0', '9007199254740993.0.0'];

let registry: TestRegistry;
let home: TempHome;
let env: Record<string, string>;

beforeAll(async () => {
  registry = await startRegistry();
  for (const version of VERSIONS) {
    const manifest = { name: 'big', yolop: { capabilityServer: { command: 'big-server' }, tools: [{ name: 'b' }] } };
    registry.publish({
      name: CRATE,
      vers: version,
      data: buildCrate({
        name: CRATE,
        version,
        files: { 'plugin.json': JSON.stringify(manifest), 'bin/big-server': { content: '#!/bin/sh\ncat\n', mode: 0o755 } },
      }),
    });
  }
});
afterAll(() => registry.close());
beforeEach(() => {
  home = makeTempHome();
  env = { ...home.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: registry.indexUrl };
  registry.requests.length = 0;
});
afterEach(() => home.cleanup());

const lockedVersion = (): string | undefined => {
  const file = join(home.configDir, 'extensions', 'extensions.lock');
  if (!existsSync(file)) return undefined;
  return ((parse(readFileSync(file, 'utf8')) as any).extensions?.[0]?.source?.version as string | undefined) ?? undefined;
};

describe('requirement text cargo refuses', () => {
  it.each([
    ['a trailing tab', '^1.0\t', /control characters/],
    ['a no-break space', '1.0\u00a0', /U\+00A0/],
    ['a BOM', '\ufeff1.0', /U\+FEFF/],
    ['an ideographic space', '>=1,\u30002', /U\+3000/],
    ['x beside another comparator', '>1, x', /"x" must be the only comparator/],
    ['a wildcard major with more parts', '*.*', /wildcard major version cannot be followed/],
    ['X.X.X', 'X.X.X', /wildcard major version cannot be followed/],
    ['an operator before a wildcard major', '>=*', /operator cannot apply to a wildcard major/],
    ['^*', '^*', /operator cannot apply to a wildcard major/],
    ['build metadata on a partial version', '1.0+build.5', /build metadata needs a full version/],
    ['build metadata after a wildcard', '1.2.*+b', /build metadata needs a full version/],
    ['a number above u64', '<18446744073709551616', /larger than cargo allows/],
  ])('%s (%j): exit 2, nothing installed', async (_label, req, re) => {
    const r = await runCli(['install', `big@${req}`], { env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(re);
    expect(existsSync(join(home.configDir, 'extensions', 'big'))).toBe(false);
    // Refused before any request: not even the index is read.
    expect(registry.requests).toHaveLength(0);
  });

  it('is a usage error (exit 2) even when the registry is unreachable, not a network error', async () => {
    const r = await runCli(['install', 'big@^^1', '--json'], { env: { ...env, YEP_EXT_INDEX: 'http://127.0.0.1:9/' } });
    expect(r.code, r.stdout).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'E_USAGE', message: expect.stringMatching(/^Invalid version requirement "\^\^1"/) });
  });

  it('beside other sources: the whole command is refused and nothing is installed (as cargo and npm do)', async () => {
    for (const bad of ['big@>1, x', 'big@']) {
      const r = await runCli(['install', './examples/echo-node', bad], { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).not.toMatch(/Installed|installs failed/);
      expect(existsSync(join(home.configDir, 'extensions', 'echo-node'))).toBe(false);
    }
    expect(registry.requests).toHaveLength(0);
  });
});

describe('numbers above 2^53 (valid u64) resolve as in cargo', () => {
  it.each([
    ['>=0.0.0, <9007199254740993', '9007199254740992.0.0'],
    ['=9007199254740993', '9007199254740993.0.0'],
    ['^1', '1.2.0'],
  ])('big@%s installs %s', async (req, want) => {
    const r = await runCli(['install', `big@${req}`], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockedVersion()).toBe(want);
    expect(existsSync(join(home.configDir, 'extensions', 'big', 'plugin.json'))).toBe(true);
  });

  it('no requirement: the newest stable, above 2^53', async () => {
    const r = await runCli(['install', 'big'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(lockedVersion()).toBe('9007199254740993.0.0');
  });
});
