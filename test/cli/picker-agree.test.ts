/**
 * One version picker: `outdated`, `info`, `update` and `install` give one answer on
 * the same registry state (a real loopback registry, real .crate files, the built
 * CLI): the release-age cooldown (the user's and the policy's floor), yanked
 * versions, `engines.yolop`, and a newer release outside the requirement, whose
 * command (`yep-ext install hello@^0.2`) is the one every command names and the one
 * that then installs it. Also: `update` with no names updates everything within its
 * requirement; the outdated table at 80 columns keeps the whole command; a git tag
 * reads as the tag in list, info and outdated.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { fakeAgent, pathWithoutAgent } from '../helpers/fake-agent.js';
import { fixtureFiles, makeRepo } from '../helpers/git-repo.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { runCliInPty, screenOf, SKIP_PTY } from '../helpers/pty.js';
import { pubtimeAgo, startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let reg: TestRegistry;
let home: TempHome;

function manifest(name: string, version: string, engines?: string): string {
  return JSON.stringify({
    name,
    version,
    ...(engines ? { engines: { yolop: engines } } : {}),
    yolop: { capabilityServer: { command: `${name}-server` }, tools: [{ name: 'greet' }] },
  });
}
/** Publish `crate` at `vers`, `age` ms old (no pubtime: old), yanked or needing a yolop range. */
function publish(vers: string, o: { age?: number; yanked?: boolean; engines?: string; name?: string } = {}): void {
  const name = o.name ?? 'hello';
  const crate = `yolop-extension-${name}`;
  reg.publish({
    name: crate,
    vers,
    data: fixtureCrate(HELLO, vers, { publishAs: crate, files: { 'plugin.json': manifest(name, vers, o.engines) } }),
    ...(o.yanked ? { yanked: true } : {}),
    ...(o.age !== undefined ? { extra: { pubtime: pubtimeAgo(o.age) } } : {}),
  });
}
const env = (extra: Record<string, string> = {}): Record<string, string> => {
  const agent = fakeAgent(join(home.root, 'agent'), '0.12.1');
  return { ...home.env, PATH: `${agent.dir}:${pathWithoutAgent()}`, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', ...extra };
};
const lockFile = () => join(home.configDir, 'extensions', 'extensions.lock');
const lockText = () => readFileSync(lockFile(), 'utf8');
/** The locked version of `name`, as the host reads extensions.lock. */
const locked = (name = 'hello') =>
  (parse(lockText()) as { extensions: Array<{ name: string; source: { version?: string } }> }).extensions.find((e) => e.name === name)?.source.version;
const cli = async (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: env(extra) });

/** outdated's row, info's upstream and update's item for hello, each from its own run. */
async function threeAnswers(extra: Record<string, string> = {}) {
  const [o, i, u] = await Promise.all([
    cli(['outdated', '--json'], extra),
    cli(['info', 'hello', '--json'], extra),
    cli(['update', 'hello', '--json', '--dry-run'], extra),
  ]);
  for (const r of [o, i, u]) expect(r.code, r.stderr).toBe(0);
  return {
    row: jsonOf(o).outdated.find((x: { name: string }) => x.name === 'hello'),
    upstream: jsonOf(i).upstream,
    item: jsonOf(u).updates[0],
    stderr: { outdated: o.stderr, info: i.stderr, update: u.stderr },
  };
}

beforeEach(async () => {
  reg = await startRegistry();
  home = makeTempHome('yep-picker-');
});
afterEach(async () => {
  await reg.close();
  home.cleanup();
});

