/**
 * `mirror` with a crate of several MB (the .crate is streamed into the mirror and
 * hashed while copied, never read whole: mirror-tree.ts): the mirror's file is the
 * registry's bytes exactly and hashes to the index cksum; a download that does not
 * match is refused with nothing left in the mirror; a mirror copy altered later is
 * refused on the next run (exit 5) and never rewritten.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { filesUnder } from '../helpers/file-walk.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const BIG = 'yolop-extension-hello';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let reg: TestRegistry;
let source: TempHome;
let lock: string;
let crate: Buffer;
const rel = `crates/${BIG}/${BIG}-0.3.0.crate`;
const env = () => ({ ...source.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0', YEP_EXT_CACHE_DIR: 'off' });
const mirror = (dir: string) => runCli(['mirror', dir, '--lockfile', lock, '--json'], { env: env() });
/** Every file under `dir`, relative (temp files included: none may be left). */
const allFiles = (dir: string): string[] => filesUnder(dir).map((p) => relative(dir, p));

beforeAll(async () => {
  reg = await startRegistry();
  // Random bytes do not compress: the .crate is about 6 MB.
  crate = fixtureCrate(BIG, '0.3.0', { files: { 'assets/blob.bin': randomBytes(6 * 1024 * 1024) } });
  expect(crate.length).toBeGreaterThan(6 * 1024 * 1024);
  reg.publish({ name: BIG, vers: '0.3.0', data: crate });
  source = makeTempHome();
  const r = await runCli(['install', 'hello@=0.3.0'], { env: env() });
  expect(r.code, r.stderr).toBe(0);
  lock = join(source.root, 'project.lock');
  expect((await runCli(['lock', 'export', lock], { env: env() })).code).toBe(0);
});
afterAll(async () => {
  await reg.close();
  source.cleanup();
});

it('a several-MB .crate lands byte for byte with the index cksum; a tampered mirror copy is refused and kept', async () => {
  const dir = join(source.root, 'mirror-ok');
  const r = await mirror(dir);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  const got = readFileSync(join(dir, rel));
  expect(got.equals(crate)).toBe(true);
  const cksum = (JSON.parse(readFileSync(join(dir, 'index', 'yo', 'lo', BIG), 'utf8').trim()) as { cksum: string }).cksum;
  expect(sha(got)).toBe(cksum);
  expect(sha(got)).toBe(sha(crate));
  expect(allFiles(dir).filter((f) => f.startsWith('crates/'))).toEqual([rel]);

  // Again: kept (re-hashed, not rewritten), nothing downloaded.
  const downloads = reg.requestsTo('/crates/').length;
  const again = await mirror(dir);
  expect(again.code, again.stderr).toBe(0);
  expect(reg.requestsTo('/crates/').length).toBe(downloads);
  expect(readFileSync(join(dir, rel)).equals(crate)).toBe(true);

  // One byte changed in the mirror's copy: refused, and the file is never rewritten.
  const tampered = Buffer.from(crate);
  tampered[tampered.length >> 1]! ^= 0xff;
  writeFileSync(join(dir, rel), tampered);
  const bad = await mirror(dir);
  expect(bad.code, bad.stderr + bad.stdout).toBe(5);
  expect(jsonOf(bad).error).toMatchObject({ code: 'E_INTEGRITY', message: expect.stringContaining('does not match the locked cksum') });
  expect(readFileSync(join(dir, rel)).equals(tampered)).toBe(true);
});

it('a download that does not hash to the cksum is refused: no .crate and no temp file in the mirror', async () => {
  const dir = join(source.root, 'mirror-corrupt');
  reg.fault(/\/0\.3\.0\/download/, { kind: 'corrupt' });
  const r = await mirror(dir);
  expect(r.code, r.stderr + r.stdout).toBe(5);
  expect(jsonOf(r).error.code).toBe('E_INTEGRITY');
  expect(allFiles(dir).filter((f) => f.startsWith('crates/'))).toEqual([]);
});
