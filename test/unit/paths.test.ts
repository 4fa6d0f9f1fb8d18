import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageDir, resolvePaths } from '../../src/core/paths.js';

describe('resolvePaths (host-compat §1)', () => {
  it('linux default and XDG', () => {
    expect(resolvePaths({}, 'linux', '/home/u').configDir).toBe('/home/u/.config/yolop');
    expect(resolvePaths({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u').configDir).toBe('/x/yolop');
    expect(resolvePaths({ XDG_CONFIG_HOME: 'relative' }, 'linux', '/home/u').configDir).toBe('/home/u/.config/yolop');
  });
  it("the home is the environment's HOME (USERPROFILE on Windows), not this process's: the config root of a library caller's or an in-process run's env", () => {
    expect(resolvePaths({ HOME: '/hh' }, 'linux').configDir).toBe('/hh/.config/yolop');
    expect(resolvePaths({ HOME: '/hh' }, 'linux').storeDir).toBe('/hh/.config/yolop/extensions');
    expect(resolvePaths({ HOME: '/hh' }, 'darwin').configDir).toBe('/hh/Library/Application Support/yolop');
    expect(resolvePaths({ USERPROFILE: '/up', HOME: '/hh' }, 'win32').configDir).toBe(join('/up', 'AppData', 'Roaming', 'yolop'));
  });
  it('macOS and Windows', () => {
    expect(resolvePaths({}, 'darwin', '/Users/u').configDir).toBe('/Users/u/Library/Application Support/yolop');
    expect(resolvePaths({ APPDATA: '/appdata' }, 'win32', '/u').configDir).toContain('yolop');
  });
  it('YOLOP_CONFIG_DIR wins, relative made absolute, empty = unset', () => {
    expect(resolvePaths({ YOLOP_CONFIG_DIR: '/c', XDG_CONFIG_HOME: '/x' }, 'linux', '/h').configDir).toBe('/c');
    expect(resolvePaths({ YOLOP_CONFIG_DIR: 'rel' }, 'linux', '/h').configDir).toBe(`${process.cwd()}/rel`);
    expect(resolvePaths({ YOLOP_CONFIG_DIR: '' }, 'linux', '/h').configDir).toBe('/h/.config/yolop');
  });
  it('store, lock, settings, secrets', () => {
    const p = resolvePaths({ YOLOP_CONFIG_DIR: '/c' }, 'linux', '/h');
    expect(p).toMatchObject({
      storeDir: '/c/extensions',
      lockFile: '/c/extensions/extensions.lock',
      settingsFile: '/c/settings.toml',
      secretsFile: '/c/connections.toml',
    });
    expect(resolvePaths({ YOLOP_CONFIG_DIR: '/c', YOLOP_EXTENSIONS_DIR: '/s' }, 'linux', '/h').lockFile).toBe('/s/extensions.lock');
  });
  it('the shared download cache: YEP_EXT_CACHE_DIR, else the platform cache directory', () => {
    expect(resolvePaths({}, 'linux', '/home/u').sharedCacheDir).toBe('/home/u/.cache/yep-ext');
    expect(resolvePaths({ XDG_CACHE_HOME: '/xc' }, 'linux', '/home/u').sharedCacheDir).toBe('/xc/yep-ext');
    expect(resolvePaths({ XDG_CACHE_HOME: 'relative' }, 'linux', '/home/u').sharedCacheDir).toBe('/home/u/.cache/yep-ext');
    expect(resolvePaths({}, 'darwin', '/Users/u').sharedCacheDir).toBe('/Users/u/Library/Caches/yep-ext');
    expect(resolvePaths({ LOCALAPPDATA: '/lad' }, 'win32', '/u').sharedCacheDir).toBe(join('/lad', 'yep-ext', 'Cache'));
    expect(resolvePaths({ YEP_EXT_CACHE_DIR: '/shared', XDG_CACHE_HOME: '/xc' }, 'linux', '/h').sharedCacheDir).toBe('/shared');
    expect(resolvePaths({ YEP_EXT_CACHE_DIR: 'rel' }, 'linux', '/h').sharedCacheDir).toBe(`${process.cwd()}/rel`);
    // The environment's HOME (a test's or a library caller's), not only this process's.
    expect(resolvePaths({ HOME: '/hh' }, 'linux').sharedCacheDir).toBe('/hh/.cache/yep-ext');
    // Not inside the store: several homes share it.
    expect(resolvePaths({ YOLOP_CONFIG_DIR: '/c' }, 'linux', '/h').sharedCacheDir.startsWith('/c/')).toBe(false);
  });
  it('packageDir refuses names that would escape the store', () => {
    const p = resolvePaths({ YOLOP_CONFIG_DIR: '/c' }, 'linux', '/h');
    expect(packageDir(p, 'lsp')).toBe('/c/extensions/lsp');
    for (const bad of ['../x', 'a/b', '', '.', 'x'.repeat(300), 'ｌｓｐ']) expect(() => packageDir(p, bad)).toThrow(/Invalid extension name/);
  });
});