describe('outdated, info, update and install agree', () => {
  it('a newer release only outside the requirement: no "can be updated", one command, and it is the install that takes it', async () => {
    publish('0.1.0');
    expect((await cli(['install', 'hello@^0.1', '--yes'])).code).toBe(0);
    publish('0.2.0');
    const before = lockText();
    const { row, upstream, item } = await threeAnswers();
    const outside = { version: '0.2.0', requirement: '^0.1', spec: 'hello@^0.2' };
    expect(row).toMatchObject({ status: 'beyond', wanted: '0.1.0', latest: '0.2.0', hint: 'yep-ext install hello@^0.2', newer_outside: outside });
    expect(upstream).toMatchObject({ status: 'beyond', wanted: '0.1.0', hint: 'yep-ext install hello@^0.2', newer_outside: outside });
    expect(item).toMatchObject({ status: 'up-to-date', to: null, newer_outside: outside });
    // The same words in all three for people; outdated never says "can be updated" for it.
    const text = '0.2.0 exists outside ^0.1: `yep-ext install hello@^0.2`';
    const [o, i, u] = await Promise.all([cli(['outdated']), cli(['info', 'hello']), cli(['update'])]);
    for (const r of [o, i, u]) expect(r.stdout, r.stderr).toContain(text);
    expect(o.stdout).not.toContain('can be updated');
    expect(lockText()).toBe(before);
    // The command they name moves it.
    expect((await cli(['install', outside.spec, '--yes'])).code).toBe(0);
    expect(locked()).toBe('0.2.0');
  });

  it('an exact pin (hello@0.1.0) reads as =0.1.0 in all three: a bare 0.1.0 is ^0.1.0 to a cargo user, which 0.1.1 would be within', async () => {
    publish('0.1.0');
    expect((await cli(['install', 'hello@0.1.0', '--yes'])).code).toBe(0);
    publish('0.1.1');
    publish('0.2.0');
    const [o, i, u] = await Promise.all([cli(['outdated']), cli(['info', 'hello']), cli(['update'])]);
    for (const r of [o, i, u]) expect(r.stdout, r.stderr).toContain('0.2.0 exists outside =0.1.0: `yep-ext install hello@^0.2`');
    expect(locked()).toBe('0.1.0');
  });

  it('the release-age cooldown (YEP_EXT_MIN_AGE, --min-age): a young version is no update in any of them', async () => {
    publish('0.1.0', { age: 30 * DAY });
    expect((await cli(['install', 'hello@^0.1', '--yes'])).code).toBe(0);
    publish('0.1.1', { age: HOUR }); // within ^0.1, too young
    publish('0.2.0', { age: 10 * DAY }); // outside, old enough
    publish('0.3.0', { age: HOUR }); // outside, too young
    const before = lockText();
    const { row, upstream, item, stderr } = await threeAnswers({ YEP_EXT_MIN_AGE: '3d' });
    const outside = { version: '0.2.0', requirement: '^0.1', spec: 'hello@^0.2' };
    expect(row).toMatchObject({ status: 'beyond', wanted: '0.1.0', latest: '0.2.0', newer_outside: outside });
    expect(upstream).toMatchObject({ status: 'beyond', wanted: '0.1.0', latest: '0.2.0', newer_outside: outside });
    expect(item).toMatchObject({ status: 'up-to-date', newer_outside: outside });
    for (const s of Object.values(stderr))
      expect(s).toMatch(/skipped yolop-extension-hello 0\.1\.1 is 1 h old; cooldown 3 d \(YEP_EXT_MIN_AGE\); keeping 0\.1\.0/);
    // --min-age says the same to outdated and info as to update.
    const flagged = await cli(['outdated', '--json', '--min-age', '3d']);
    expect(jsonOf(flagged).outdated[0]).toEqual(row);
    expect(jsonOf(await cli(['info', 'hello', '--json', '--min-age', '3d'])).upstream).toEqual(upstream);
    // update really stays; install of the named spec takes 0.2.0, not the young 0.3.0.
    expect((await cli(['update', '--yes'], { YEP_EXT_MIN_AGE: '3d' })).code).toBe(0);
    expect(lockText()).toBe(before);
    expect((await cli(['install', outside.spec, '--yes'], { YEP_EXT_MIN_AGE: '3d' })).code).toBe(0);
    expect(locked()).toBe('0.2.0');
    // Without the cooldown, all of them move to the young versions.
    const free = await threeAnswers();
    expect(free.row).toMatchObject({ status: 'beyond', latest: '0.3.0', newer_outside: { version: '0.3.0', spec: 'hello@^0.3' } });
  });

  it("the policy file's min_age is the same floor for outdated and info as for update", async () => {
    publish('0.1.0', { age: 30 * DAY });
    expect((await cli(['install', 'hello@^0.1', '--yes'])).code).toBe(0);
    publish('0.1.1', { age: HOUR });
    mkdirSync(home.configDir, { recursive: true });
    writeFileSync(join(home.configDir, 'yep-ext-policy.toml'), '[cooldown]\nmin_age = "2d"\n');
    const { row, upstream, item } = await threeAnswers();
    expect(row).toMatchObject({ status: 'up-to-date', wanted: '0.1.0', hint: null, newer_outside: null });
    expect(upstream).toMatchObject({ status: 'up-to-date', wanted: '0.1.0' });
    expect(item).toMatchObject({ status: 'up-to-date' });
  });

  it('yanked: a yanked newer version is no update; the installed version yanked is "up to date" in update as in outdated, not a failed update', async () => {
    publish('0.2.0', { yanked: true, name: 'gone' });
    publish('0.2.1', { yanked: true, name: 'gone' });
    expect((await cli(['install', 'gone@=0.2.0', '--yes'])).code).toBe(0);
    // Installed under ^0.2 before the yank (cargo keeps a locked yanked version too).
    writeFileSync(lockFile(), lockText().replace('requirement = "=0.2.0"', 'requirement = "^0.2"'));
    const before = lockText();
    const u = await cli(['update', '--json']);
    expect(u.code, u.stderr).toBe(0);
    expect(jsonOf(u).updates[0]).toMatchObject({ name: 'gone', status: 'up-to-date' });
    expect(jsonOf(await cli(['outdated', '--json'])).outdated[0]).toMatchObject({ name: 'gone', status: 'up-to-date', wanted: '0.2.0' });
    expect(lockText()).toBe(before);
  });

  it('engines.yolop: a newer version yolop cannot run is no update; the install outdated names is the one that runs', async () => {
    publish('0.1.0');
    expect((await cli(['install', 'hello@^0.1', '--yes'])).code).toBe(0);
    publish('0.1.1', { engines: '>=0.13' }); // within, needs a newer yolop
    publish('0.2.0', { engines: '>=0.10' }); // outside, runs on 0.12.1
    const outdated = jsonOf(await cli(['outdated', '--json'])).outdated[0];
    expect(outdated).toMatchObject({ status: 'beyond', hint: 'yep-ext install hello@^0.2', newer_outside: { version: '0.2.0', spec: 'hello@^0.2' } });
    const before = lockText();
    const u = await cli(['update', 'hello', '--json']);
    expect(u.code, u.stderr).toBe(0);
    expect(jsonOf(u).updates[0]).toMatchObject({ status: 'held', newer_outside: { version: '0.2.0', spec: 'hello@^0.2' } });
    expect(lockText()).toBe(before);
    expect((await cli(['install', 'hello@^0.2', '--yes'])).code).toBe(0);
    expect(locked()).toBe('0.2.0');
  });

  it('engines.yolop: five newer lines outside the requirement do not hide the update within it (one walk order)', async () => {
    publish('0.1.0');
    expect((await cli(['install', 'hello@^0.1', '--yes'])).code).toBe(0);
    publish('0.1.1'); // within: runs on 0.12.1
    for (const minor of [2, 3, 4, 5, 6]) publish(`0.${minor}.0`, { engines: '>=0.13' }); // outside: none runs
    const row = jsonOf(await cli(['outdated', '--json'])).outdated[0];
    expect(row).toMatchObject({ status: 'update', wanted: '0.1.1', hint: 'yep-ext update hello', newer_outside: null });
    expect(row.newer_engines).toMatchObject({ runnable_in_requirement: '0.1.1', runnable: '0.1.1', tried: 5 });
    const u = await cli(['update', 'hello', '--json']);
    expect(u.code, u.stderr).toBe(0);
    expect(jsonOf(u).updates[0]).toMatchObject({ status: 'updated', to: { version: '0.1.1' } });
    expect(locked()).toBe('0.1.1');
  });
});

