/**
 * `searchExtensions` against the loopback registry's API: keyword and name-prefix
 * queries merged, installed marking, empty results, errors with status 200,
 * unreachable API, pagination and the one-request-per-second pace.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveLock } from '../../src/core/store/lockfile.js';
import { searchExtensions } from '../../src/core/operations/search.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { closedAfterFile } from '../helpers/per-test-fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { secretFragments } from '../helpers/secret-fragments.js';

const FAST = { YEP_EXT_HTTP_RETRIES: '1', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '20' };
/**
 * Each test has its own registry (its faults, config and request log are its own) and its
 * own home, so the tests run at once: each search waits out the one-request-a-second pace
 * between its API requests (seconds a test, which would add up one after the other), which costs no CPU.
 */
interface Fixture {
  reg: TestRegistry;
  home: TempHome;
  ctx(extra?: Record<string, string>): ReturnType<TempHome['ctx']>;
}
const opened = closedAfterFile<Fixture>();
async function fixture(): Promise<Fixture> {
  const reg = await startRegistry();
  const kw = ['yolop-extension'];
  reg.publish({ name: 'yolop-extension-lsp', vers: '0.3.1', data: Buffer.from('a'), description: 'Language servers for yolop', keywords: kw, downloads: 900 });
  reg.publish({
    name: 'yolop-extension-lsp',
    vers: '0.4.0-beta.1',
    data: Buffer.from('b'),
    description: 'Language servers for yolop',
    keywords: kw,
    downloads: 10,
  });
  reg.publish({
    name: 'yolop-extension-logfire',
    vers: '1.2.0',
    data: Buffer.from('c'),
    description: 'Send traces to \u001b[31mLogfire\u001b[0m',
    keywords: kw,
    downloads: 500,
  });
  // Follows the naming convention but forgot the keyword: found by the name query.
  reg.publish({ name: 'yolop-extension-nokw', vers: '0.1.0', data: Buffer.from('d'), description: 'No keyword here', downloads: 5 });
  // Has the keyword but not the prefix: installable only as crates.io:<name>.
  reg.publish({ name: 'odd-name', vers: '2.0.0', data: Buffer.from('e'), description: 'An extension with an odd name', keywords: kw, downloads: 1 });
  // Neither: never shown.
  reg.publish({ name: 'serde-lsp', vers: '1.0.0', data: Buffer.from('f'), description: 'lsp but not an extension', downloads: 99999 });
  const home = makeTempHome();
  const f: Fixture = { reg, home, ctx: (extra = {}) => home.ctx({ ...FAST, YEP_EXT_INDEX: reg.indexUrl, ...extra }) };
  return opened(f);
}

