/**
 * Lock and settings parse errors point at the spot: the message names
 * `file:line:column` (and says "line L, column C"), `--json` carries
 * `error.details: {file, line, column}`, the exit is 7 (E_STATE, docs/exit-codes.md),
 * and nothing is written: the broken file keeps its bytes, nothing is placed.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';

let home: TempHome;
const store = () => join(home.configDir, 'extensions');
const lockFile = () => join(store(), 'extensions.lock');
const settingsFile = () => join(home.configDir, 'settings.toml');

beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

describe('a lock with a syntax error on line 3', () => {
  const BROKEN = '# extensions.lock\n[[extensions]]\nname = = "echo"\n';

  beforeEach(() => {
    mkdirSync(store(), { recursive: true });
    writeFileSync(lockFile(), BROKEN);
  });

  it('list and install name file, line and column; exit 7; nothing written', async () => {
    const list = await runCli(['list'], { env: home.env });
    expect(list.code).toBe(7);
    expect(list.stderr).toContain(`${lockFile()}:3:8`);
    expect(list.stderr).toContain('line 3, column 8');

    const dir = writePackage(join(home.root, 'pkgs', 'echo'), { name: 'echo' });
    const install = await runCli(['install', dir, '--json'], { env: home.env });
    expect(install.code).toBe(7);
    const { error } = jsonOf(install);
    expect(error.code).toBe('E_STATE');
    expect(error.message).toContain('extensions.lock:3:');
    expect(error.details).toEqual({ file: lockFile(), line: 3, column: 8 });

    expect(readFileSync(lockFile(), 'utf8')).toBe(BROKEN);
    expect(readdirSync(store()).filter((n) => !n.startsWith('.yep-'))).toEqual(['extensions.lock']);
    expect(existsSync(join(store(), 'echo'))).toBe(false);
  });
});

describe('a settings file with a syntax error on line 2', () => {
  it('enable names file, line and column; exit 7; the file keeps its bytes', async () => {
    const dir = writePackage(join(home.root, 'pkgs', 'echo'), { name: 'echo' });
    expect((await runCli(['install', dir], { env: home.env })).code).toBe(0);
    const BROKEN = '[extensions]\nenabled = ["echo"\n';
    writeFileSync(settingsFile(), BROKEN);

    const human = await runCli(['enable', 'echo'], { env: home.env });
    expect(human.code).toBe(7);
    expect(human.stderr).toMatch(/settings\.toml:[23]:\d+/);
    const { error } = jsonOf(await runCli(['enable', 'echo', '--json'], { env: home.env }));
    expect(error.code).toBe('E_STATE');
    expect(error.details).toMatchObject({ file: settingsFile() });
    expect(error.details.line).toBeGreaterThanOrEqual(2);
    expect(typeof error.details.column).toBe('number');
    expect(error.message).toContain(`${settingsFile()}:${error.details.line}:${error.details.column}`);
    expect(readFileSync(settingsFile(), 'utf8')).toBe(BROKEN);
  });
});
