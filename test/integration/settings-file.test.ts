import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { disableExtension, enableExtension, readExtensionSettings, removeExtensionSettings, setExtensionConfig } from '../../src/core/settings/settings.js';
import type { Paths } from '../../src/core/paths.js';

let home: TempHome;
let paths: Paths;
beforeEach(() => {
  home = makeTempHome();
  paths = home.ctx().paths;
});
afterEach(() => home.cleanup());

describe('settings.toml on disk', () => {
  it('a missing file reads as not enabled; disable/remove do not create it; enable does', async () => {
    expect(await readExtensionSettings(paths, 'logfire')).toEqual({ present: false, enabled: false, config: {}, kept: {}, entries: 0, instances: [] });
    expect(await disableExtension(paths, 'logfire')).toEqual({ changed: false });
    expect(await removeExtensionSettings(paths, 'logfire')).toEqual({ changed: false });
    expect(existsSync(paths.settingsFile)).toBe(false);
    expect(await enableExtension(paths, 'logfire')).toEqual({ changed: true });
    expect(readFileSync(paths.settingsFile, 'utf8')).toBe('[[capabilities]]\nref = "ext:logfire"\n');
    expect(await enableExtension(paths, 'logfire')).toEqual({ changed: false });
  });

  it('keeps the file mode and writes through a symlink (dotfile setups keep their link)', async () => {
    mkdirSync(home.configDir, { recursive: true });
    const target = join(home.root, 'dotfiles-settings.toml');
    writeFileSync(target, '# dotfiles\n');
    chmodSync(target, 0o640);
    symlinkSync(target, paths.settingsFile);
    await setExtensionConfig(paths, 'logfire', { port: 1 });
    expect(lstatSync(paths.settingsFile).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('# dotfiles\n\n[[capabilities]]\nref = "ext:logfire"\nenabled = false\nport = 1\n');
    expect(statSync(target).mode & 0o777).toBe(0o640);
  });

  it('refuses a file that is not UTF-8 and leaves it as it is', async () => {
    mkdirSync(home.configDir, { recursive: true });
    const bytes = Buffer.from([0x61, 0x20, 0x3d, 0x20, 0x22, 0xff, 0xfe, 0x22, 0x0a]);
    writeFileSync(paths.settingsFile, bytes);
    await expect(enableExtension(paths, 'logfire')).rejects.toMatchObject({ code: 'E_STATE', message: expect.stringContaining('not UTF-8') });
    expect(readFileSync(paths.settingsFile).equals(bytes)).toBe(true);
  });

  it("sweeps a temp file left by a killed write (yep-ext's own name, a dead writer), never a user's numbered copy", async () => {
    mkdirSync(home.configDir, { recursive: true });
    // A pid above Linux's largest (2^22): no process has it.
    writeFileSync(join(home.configDir, '.settings.toml.yep-4194305-0.tmp'), 'half-written');
    writeFileSync(`${paths.settingsFile}.123456`, 'a backup the user made');
    await enableExtension(paths, 'logfire');
    expect(readdirSync(home.configDir).sort()).toEqual(['settings.toml', 'settings.toml.123456']);
    expect(readFileSync(`${paths.settingsFile}.123456`, 'utf8')).toBe('a backup the user made');
  });
});
