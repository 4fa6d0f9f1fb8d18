/**
 * Which words `install` reads as a directory without ./ in front (src/core/sources/spec.ts):
 * one ending in `/` (what shell completion types), or one that is no crate name and names a
 * package directory here. A bare valid crate name stays a crate even beside a same-named
 * directory, as npm reads a bare name as the registry's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

let home: TempHome;
let src: string;
const store = () => join(home.configDir, 'extensions');
const lockSources = (): Record<string, unknown> => {
  const file = join(store(), 'extensions.lock');
  if (!existsSync(file)) return {};
  const lock = parse(readFileSync(file, 'utf8')) as { extensions?: { name: string; source: unknown }[] };
  return Object.fromEntries((lock.extensions ?? []).map((e) => [e.name, e.source]));
};

beforeEach(() => {
  home = makeTempHome();
  src = join(home.root, 'src');
  writePackage(join(src, 'demo'), { name: 'demo' });
  writePackage(join(src, 'nested', 'demo.v2'), { name: 'demo2' });
});
afterEach(() => home.cleanup());

describe('install: a directory without ./', () => {
  it('`demo/`, as tab completion types it, is the directory: installed in place, pinned to it', async () => {
    const r = await runCli(['install', 'demo/'], { env: home.env, cwd: src });
    expect(r.code, r.stderr).toBe(0);
    expect(lockSources()).toEqual({ demo: { type: 'path', path: join(src, 'demo') } });
    expect(readlinkSync(join(store(), 'demo'))).toBe(join(src, 'demo'));
  });

  it('a word with a / that is no crate name and names a package directory here is that directory', async () => {
    const r = await runCli(['install', 'nested/demo.v2'], { env: home.env, cwd: src });
    expect(r.code, r.stderr).toBe(0);
    expect(lockSources()).toEqual({ demo2: { type: 'path', path: join(src, 'nested', 'demo.v2') } });
  });

  it('a directory that holds no plugin.json, typed without ./, stays the usage error that says to write ./; nothing is created', async () => {
    mkdirSync(join(src, 'plain', 'dir'), { recursive: true });
    const r = await runCli(['install', 'plain/dir', '--json'], { env: home.env, cwd: src });
    expect(r.code).toBe(2);
    expect(jsonOf(r).error.hint).toContain('yep-ext install ./plain/dir');
    expect(existsSync(store())).toBe(false);
  });

  it('a bare valid crate name beside a same-named directory is the crate (npm reads a bare name so): the directory is not installed', async () => {
    // Nothing listens at the index: the retries stay, their backoff sleeps do not (test seam).
    const noBackoff = { YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '20', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '80' };
    const r = await runCli(['install', 'demo'], { env: { ...home.env, ...noBackoff, YEP_EXT_INDEX: 'http://127.0.0.1:9/' }, cwd: src });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('yep-ext install ./demo');
    expect(lockSources()).toEqual({});
    expect(existsSync(join(store(), 'demo'))).toBe(false);
  });

  it('a bare crate name beside a directory that is no package but holds packages suggests those, not the directory', async () => {
    const noBackoff = { YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '20', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '80' };
    const r = await runCli(['install', 'nested'], { env: { ...home.env, ...noBackoff, YEP_EXT_INDEX: 'http://127.0.0.1:9/' }, cwd: src });
    expect(r.code).toBe(6);
    expect(r.stderr).not.toContain('yep-ext install ./nested`');
    // What it holds is offered instead, by a path that installs.
    expect(r.stderr).toContain('the directory ./nested holds packages: install one by its path, e.g. `yep-ext install ./nested/demo.v2`.');
    const offered = await runCli(['install', './nested/demo.v2', '--yes'], { env: home.env, cwd: src });
    expect(offered.code, offered.stderr).toBe(0);
    expect(lockSources()).toEqual({ demo2: { type: 'path', path: join(src, 'nested', 'demo.v2') } });
  });
});
