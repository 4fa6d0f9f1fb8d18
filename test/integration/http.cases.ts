/**
 * The HTTP client against a real loopback server with fault switches
 * (hardening B14-B18): retries, caps, deadlines, redirects, URL policy.
 * One set of cases for both transports: http.test.ts runs them through node:http
 * (no proxy: send.ts), http-undici.test.ts through undici (the one a proxied request
 * takes): both must give the same answers, errors and retries.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkFetchUrl, httpDownload, httpGet, type RequestOptions } from '../../src/core/net/http.js';
import type { TempHome } from '../helpers/home.js';
import { fixtureRegistryForFile } from '../helpers/per-test-fixtures.js';
import { FAST_HTTP_ENV, sha256Hex, type TestRegistry } from '../helpers/registry.js';
import { memoryLogger } from '../../src/core/log.js';

export type Transport = 'node:http' | 'undici';

/**
 * Define every case, each request sent through `transport`. Returns which transport
 * the cases' contexts send through, for a test to check (a control that the choice reached them).
 */
export function httpCases(transport: Transport): () => Transport {
  const FAST = FAST_HTTP_ENV;

  let reg: TestRegistry;
  let home: TempHome;
  const DATA = Buffer.from('x'.repeat(5000));
  const opts = (extra: Partial<RequestOptions> = {}): RequestOptions => ({ what: 'the test file', maxBytes: 1 << 20, ...extra });

  fixtureRegistryForFile(DATA, (r, h) => {
    reg = r;
    home = h;
  });

  /** undici's request function when the cases run through undici (loaded only then). */
  let undiciRequest: typeof import('undici').request | undefined;
  beforeAll(async () => {
    if (transport === 'undici') undiciRequest = (await import('undici')).request;
  });
  const ctx = (extra: Record<string, string> = {}) => {
    const c = home.ctx({ ...FAST, ...extra });
    if (undiciRequest) c.http = { ...c.http, request: undiciRequest };
    return c;
  };
  const fileUrl = () => reg.downloadUrl('fixture', '1.0.0');

  describe('httpGet', () => {
    it('returns the body and names yep-ext in the User-Agent', async () => {
      const res = await httpGet(ctx(), fileUrl(), opts());
      expect(res.status).toBe(200);
      expect(res.body.equals(DATA)).toBe(true);
      expect(String(reg.requests[0]!.headers['user-agent'])).toMatch(/^yep-ext\/\d+\.\d+\.\d+/);
    });

    it('retries 500/502/503 with backoff and succeeds on the next 200 (B17)', async () => {
      reg.fault('/crates/', { kind: 'status', status: 500 }, 1);
      reg.fault('/crates/', { kind: 'status', status: 502 }, 1);
      const res = await httpGet(ctx(), fileUrl(), opts());
      expect(res.body.equals(DATA)).toBe(true);
      expect(reg.requests).toHaveLength(3);
    });

    it('gives up after a bounded number of attempts on a server that keeps failing', async () => {
      reg.fault('/crates/', { kind: 'status', status: 503 });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/answered 503.*gave up after 3 attempts/);
      expect(reg.requests).toHaveLength(3);
    });

    it('honours Retry-After on 429 up to the cap', async () => {
      reg.fault('/crates/', { kind: 'status', status: 429, headers: { 'retry-after': '1' } }, 1);
      const t0 = Date.now();
      const res = await httpGet(ctx(), fileUrl(), opts());
      expect(res.status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
      expect(reg.requests).toHaveLength(2);
    });

    it('fails at once when Retry-After asks for more than the cap', async () => {
      reg.fault('/crates/', { kind: 'status', status: 429, headers: { 'retry-after': '3600' } });
      const t0 = Date.now();
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/retry after 3600s/);
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(reg.requests).toHaveLength(1);
    });

    it.each([404, 410, 451])('does not retry %i', async (status) => {
      reg.fault('/crates/', { kind: 'status', status });
      const passed = await httpGet(ctx(), fileUrl(), opts({ passStatuses: [404, 410, 451] }));
      expect(passed.status).toBe(status);
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NOT_FOUND');
      expect(reg.requests).toHaveLength(2);
    });

    it('retries a connection reset, then succeeds (B18)', async () => {
      reg.fault('/crates/', { kind: 'reset' }, 1);
      const res = await httpGet(ctx(), fileUrl(), opts());
      expect(res.body.equals(DATA)).toBe(true);
      expect(reg.requests).toHaveLength(2);
    });

    it('fails cleanly when the connection keeps being reset', async () => {
      reg.fault('/crates/', { kind: 'reset' });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/reset|closed/);
      expect(reg.requests).toHaveLength(3);
    });

    it('fails cleanly when nothing listens (connection refused)', async () => {
      const err = await httpGet(ctx(), 'http://127.0.0.1:9/x', opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/refused.*gave up after 3 attempts/);
    });

    it('retries a truncated body, and fails when it stays truncated (B18)', async () => {
      reg.fault('/crates/', { kind: 'truncate', afterBytes: 100 }, 1);
      expect((await httpGet(ctx(), fileUrl(), opts())).body.equals(DATA)).toBe(true);
      reg.fault('/crates/', { kind: 'truncate', afterBytes: 100 });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
    });

    it('refuses an announced Content-Length above the cap without reading the body (B14)', async () => {
      const err = await httpGet(ctx(), fileUrl(), opts({ maxBytes: 1000 })).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/larger than the 1000 bytes limit/);
      expect(reg.requests).toHaveLength(1);
    });

    it('stops an endless body at the cap (B14)', async () => {
      reg.fault('/crates/', { kind: 'endless' });
      const t0 = Date.now();
      const err = await httpGet(ctx(), fileUrl(), opts({ maxBytes: 2 << 20 })).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/larger than the 2 MiB limit/);
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(reg.requests).toHaveLength(1);
    });

    it('does not trust a Content-Length that under-states the body (B14)', async () => {
      reg.fault('/crates/', { kind: 'lying-length', declared: 10 });
      const res = await httpGet(ctx(), fileUrl(), opts({ maxBytes: 1000 }));
      // Only the announced 10 bytes are read as this response; the rest is never taken for body.
      expect(res.body.length).toBeLessThanOrEqual(10);
    });

    it('treats a Content-Length that over-states the body as truncation (B14)', async () => {
      reg.fault('/crates/', { kind: 'lying-length', declared: DATA.length + 500 });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(reg.requests).toHaveLength(3);
    });

    it('aborts a slow-drip body by the minimum-throughput rule (B15)', async () => {
      reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 100, chunk: 1 });
      const t0 = Date.now();
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/slower than/);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(reg.requests).toHaveLength(1);
    });

    it('aborts by the overall deadline even when the rate rule is off (B15)', async () => {
      reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 50, chunk: 200 });
      const t0 = Date.now();
      const err = await httpGet(ctx({ YEP_EXT_HTTP_MIN_RATE: '0', YEP_EXT_HTTP_TIMEOUT_MS: '500' }), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/no complete answer within 500ms/);
      expect(Date.now() - t0).toBeLessThan(1500);
    });

    it('gives up on a server that never answers', async () => {
      reg.fault('/crates/', { kind: 'hang' });
      const err = await httpGet(ctx({ YEP_EXT_HTTP_STALL_MS: '300', YEP_EXT_HTTP_RETRIES: '1' }), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(reg.requests).toHaveLength(2);
    });

    it.each(['0', '3000000000'])('YEP_EXT_HTTP_STALL_MS=%s is no limit / a long one, not a timer that fires at once', async (stall) => {
      // Silences of 30 ms between chunks: a stall timer armed with 0 or an overflowing delay fires after 1 ms.
      reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 30, chunk: 1000 });
      const res = await httpGet(ctx({ YEP_EXT_HTTP_STALL_MS: stall, YEP_EXT_HTTP_RETRIES: '0', YEP_EXT_HTTP_MIN_RATE: '0' }), fileUrl(), opts());
      expect(res.status).toBe(200);
      expect(res.body.equals(DATA)).toBe(true);
    });

    it('stops at once when the context is aborted (Ctrl-C)', async () => {
      reg.fault('/crates/', { kind: 'hang' });
      const ac = new AbortController();
      const c = Object.assign(ctx(), { signal: ac.signal });
      setTimeout(() => ac.abort(), 100);
      const err = await httpGet(c, fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_INTERRUPTED');
    });
  });

  describe('redirects (B16)', () => {
    it('follows a redirect within the same origin', async () => {
      reg.fault('/moved', { kind: 'redirect', location: '/crates/fixture/1.0.0/download', status: 301 });
      const res = await httpGet(ctx(), `${reg.url}moved`, opts());
      expect(res.body.equals(DATA)).toBe(true);
      expect(res.url).toBe(fileUrl());
    });

    it('refuses a redirect to another host', async () => {
      reg.fault('/crates/', { kind: 'redirect', location: fileUrl().replace('127.0.0.1', 'localhost') });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(err.message).toMatch(/another host \(localhost:\d+\)/);
      expect(reg.requests).toHaveLength(1);
    });

    it('refuses a redirect to another scheme', async () => {
      reg.fault('/crates/', { kind: 'redirect', location: fileUrl().replace('http:', 'https:') });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.message).toMatch(/redirect from http to https/);
      reg.clearFaults();
      reg.fault('/crates/', { kind: 'redirect', location: 'file:///etc/passwd' });
      const err2 = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err2.message).toMatch(/redirect from http to file/);
    });

    it('refuses a redirect to a link-local address', async () => {
      reg.fault('/crates/', { kind: 'redirect', location: 'http://169.254.169.254/latest/meta-data/' });
      const err = await httpGet(ctx(), fileUrl(), opts()).catch((e) => e);
      expect(err.code).toBe('E_NETWORK');
      expect(reg.requests).toHaveLength(1);
    });

    it('refuses redirect loops and long chains', async () => {
      reg.fault('/a', { kind: 'redirect', location: '/b' });
      reg.fault('/b', { kind: 'redirect', location: '/a' });
      const err = await httpGet(ctx(), `${reg.url}a`, opts()).catch((e) => e);
      expect(err.message).toMatch(/redirect loop/);
      reg.clearFaults();
      reg.fault(/^\/r\d+$/, { kind: 'redirect', location: 'unused' });
      reg.clearFaults();
      for (let i = 0; i < 10; i++) reg.fault(`/r${i}`, { kind: 'redirect', location: `/r${i + 1}` });
      const err2 = await httpGet(ctx(), `${reg.url}r0`, opts()).catch((e) => e);
      expect(err2.message).toMatch(/more than 5 redirects/);
    });
  });

  describe('URL policy', () => {
    it.each([
      ['http://example.com/index/', /plain http/],
      ['ftp://example.com/x', /ftp scheme/],
      ['https://user:pw@example.com/x', /credentials/],
      ['https://169.254.169.254/x', /link-local/],
      ['https://[fe80::1]/x', /link-local/],
      ['not a url', /not a valid URL/],
    ])('refuses %s', (url, re) => {
      expect(() => checkFetchUrl(url, 'test')).toThrow(re);
    });

    it.each(['https://index.crates.io/', 'http://127.0.0.1:8080/', 'http://127.9.9.9/', 'http://localhost:1/', 'http://[::1]:1/'])('allows %s', (url) => {
      expect(checkFetchUrl(url, 'test').href).toBe(url);
    });

    it('refuses plain http to a non-loopback host before any request', async () => {
      const err = await httpGet(ctx(), 'http://10.0.0.1/x', opts()).catch((e) => e);
      expect(err.message).toMatch(/refusing plain http/);
    });
  });

  describe('httpDownload', () => {
    it('writes the body to the file and returns its SHA-256', async () => {
      const file = join(home.root, 'dl.partial');
      const got = await httpDownload(ctx(), fileUrl(), file, opts());
      expect(got.sha256).toBe(sha256Hex(DATA));
      expect(got.size).toBe(DATA.length);
      expect(readFileSync(file).equals(DATA)).toBe(true);
    });

    it('hashes large bodies correctly across 1 MiB batches', async () => {
      const big = Buffer.alloc(3 * (1 << 20) + 12345);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
      reg.publish({ name: 'big', vers: '1.0.0', data: big });
      const got = await httpDownload(ctx(), reg.downloadUrl('big', '1.0.0'), join(home.root, 'big.partial'), opts({ maxBytes: 8 << 20 }));
      expect(got.sha256).toBe(sha256Hex(big));
    });

    it("collects its socket reads every 1 MiB where the CLI exposed V8's collector (the 200 MB install's peak RSS)", async () => {
      const key = Symbol.for('yep-ext.collect-garbage');
      const g = globalThis as Record<symbol, unknown>;
      const before = g[key];
      const calls: unknown[] = [];
      g[key] = (options?: unknown) => calls.push(options);
      try {
        const body = Buffer.alloc(8 << 20, 3);
        reg.publish({ name: 'meter', vers: '1.0.0', data: body });
        const got = await httpDownload(ctx(), reg.downloadUrl('meter', '1.0.0'), join(home.root, 'meter.partial'), opts({ maxBytes: 16 << 20 }));
        expect(got.size).toBe(body.length);
        // Eight MiB of reads: a collection after each MiB or so (the meter counts whole reads;
        // 4 MiB, the period elsewhere, would make it two).
        expect(calls.length).toBeGreaterThanOrEqual(6);
        expect(calls.length).toBeLessThanOrEqual(8);
        expect(calls.every((c) => (c as { type?: string }).type === 'minor')).toBe(true);
      } finally {
        if (before === undefined) delete g[key];
        else g[key] = before;
      }
    });

    it('reports every download as a step with bytes from the first byte, whatever its size', async () => {
      const c = ctx();
      const log = memoryLogger();
      c.log = log;
      await httpDownload(c, fileUrl(), join(home.root, 'small.partial'), { ...opts(), progressLabel: 'small' });
      const big = Buffer.alloc(2 << 20, 7);
      reg.publish({ name: 'big2', vers: '1.0.0', data: big });
      await httpDownload(c, reg.downloadUrl('big2', '1.0.0'), join(home.root, 'big2.partial'), { ...opts({ maxBytes: 4 << 20 }), progressLabel: 'big' });
      expect(log.steps.map((s) => s.label)).toEqual(['small', 'big']);
      for (const [step, size] of [
        [log.steps[0]!, DATA.length],
        [log.steps[1]!, big.length],
      ] as const) {
        expect(step.ended).toBe(true);
        expect(step.states.some((s) => s.unit === 'bytes' && s.total === size)).toBe(true);
        expect(Math.max(...step.states.map((s) => s.done ?? 0))).toBe(size);
      }
    });

    it('reports each retry as a note with the attempt and the wait', async () => {
      reg.fault('/crates/', { kind: 'status', status: 503 }, 1);
      const c = ctx();
      const log = memoryLogger();
      c.log = log;
      await httpDownload(c, fileUrl(), join(home.root, 'r.partial'), { ...opts(), progressLabel: 'retrying' });
      expect(log.steps[0]!.notes).toHaveLength(1);
      expect(log.steps[0]!.notes[0]).toMatch(/503.*attempt 2\/3 in \d+ms/);
      expect(log.steps[0]!.states.some((s) => (s.retryAt ?? 0) > 0)).toBe(true);
    });

    it('stops an endless download at the cap and starts over cleanly on retry', async () => {
      reg.fault('/crates/', { kind: 'endless' });
      const err = await httpDownload(ctx(), fileUrl(), join(home.root, 'endless.partial'), opts({ maxBytes: 1 << 20 })).catch((e) => e);
      expect(err.message).toMatch(/larger than the 1 MiB limit/);
      reg.clearFaults();
      reg.fault('/crates/', { kind: 'truncate', afterBytes: 1000 }, 1);
      const file = join(home.root, 'retry.partial');
      const got = await httpDownload(ctx(), fileUrl(), file, opts());
      expect(got.size).toBe(DATA.length);
      expect(readFileSync(file).equals(DATA)).toBe(true);
    });
  });
  return () => (undiciRequest !== undefined && ctx().http.request === undiciRequest ? 'undici' : 'node:http');
}
