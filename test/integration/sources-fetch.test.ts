/**
 * Each Source's effectful half against real things (the loopback registry, a real
 * git repository, a real directory): what `fetch` records, `fetchExactly` of that
 * record reproduces byte for byte (the contract frozen, reinstall, verify and mirror
 * build on), and `update`'s next pin (the kind's upstream) moves only within the
 * recorded intent, keeping it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { sourceFor, type LockSource, type ValidSpec } from '../../src/core/sources/index.js';
import { updateCandidates, upstreamOf } from '../../src/core/operations/offer.js';
import type { Fetched } from '../../src/core/sources/source.js';
import { parseSpec } from '../../src/core/sources/spec.js';
import { parseLock, serializeLock } from '../../src/core/store/lockfile.js';
import { fixtureCrate } from '../helpers/crates.js';
import { fixtureFiles, makeRepo, type TestRepo } from '../helpers/git-repo.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const HELLO = 'yolop-extension-hello';
let reg: TestRegistry;
let home: TempHome;
let repo: TestRepo;
let pkg: string;
let n = 0;

beforeAll(async () => {
  reg = await startRegistry();
  reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0') });
  home = makeTempHome('yep-sources-');
  repo = makeRepo(join(home.root, 'repos'), { files: fixtureFiles('gitext', '1.0.0') });
  repo.tag('v1.0.0');
  pkg = writePackage(join(home.root, 'pkgs', 'local'), { name: 'local' });
  mkdirSync(join(home.root, 'stage'));
});
afterAll(async () => {
  await reg.close();
  home.cleanup();
});

const ctx = () => home.ctx({ ...FAST_HTTP_ENV, YEP_EXT_INDEX: reg.indexUrl });
const into = () => join(home.root, 'stage', `pkg${n++}`);
/** What install fetches for `spec` (--ignore-engines: the best candidate), as install.ts does. */
async function fetchSpec(spec: ValidSpec, dir: string): Promise<Fetched<LockSource>> {
  const source = sourceFor(spec.kind);
  if (!source.candidates) return source.fetch!(ctx(), spec, dir);
  const { records } = await source.candidates(ctx(), spec);
  return source.fetchExactly(ctx(), records[0]!, dir);
}
/** The pin `update` moves `rec` to (undefined: up to date), from the one upstream answer. */
async function nextPin(rec: LockSource): Promise<LockSource | undefined> {
  const entry = { name: 'x', content_hash: `sha256:${'0'.repeat(64)}`, source: rec };
  return updateCandidates(entry, await upstreamOf(ctx(), entry))[0];
}
/** The record as the lock holds it: written, then read back. */
const throughLock = (source: LockSource): LockSource =>
  parseLock(serializeLock({ extra: {}, entries: [{ name: 'x', content_hash: `sha256:${'0'.repeat(64)}`, source }] })).entries[0]!.source;

describe.each([
  ['crate', () => `${HELLO}@^0.3`],
  ['git', () => `${repo.url}@v1.0.0`],
  ['path', () => pkg],
])('the %s source', (kind, text) => {
  let recorded: LockSource;
  let hash: string;

  it('fetch records what it fetched', async () => {
    const spec = parseSpec(text(), home.root) as ValidSpec;
    expect(spec.kind).toBe(kind);
    const got = await fetchSpec(spec, into());
    expect(got.source.type).toBe(kind);
    recorded = got.source;
    hash = await contentHash(got.dir);
  });

  it('fetchExactly of the record read back from the lock gives the same record and the same bytes', async () => {
    const rec = throughLock(recorded);
    const again = await sourceFor(rec.type).fetchExactly(ctx(), rec, into());
    expect(again.source).toEqual(recorded);
    expect(await contentHash(again.dir)).toBe(hash);
  });

  it('update: nothing newer is "up to date" (a linked kind answers its own record: re-read)', async () => {
    const rec = throughLock(recorded);
    const next = await nextPin(rec);
    expect(next).toEqual(sourceFor(rec.type).linked ? rec : undefined);
  });
});

describe('update moves within the recorded intent and keeps it', () => {
  it('crate: the newest version the requirement allows, requirement kept', async () => {
    reg.publish({ name: HELLO, vers: '0.3.5', data: fixtureCrate(HELLO, '0.3.5') });
    reg.publish({ name: HELLO, vers: '0.4.0', data: fixtureCrate(HELLO, '0.4.0') });
    const got = await fetchSpec(parseSpec(`${HELLO}@=0.3.0`) as ValidSpec, into());
    const loose = { ...got.source, requirement: '^0.3' } as LockSource;
    const next = await nextPin(loose);
    expect(next).toMatchObject({ type: 'crate', crate_name: HELLO, version: '0.3.5', requirement: '^0.3' });
    const fetched = await sourceFor('crate').fetchExactly(ctx(), next!, into());
    expect(fetched.source).toMatchObject({ version: '0.3.5', requirement: '^0.3' });
    // Pinned exactly: nothing to move to.
    expect(await nextPin(got.source)).toBeUndefined();
  });

  it('git: the recorded tag moved, ref kept; a commit given as the ref never moves', async () => {
    const got = await fetchSpec(parseSpec(`${repo.url}#v1.0.0`) as ValidSpec, into());
    const second = repo.commit({ 'NOTES.md': 'second\n' }, 'second');
    repo.git(['tag', '-f', '-a', '-m', 'moved', 'v1.0.0', second]);
    repo.git(['push', '--quiet', '--force', 'origin', 'refs/tags/v1.0.0']);
    const next = await nextPin(got.source);
    expect(next).toEqual({ type: 'git', url: repo.url, rev: second, requested_ref: 'v1.0.0', ref_kind: 'tag' });
    const fetched = await sourceFor('git').fetchExactly(ctx(), next!, into());
    expect(fetched.source).toEqual(next);
    const bySha = { ...got.source, requested_ref: got.source.type === 'git' ? got.source.rev : '' } as LockSource;
    expect(await nextPin(bySha)).toBeUndefined();
  });

  it('path: an edited directory is re-read at the same record', async () => {
    const got = await fetchSpec(parseSpec(pkg) as ValidSpec, into());
    const before = await contentHash(got.dir);
    writeFileSync(join(pkg, 'EDITED'), 'x\n');
    const next = await nextPin(got.source);
    expect(next).toEqual(got.source);
    const again = await sourceFor('path').fetchExactly(ctx(), next!, into());
    expect(again.dir).toBe(got.dir);
    expect(await contentHash(again.dir)).not.toBe(before);
  });
});
