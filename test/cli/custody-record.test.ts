/**
 * The host's lock writer keeps four fields of every entry (host-compat §4): after
 * any yolop install, remove or upsert, `grant`, `cksum`, the requirement and binary
 * digests are gone from all of them. yep-ext keeps its own record of each entry
 * (`<store>/.yep-grants/<name>.lock.json`, store/custody.ts), notices a reduced
 * entry, writes the keys back when the content is still the one recorded, says so
 * (`Recovered: …`, verify's `custody_restored`), and reports an entry the host
 * replaced instead of calling it ok. State is read as the host reads it. Needs a build.
 */
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' });
const store = () => join(home.configDir, 'extensions');
const lockFile = () => join(store(), 'extensions.lock');
/** The lock as the host parses it. */
const entries = () => (parse(readFileSync(lockFile(), 'utf8')) as { extensions: Array<Record<string, any>> }).extensions;
const entry = (name: string) => entries().find((e) => e.name === name);
/** What yolop's lock writer leaves: name, content_hash, version and the source's own keys, for every entry. */
const HOST_SOURCE_KEYS: Record<string, string[]> = { crate: ['type', 'crate_name', 'version'], path: ['type', 'path'], git: ['type', 'url', 'rev'] };
function hostRewrite(change: (e: Record<string, any>) => Record<string, any> = (e) => e): void {
  const reduced = entries().map((e) =>
    change({
      name: e.name,
      content_hash: e.content_hash,
      ...(e.version !== undefined ? { version: e.version } : {}),
      source: Object.fromEntries(HOST_SOURCE_KEYS[e.source.type]!.map((k) => [k, e.source[k]])),
    }),
  );
  writeFileSync(lockFile(), stringify({ extensions: reduced }));
}

beforeEach(async () => {
  reg = await startRegistry();
  home = makeTempHome();
  reg.publish({
    name: HELLO,
    vers: '1.0.0',
    data: fixtureCrate(HELLO, '1.0.0', {
      files: {
        'plugin.json': JSON.stringify({
          name: 'hello',
          version: '1.0.0',
          yolop: { capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }] },
        }),
      },
    }),
  });
  const pkg = writePackage(join(home.root, 'src', 'local'), { name: 'local' });
  for (const spec of ['hello@^1', pkg]) {
    const r = await runCli(['install', spec], { env: env() });
    expect(r.code, r.stderr).toBe(0);
  }
});
afterEach(async () => {
  await reg.close();
  home.cleanup();
});