describe.concurrent('searchExtensions', () => {
  it('finds extensions by keyword and by name prefix, and nothing else', async () => {
    const { reg, ctx } = await fixture();
    const r = await searchExtensions(ctx());
    expect(r.hits.map((h) => h.crate).sort()).toEqual(['odd-name', 'yolop-extension-logfire', 'yolop-extension-lsp', 'yolop-extension-nokw']);
    const lsp = r.hits.find((h) => h.crate === 'yolop-extension-lsp')!;
    expect(lsp).toEqual({
      crate: 'yolop-extension-lsp',
      install: 'lsp',
      version: '0.3.1',
      downloads: 910,
      description: 'Language servers for yolop',
      installed: null,
    });
    expect(r.hits.find((h) => h.crate === 'odd-name')!.install).toBe('crates.io:odd-name');
    const api = reg.requestsTo('/api/v1/crates');
    expect(api.map((q) => new URL(q.url, reg.url).searchParams.get('keyword'))).toEqual(['yolop-extension', null]);
    for (const q of api) expect(String(q.headers['user-agent'])).toMatch(/^yep-ext\//);
  });

  it('narrows by term', async () => {
    const { ctx } = await fixture();
    const r = await searchExtensions(ctx(), { term: 'lsp' });
    expect(r.hits.map((h) => h.crate)).toEqual(['yolop-extension-lsp']);
    expect(r.term).toBe('lsp');
  });

  it('marks installed extensions from the lock', async () => {
    const { ctx } = await fixture();
    const c = ctx();
    mkdirSync(dirname(c.paths.lockFile), { recursive: true });
    await saveLock(c.paths.lockFile, {
      extra: {},
      entries: [
        {
          name: 'lsp',
          content_hash: `sha256:${'0'.repeat(64)}`,
          version: '0.3.0',
          source: { type: 'crate', crate_name: 'yolop-extension-lsp', version: '0.3.0', index: `sparse+${c.indexUrl}` },
        },
      ],
    });
    const r = await searchExtensions(c, { term: 'lsp' });
    expect(r.hits[0]!.installed).toEqual({ name: 'lsp', version: '0.3.0' });
  });

  it('marks a hit installed only when the lock has that crate from the registry searched (not the same crate name from another index)', async () => {
    const { ctx } = await fixture();
    const c = ctx();
    mkdirSync(dirname(c.paths.lockFile), { recursive: true });
    const hash = `sha256:${'0'.repeat(64)}`;
    await saveLock(c.paths.lockFile, {
      extra: {},
      entries: [
        // The host's own entry for crates.io (no `index` key): another registry's crate of that name.
        { name: 'lsp', content_hash: hash, version: '0.3.0', source: { type: 'crate', crate_name: 'yolop-extension-lsp', version: '0.3.0' } },
        {
          name: 'logfire',
          content_hash: hash,
          version: '1.2.0',
          source: { type: 'crate', crate_name: 'yolop-extension-logfire', version: '1.2.0', index: 'https://mirror.example/' },
        },
        { name: 'nokw', content_hash: hash, source: { type: 'git', url: 'https://example.com/nokw', rev: 'a'.repeat(40) } },
      ],
    });
    const r = await searchExtensions(c);
    expect(Object.fromEntries(r.hits.map((h) => [h.crate, h.installed]))).toEqual({
      'yolop-extension-lsp': null,
      'yolop-extension-logfire': null,
      'yolop-extension-nokw': null,
      'odd-name': null,
    });
  });

  it('returns no hits (not an error) when nothing matches', async () => {
    const { ctx } = await fixture();
    const r = await searchExtensions(ctx(), { term: 'zzznothing' });
    expect(r.hits).toEqual([]);
  });

  it('treats an errors array with status 200 as an error', async () => {
    const { reg, ctx } = await fixture();
    reg.fault('/api/v1/crates', { kind: 'body', body: JSON.stringify({ errors: [{ detail: 'the search backend is down' }] }) });
    const e = await searchExtensions(ctx()).catch((x) => x);
    expect(e.code).toBe('E_NETWORK');
    expect(e.message).toMatch(/answered with an error: the search backend is down/);
  });

  it('an error body is redacted before its 300-character cut (a URL credential across the cut)', async () => {
    const { reg, ctx } = await fixture();
    const secret = 'Zq7-Kx93-Jw5R-Vb28-Tn6Q-Pm41';
    reg.fault('/api/v1/crates', {
      kind: 'body',
      body: JSON.stringify({ errors: [{ detail: `${'u'.repeat(270)} upstream https://svc:${secret}@backend.example/ failed` }] }),
    });
    const e = await searchExtensions(ctx()).catch((x) => x);
    expect(e.message).toMatch(/answered with an error: u{20}/);
    expect(secretFragments(`${e.message}\n${JSON.stringify(e.details ?? {})}`, secret)).toEqual([]);
  });

  it('reports an unreachable API clearly', async () => {
    const { reg, ctx } = await fixture();
    reg.setConfig({ dl: `${reg.url}crates`, api: 'http://127.0.0.1:9' });
    try {
      const e = await searchExtensions(ctx()).catch((x) => x);
      expect(e.code).toBe('E_NETWORK');
      expect(e.message).toMatch(/^Searching http:\/\/127\.0\.0\.1:9: the connection was refused/);
    } finally {
      reg.setConfig(undefined as never);
    }
  });

  it('says when the registry has no API', async () => {
    const { reg, ctx } = await fixture();
    reg.setConfig({ dl: `${reg.url}crates` });
    try {
      const e = await searchExtensions(ctx()).catch((x) => x);
      expect(e.code).toBe('E_UNSUPPORTED');
    } finally {
      reg.setConfig(undefined as never);
    }
  });

  it('follows pages up to --limit, one request per second at most', async () => {
    const { home } = await fixture();
    const big = await startRegistry();
    try {
      for (let i = 0; i < 130; i++)
        big.publish({ name: `yolop-extension-p${i}`, vers: '1.0.0', data: Buffer.from([i]), keywords: ['yolop-extension'], downloads: 1000 - i });
      const r = await searchExtensions(home.ctx({ ...FAST, YEP_EXT_INDEX: big.indexUrl }), { limit: 120 });
      expect(r.hits).toHaveLength(120);
      expect(r.hits[0]!.crate).toBe('yolop-extension-p0');
      expect(r.hits[119]!.crate).toBe('yolop-extension-p119');
      const api = big.requestsTo('/api/v1/crates');
      expect(api.map((q) => new URL(q.url, big.url).searchParams.get('page'))).toEqual(['1', '2']);
      expect(api[1]!.at - api[0]!.at).toBeGreaterThanOrEqual(990);
    } finally {
      await big.close();
    }
  });

  it('counts the second between API requests from the end of the previous one (a slow answer does not shorten it)', async () => {
    const { home } = await fixture();
    const big = await startRegistry();
    try {
      for (let i = 0; i < 130; i++)
        big.publish({ name: `yolop-extension-p${i}`, vers: '1.0.0', data: Buffer.from([i]), keywords: ['yolop-extension'], downloads: 1000 - i });
      // Page 1 arrives in 4 KiB pieces every 150 ms: its answer takes >= 450 ms to complete.
      big.fault(/^\/api\/v1\/crates\?.*[?&]page=1(&|$)/, { kind: 'slow-drip', intervalMs: 150, chunk: 4096 });
      const r = await searchExtensions(home.ctx({ ...FAST, YEP_EXT_INDEX: big.indexUrl }), { limit: 120 });
      expect(r.hits).toHaveLength(120);
      const api = big.requestsTo('/api/v1/crates');
      expect(api).toHaveLength(2);
      expect(api[1]!.at - api[0]!.at).toBeGreaterThanOrEqual(1000 + 450);
    } finally {
      await big.close();
    }
  });
});
