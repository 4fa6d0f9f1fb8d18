import { describe, expect, it } from 'vitest';
import { packageDir, resolvePaths } from '../../src/core/paths.js';

describe('resolvePaths (host-compat §1)', () => {
  it('linux default and XDG', () => {
    expect(resolvePaths({}, 'linux', '/home/u').configDir).toBe('/home/u/.config/yolop');
    expect(resolvePaths({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u').configDir).toBe('/x/yolop');
    expect(resolvePaths({ XDG_CONFIG_HOME: 'relative' }, 'linux', '/home/u').configDir).toBe('/home/u/.config/yolop');
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
    expect(p).toMatchObject({ storeDir: '/c/extensions', lockFile: '/c/extensions/extensions.lock', settingsFile: '/c/settings.toml', secretsFile: '/c/connections.toml' });
    expect(resolvePaths({ YOLOP_CONFIG_DIR: '/c', YOLOP_EXTENSIONS_DIR: '/s' }, 'linux', '/h').lockFile).toBe('/s/extensions.lock');
  });
  it('packageDir refuses names that would escape the store', () => {
    const p = resolvePaths({ YOLOP_CONFIG_DIR: '/c' }, 'linux', '/h');
    expect(packageDir(p, 'lsp')).toBe('/c/extensions/lsp');
    for (const bad of ['../x', 'a/b', '', '.', 'x'.repeat(300), 'ｌｓｐ']) expect(() => packageDir(p, bad)).toThrow(/Invalid extension name/);
  });
});