describe('update with no names', () => {
  it('updates every extension within its requirement (--all is the same); never past it', async () => {
    publish('0.1.0');
    publish('1.0.0', { name: 'other' });
    expect((await cli(['install', 'hello@^0.1', 'other', '--yes'])).code).toBe(0);
    publish('0.1.1');
    publish('0.2.0');
    publish('1.1.0', { name: 'other' });
    const dry = await cli(['update', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(jsonOf(dry).updates.map((i: { name: string; status: string }) => `${i.name}:${i.status}`)).toEqual(['hello:would-update', 'other:would-update']);
    const r = await cli(['update', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).updates.map((i: { name: string; status: string }) => `${i.name}:${i.status}`)).toEqual(['hello:updated', 'other:updated']);
    expect(jsonOf(r).updates[0].newer_outside).toEqual({ version: '0.2.0', requirement: '^0.1', spec: 'hello@^0.2' });
    expect([locked('hello'), locked('other')]).toEqual(['0.1.1', '1.1.0']);
    const again = await cli(['update', '--all', '--json']);
    expect(jsonOf(again).updates.map((i: { status: string }) => i.status)).toEqual(['up-to-date', 'up-to-date']);
  });

  it('outdated NAME… checks only those (npm outdated <pkg>): its rows alone, --exit-code judged on them, a typo exit 3 with the nearest name', async () => {
    publish('0.1.0');
    publish('0.1.0', { name: 'other' });
    expect((await cli(['install', 'hello@^0.1', 'other@^0.1', '--yes'])).code).toBe(0);
    publish('0.1.1');
    const one = await cli(['outdated', 'hello', '--json']);
    expect(one.code, one.stderr).toBe(0);
    expect(jsonOf(one).outdated.map((r: { name: string }) => r.name)).toEqual(['hello']);
    expect((await cli(['outdated', 'yolop-extension-other', '--exit-code'])).code).toBe(0);
    expect((await cli(['outdated', 'other', 'hello', '--exit-code'])).code).toBe(14);
    const both = await cli(['outdated', 'other', 'hello', '--json']);
    expect(jsonOf(both).outdated.map((r: { name: string }) => r.name)).toEqual(['hello', 'other']);
    const typo = await cli(['outdated', 'helo']);
    expect(typo.code).toBe(3);
    expect(typo.stderr).toContain('Did you mean `hello`?');
  });

  it('nothing installed: says so, exit 0, an empty list in --json', async () => {
    const r = await cli(['update']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Nothing to update: no extension is installed.');
    const j = await cli(['update', '--json']);
    expect(j.code).toBe(0);
    expect(jsonOf(j)).toEqual({ updates: [] });
  });
});

describe.skipIf(SKIP_PTY)('outdated on an 80-column terminal', () => {
  it('the status cell is folded, never cut: each command is there whole, on one line where the column holds it', async () => {
    publish('0.1.0', { name: 'language-server-protocol' });
    expect((await cli(['install', 'language-server-protocol@^0.1', '--yes'])).code).toBe(0);
    publish('0.1.1', { name: 'language-server-protocol' });
    publish('0.2.0', { name: 'language-server-protocol' });
    publish('0.1.0');
    expect((await cli(['install', 'hello@^0.1', '--yes'])).code).toBe(0);
    publish('0.2.0');
    const r = await runCliInPty(['outdated'], { env: env(), cols: 80 });
    const screen = screenOf(r.output);
    const lines = screen.split('\n');
    const top = lines.findIndex((l) => /^name +current/.test(l));
    const at = lines[top]!.indexOf('status');
    const table = lines.slice(top).filter((l) => l.trim() !== '');
    expect(table.length).toBeGreaterThan(1);
    for (const l of table) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(table.join('\n')).not.toContain('…');
    // The status column's lines, read in order, hold both commands, every character of them.
    const status = table
      .slice(1)
      .map((l) => l.slice(at).trim())
      .join('');
    const squeezed = (t: string) => t.replace(/\s+/g, '');
    expect(squeezed(status)).toContain(squeezed('update: `yep-ext update language-server-protocol`'));
    expect(squeezed(status)).toContain(squeezed('0.2.0 exists outside ^0.1: `yep-ext install language-server-protocol@^0.2`'));
    // hello's command fits the column: it is on one line, to copy as it is (not `yep-ext / install hello@^0.2`).
    const column = table.slice(1).map((l) => l.slice(at).trimEnd());
    expect(Math.max(...column.map((l) => l.length))).toBeGreaterThanOrEqual('`yep-ext install hello@^0.2`'.length);
    expect(column.some((l) => l.includes('`yep-ext install hello@^0.2`'))).toBe(true);
  });
});

describe('a git ref that is a tag reads as the tag', () => {
  it('list, info and outdated show v1.0.0 where the lock records the tag', async () => {
    const repo = makeRepo(join(home.root, 'repos'), { files: fixtureFiles('gitext', '1.0.0') });
    repo.tag('v1.0.0');
    expect((await cli(['install', `${repo.url}@v1.0.0`, '--yes'])).code).toBe(0);
    expect(lockText()).toContain('ref_kind = "tag"');
    const list = await cli(['list']);
    expect(list.stdout).toContain(`${repo.url}@v1.0.0`);
    const info = await cli(['info', 'gitext', '--json']);
    expect(jsonOf(info)).toMatchObject({ source_text: `${repo.url}@v1.0.0`, upstream: { tag: 'v1.0.0', status: 'up-to-date' } });
    expect((await cli(['info', 'gitext'])).stdout).toContain('wanted v1.0.0, latest v1.0.0: up to date');
    const out = await cli(['outdated', '--json']);
    expect(jsonOf(out).outdated[0]).toMatchObject({ tag: 'v1.0.0', status: 'up-to-date' });
    expect((await cli(['outdated'])).stdout).toContain('gitext\tv1.0.0\tv1.0.0\tv1.0.0\tup to date');
  });
});