describe('a yolop lock write drops yep-ext keys from every entry', () => {
  it('verify notices it, writes the keys back (the content still matches), and says so', async () => {
    const before = entries();
    expect(entry('hello')).toMatchObject({ grant: expect.any(String), source: { cksum: expect.any(String), requirement: '^1' } });
    hostRewrite();
    expect(entry('hello')?.grant).toBeUndefined();
    expect(entry('local')?.grant).toBeUndefined();
    const r = await runCli(['verify', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const report = jsonOf(r);
    expect(report.custody_restored).toEqual([
      { name: 'hello', keys: ['grant', 'source.cksum', 'source.requirement', 'source.index'] },
      { name: 'local', keys: ['grant'] },
    ]);
    expect(r.stderr).toContain("Recovered: restored hello's grant, source.cksum, source.requirement, source.index in extensions.lock");
    // The lock, as the host reads it, holds every key again, exactly as yep-ext wrote them.
    expect(entries()).toEqual(before);
  });

  it('each run reports what it restored itself: the next verify in the same store, with nothing left to restore, reports none', async () => {
    hostRewrite();
    expect(jsonOf(await runCli(['verify', '--json'], { env: env() })).custody_restored).toHaveLength(2);
    const again = await runCli(['verify', '--json'], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(jsonOf(again).custody_restored).toEqual([]);
    expect(again.stderr).not.toContain('Recovered');
  });

  it("a host rewrite in the records' own clock tick (the same file time) is noticed too; yep-ext's own lock at that time is left alone", async () => {
    const grants = join(store(), '.yep-grants');
    const sameTime = (): void => {
      const t = new Date();
      utimesSync(lockFile(), t, t);
      for (const n of readdirSync(grants)) utimesSync(join(grants, n), t, t);
    };
    const before = entries();
    sameTime();
    const own = await runCli(['verify', '--json'], { env: env() });
    expect(own.code, own.stderr).toBe(0);
    expect(jsonOf(own).custody_restored).toEqual([]);
    hostRewrite();
    sameTime();
    const r = await runCli(['verify', '--json'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonOf(r).custody_restored.map((e: { name: string }) => e.name)).toEqual(['hello', 'local']);
    expect(entries()).toEqual(before);
  });

  it('commands that only read the lock read a reduced entry with the keys it lost, and write nothing: outdated offers what update takes, lock export and policy check keep the recorded index', async () => {
    // A major release the entry's requirement (^1, which the host's writer dropped) does not take.
    const manifest = JSON.stringify({ name: 'hello', version: '2.0.0', yolop: { capabilityServer: { command: 'hello-server' }, tools: [{ name: 'greet' }] } });
    reg.publish({ name: HELLO, vers: '2.0.0', data: fixtureCrate(HELLO, '2.0.0', { files: { 'plugin.json': manifest } }) });
    const before = entries();
    hostRewrite();
    const reduced = readFileSync(lockFile());
    const outdated = await runCli(['outdated', '--json'], { env: env() });
    expect(outdated.code, outdated.stderr).toBe(0);
    const row = jsonOf(outdated).outdated.find((o: { name: string }) => o.name === 'hello');
    expect(row).toMatchObject({ requirement: '^1', wanted: '1.0.0', latest: '2.0.0' });
    const exported = join(home.root, 'yolop-extensions.lock');
    const ex = await runCli(['lock', 'export', exported], { env: env() });
    expect(ex.code, ex.stderr).toBe(0);
    // The export is what yep-ext pinned: the registry hello came from, its cksum, requirement and grant.
    expect((parse(readFileSync(exported, 'utf8')) as { extensions: unknown[] }).extensions).toEqual(before);
    // A policy admitting only the registry hello came from: hello is admitted (its origin is not taken for crates.io).
    writeFileSync(home.env.YEP_EXT_POLICY!, stringify({ sources: { index_urls: [reg.indexUrl] } }));
    const check = await runCli(['policy', 'check', '--json'], { env: env() });
    expect(check.code, check.stdout).toBe(0);
    for (const args of [
      ['list', '--json'],
      ['info', 'hello', '--json'],
    ])
      expect((await runCli(args, { env: env() })).code).toBe(0);
    // list notices it: the keys the lock lost, and what writes them back.
    const listed = await runCli(['list'], { env: env() });
    expect(listed.stderr).toContain("a yolop lock write dropped hello's grant, source.cksum, source.requirement, source.index");
    expect(readFileSync(lockFile()).equals(reduced), 'no reading command wrote the lock').toBe(true);
    // The next command that writes restores the lock itself, and update keeps to the requirement.
    const up = await runCli(['update', 'hello', '--yes'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    expect(entries()).toEqual(before);
  });

  it('install --frozen restores them too before it compares, and the lock it leaves is the full one', async () => {
    const before = entries();
    hostRewrite();
    const r = await runCli(['install', '--frozen'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("Recovered: restored hello's grant");
    expect(entries()).toEqual(before);
  });

  it('an entry the host replaced (other content, no grant) is not restored: verify reports it (exit 5)', async () => {
    hostRewrite((e) => (e.name === 'hello' ? { ...e, content_hash: `sha256:${'0'.repeat(64)}` } : e));
    const replaced = entry('hello');
    const r = await runCli(['verify', '--json'], { env: env() });
    expect(r.code).toBe(5);
    const item = jsonOf(r).error.details.extensions.find((e: { name: string }) => e.name === 'hello');
    expect(item.problems).toContainEqual(
      expect.objectContaining({ kind: 'custody', message: expect.stringContaining('no longer holds what yep-ext approved') }),
    );
    expect(entry('hello')).toEqual(replaced);
    // The other entry, still matching, was restored.
    expect(entry('local')?.grant).toEqual(expect.any(String));
  });

  it('remove takes the record away with the entry', async () => {
    expect(existsSync(join(store(), '.yep-grants', 'local.lock.json'))).toBe(true);
    expect((await runCli(['remove', 'local'], { env: env() })).code).toBe(0);
    expect(existsSync(join(store(), '.yep-grants', 'local.lock.json'))).toBe(false);
  });
});
