/**
 * The local index cache is not trusted on the server's word alone. A 304 says
 * the server's copy is unchanged, not that ours is what the
 * server sent: an entry whose own SHA-256 does not match (edited on disk, torn,
 * an older format) is a miss, fetched again in full without If-None-Match, and
 * rewritten (through the atomic writer) with a good digest.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, sha256Hex, startRegistry, type TestRegistry } from '../helpers/registry.js';

const CRATE = 'yolop-extension-cachey';
const INDEX_PATH = '/index/yo/lo/yolop-extension-cachey';

let registry: TestRegistry;
let home: TempHome;
let env: Record<string, string>;
let cksum: string;

function cacheFile(): string {
  const root = join(home.configDir, 'extensions', '.yep-cache', 'index');
  // The crate's index file, not config.json's entry (cached beside it with its ETag).
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .filter((f) => String((JSON.parse(readFileSync(join(root, f), 'utf8')) as { url?: unknown }).url).endsWith(INDEX_PATH));
  expect(files).toHaveLength(1);
  return join(root, files[0]!);
}

const indexRequests = () => registry.requests.filter((r) => r.url === INDEX_PATH);

beforeEach(async () => {
  registry = await startRegistry();
  const manifest = { name: 'cachey', version: '1.0.0', yolop: { capabilityServer: { command: 'cachey-server' }, tools: [{ name: 'c' }] } };
  const data = buildCrate({
    name: CRATE,
    version: '1.0.0',
    files: { 'plugin.json': JSON.stringify(manifest), 'bin/cachey-server': { content: '#!/bin/sh\ncat\n', mode: 0o755 } },
  });
  cksum = sha256Hex(data);
  registry.publish({ name: CRATE, vers: '1.0.0', data });
  home = makeTempHome();
  env = { ...home.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: registry.indexUrl };
  const r = await runCli(['install', 'cachey'], { env });
  expect(r.code, r.stderr).toBe(0);
  const rm = await runCli(['remove', 'cachey'], { env });
  expect(rm.code, rm.stderr).toBe(0);
  registry.requests.length = 0;
});
afterEach(async () => {
  await registry.close();
  home.cleanup();
});

describe('index cache integrity', () => {
  it('an intact entry is revalidated (If-None-Match -> 304) and used', async () => {
    const r = await runCli(['install', 'cachey'], { env });
    expect(r.code, r.stderr).toBe(0);
    const [req] = indexRequests();
    expect(req?.headers['if-none-match']).toMatch(/^"[0-9a-f]+"$/);
  });

  it('an entry edited on disk is a miss: fetched in full without If-None-Match, installed from what the server sent', async () => {
    const file = cacheFile();
    const rec = JSON.parse(readFileSync(file, 'utf8'));
    expect(rec.body).toContain(cksum);
    // The attack: keep the ETag (so the server answers 304) and swap the checksum.
    const forged = 'f'.repeat(64);
    writeFileSync(file, JSON.stringify({ ...rec, body: rec.body.replace(cksum, forged) }));

    const r = await runCli(['install', 'cachey'], { env });
    expect(r.code, `the forged body was trusted:\n${r.stderr}`).toBe(0);
    const reqs = indexRequests();
    expect(reqs).toHaveLength(1);
    expect(reqs[0]!.headers['if-none-match'], 'a mismatching entry must not be revalidated').toBeUndefined();

    // State: the entry now holds what the server sent, under a digest that matches it.
    const after = JSON.parse(readFileSync(file, 'utf8'));
    expect(after.body).toContain(cksum);
    expect(after.body).not.toContain(forged);
    expect(after.sha256).toBe(
      createHash('sha256')
        .update(JSON.stringify([after.url, after.etag ?? null, after.lastModified ?? null, after.body]))
        .digest('hex'),
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // And the next run trusts it again.
    registry.requests.length = 0;
    expect((await runCli(['update', 'cachey'], { env })).code).toBe(0);
    expect(indexRequests()[0]?.headers['if-none-match']).toBeDefined();
  });

  it('an entry with a forged newer version added is a miss: the forged version is never chosen', async () => {
    const file = cacheFile();
    const rec = JSON.parse(readFileSync(file, 'utf8'));
    // Body changed, digest left as it was: the common "edit the JSON" case.
    writeFileSync(
      file,
      JSON.stringify({ ...rec, body: `${rec.body}{"name":"${CRATE}","vers":"9.9.9","deps":[],"cksum":"${'e'.repeat(64)}","features":{},"yanked":false}\n` }),
    );
    const r = await runCli(['install', 'cachey'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('cachey 1.0.0');
    expect(indexRequests()[0]!.headers['if-none-match']).toBeUndefined();
  });
});
