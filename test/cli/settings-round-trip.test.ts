/**
 * `disable NAME` then `enable NAME` (and `enable` then `disable` from disabled) give
 * settings.toml back as the user wrote it, whatever shape it has: an `enabled = false`
 * the user wrote by hand on an earlier table, a second plain table (the host merges it
 * into the first instance), an `append = true` table (a second instance), a commented
 * `enabled = true`, CRLF line endings, dotted keys and a sub-table, and the same in a
 * profile file. Each case checks the bytes and what the host runs (every instance
 * and its config, test/helpers/settings-model.ts), before and after.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { hostInstances, hostRuns } from '../helpers/settings-model.js';

const SCHEMA = { type: 'object', properties: { endpoint: { type: 'string' }, port: { type: 'integer' } } };
const cap = (...rows: string[]) => `[[capabilities]]\n${rows.join('\n')}\n`;

let home: TempHome;
const settingsFile = () => join(home.configDir, 'settings.toml');
const profileFile = () => join(home.configDir, 'profiles', 'work.toml');

beforeEach(async () => {
  home = makeTempHome();
  const pkg = writePackage(join(home.root, 'src', 'x'), { name: 'x', yolop: { config_schema: SCHEMA } });
  const r = await runCli(['install', pkg], { env: home.env });
  expect(r.code, r.stderr).toBe(0);
  mkdirSync(join(home.configDir, 'profiles'), { recursive: true });
});
afterEach(() => home.cleanup());

async function ok(...args: string[]): Promise<void> {
  const r = await runCli([...args, '--json'], { env: home.env });
  expect(r.code, `${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(0);
}

const SHAPES: [string, string][] = [
  [
    'an enabled = false the user wrote on an earlier table, then a table with config of its own',
    `# mine\n${cap('ref = "ext:x"', 'enabled = false # paused', 'endpoint = "https://old.example"')}\n${cap('ref = "ext:x"', 'port = 1')}`,
  ],
  [
    'a disabled table with config, then the bare table the host appends on its enable',
    `${cap('ref = "ext:x"', 'endpoint = "https://kept.example"', 'enabled = false')}\n${cap('ref = "ext:x"')}`,
  ],
  [
    'two plain tables (the host merges the second into the first instance)',
    `${cap('ref = "ext:x"', 'endpoint = "a"', 'port = 1')}\n${cap('ref = "ext:x"', 'endpoint = "b"')}`,
  ],
  [
    'an append = true table (a second instance)',
    `${cap('ref = "ext:x"', 'endpoint = "a"')}\n${cap('ref = "ext:x"', 'append = true # second server', 'endpoint = "b"')}`,
  ],
  ['a commented enabled = true', cap('ref = "ext:x"', 'endpoint = "a"', 'enabled = true # on')],
  ['CRLF, a dotted key and a sub-table', cap('id = "ext:x"', 'opts.deep = 1', 'endpoint = "a"', '[capabilities.extra]', 'k = "v"').replaceAll('\n', '\r\n')],
  [
    'an enabled = false the user wrote between two tables with config',
    `${cap('ref = "ext:x"', 'endpoint = "a"')}${cap('ref = "ext:x"', 'enabled = false')}${cap('ref = "ext:x"', 'port = 2')}`,
  ],
];

describe('disable then enable gives the file back', () => {
  it.each(SHAPES)('%s: byte for byte, and the host runs what it ran before', async (_what, text) => {
    writeFileSync(settingsFile(), text);
    const before = hostInstances(text, 'x');
    expect(before.length).toBeGreaterThan(0);
    await ok('disable', 'x');
    expect(hostRuns(readFileSync(settingsFile(), 'utf8'), 'x').enabled).toBe(false);
    await ok('enable', 'x');
    expect(readFileSync(settingsFile(), 'utf8')).toBe(text);
    expect(hostInstances(readFileSync(settingsFile(), 'utf8'), 'x')).toEqual(before);
  });

  it('enable then disable of an extension disabled by hand (a commented line) gives the file back', async () => {
    const text = `${cap('ref = "ext:x"', 'endpoint = "a"')}\n${cap('ref = "ext:x"', 'port = 3', 'enabled = false # not now')}`;
    writeFileSync(settingsFile(), text);
    await ok('enable', 'x');
    const middle = readFileSync(settingsFile(), 'utf8');
    // The user's line keeps its place and comment; only its value turns.
    expect(middle).toBe(text.replace('enabled = false # not now', 'enabled = true # not now'));
    expect(hostRuns(middle, 'x')).toEqual({ enabled: true, config: { endpoint: 'a', port: 3 } });
    await ok('disable', 'x');
    expect(readFileSync(settingsFile(), 'utf8')).toBe(text);
  });

  it('in a profile file: the base file byte for byte, the profile given back, the host reading under the profile the same', async () => {
    const base = cap('ref = "ext:x"', 'endpoint = "https://base.example"');
    const profile = `${cap('ref = "ext:x"', 'enabled = false # off at work')}\n${cap('ref = "ext:x"', 'port = 9')}`;
    writeFileSync(settingsFile(), base);
    writeFileSync(profileFile(), profile);
    const before = hostInstances(base, 'x', profile);
    await ok('disable', 'x', '--profile', 'work');
    expect(hostRuns(base, 'x', readFileSync(profileFile(), 'utf8')).enabled).toBe(false);
    await ok('enable', 'x', '--profile', 'work');
    expect(readFileSync(profileFile(), 'utf8')).toBe(profile);
    expect(readFileSync(settingsFile(), 'utf8')).toBe(base);
    expect(hostInstances(base, 'x', readFileSync(profileFile(), 'utf8'))).toEqual(before);
  });
});
