/**
 * Time through ctx.clock: the HTTP client's backoff, Retry-After, deadline and
 * throughput rule, the keychain timeout and the installer-lock wait, each at
 * its production default, checked on a ManualClock instead of a wall clock
 * (so the 60 s, 15 s, 5 s and 5 min figures are tested without waiting them);
 * and the yep client's request timeout and stop escalation (EOF -> SIGTERM ->
 * SIGKILL) on a real server process, driven by the same clock.
 */
import { existsSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { afterEach, describe, expect, it } from 'vitest';
import { httpDownload, httpGet } from '../../src/core/net/http.js';
import { keychainGet } from '../../src/core/settings/keychain.js';
import { withInstallLock } from '../../src/core/store/install-lock.js';
import { YepClient } from '../../src/core/yep/client.js';
import { ManualClock } from '../helpers/manual-clock.js';
import type { TempHome } from '../helpers/home.js';
import { fixtureRegistryForFile } from '../helpers/per-test-fixtures.js';
import type { TestRegistry } from '../helpers/registry.js';

const FAKE = resolve(import.meta.dirname, '../fixtures/fake-keyring.mjs');
const DATA = Buffer.from('y'.repeat(4000));

let reg: TestRegistry;
let home: TempHome;

fixtureRegistryForFile(DATA, (r, h) => {
  reg = r;
  home = h;
});

/** A context with production limits (no FAST_HTTP_ENV) on a manual clock. */
function clocked(env: Record<string, string> = {}): { clock: ManualClock; ctx: ReturnType<TempHome['ctx']> } {
  const clock = new ManualClock();
  return { clock, ctx: Object.assign(home.ctx(env), { clock }) };
}
const url = () => reg.downloadUrl('fixture', '1.0.0');
const opts = { what: 'the test file', maxBytes: 1 << 20 };

async function until(cond: () => boolean, what: string): Promise<void> {
  const started = Date.now();
  while (!cond()) {
    if (Date.now() - started > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('HTTP on ctx.clock', () => {
  it('backs off 250-500, 500-1000, 1000-2000 ms (the default curve) and gives up after 4 attempts', async () => {
    reg.fault('/crates/', { kind: 'status', status: 503 });
    const { clock, ctx } = clocked();
    const started = Date.now();
    const err = await httpGet(ctx, url(), opts).catch((e) => e);
    expect(err.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/answered 503.*gave up after 4 attempts/);
    expect(reg.requests).toHaveLength(4);
    expect(clock.sleeps).toHaveLength(3);
    clock.sleeps.forEach((ms, i) => {
      const ceiling = 500 * 2 ** i;
      expect(ms).toBeGreaterThanOrEqual(ceiling / 2);
      expect(ms).toBeLessThanOrEqual(ceiling);
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('waits exactly what Retry-After asks when it is under the 60 s ceiling', async () => {
    reg.fault('/crates/', { kind: 'status', status: 429, headers: { 'retry-after': '45' } }, 1);
    const { clock, ctx } = clocked();
    const res = await httpGet(ctx, url(), opts);
    expect(res.body.equals(DATA)).toBe(true);
    expect(clock.sleeps).toEqual([45_000]);
    expect(reg.requests).toHaveLength(2);
  });

  it('gives up on a silent server at the 60 s deadline of the clock', async () => {
    reg.fault('/crates/', { kind: 'hang' });
    const { clock, ctx } = clocked();
    const pending = httpGet(ctx, url(), opts).catch((e) => e);
    await until(() => reg.requests.length === 1, 'the request');
    clock.advance(59_999);
    // The attempt's deadline and the request's total (--timeout, 2 min).
    expect(clock.pending).toBe(2);
    clock.advance(1);
    const err = await pending;
    expect(err.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/no complete answer within 60s/);
    expect(clock.pending).toBe(0);
    expect(reg.requests).toHaveLength(1);
  });

  it('stops a body slower than 1 KiB/s over a 15 s window of the clock', async () => {
    reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 100, chunk: 100 });
    const { clock, ctx } = clocked();
    const pending = httpGet(ctx, url(), opts).catch((e) => e);
    // The deadline, the total and, once the body flows, the throughput window.
    await until(() => clock.pending === 3, 'the body to start');
    clock.advance(15_000);
    const err = await pending;
    expect(err.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/slower than 1 KiB\/s for 15s/);
    expect(clock.pending).toBe(0);
  });
});

describe('the total (--timeout) on ctx.clock', () => {
  it('is the countdown from the first attempt, and a silent server is given up at it (2 min by default)', async () => {
    reg.fault('/crates/', { kind: 'hang' });
    const { clock, ctx } = clocked();
    // An attempt's own deadline longer than the total: only the total can end this wait.
    ctx.http.limits = { ...ctx.http.limits, timeoutMs: 600_000 };
    const start = clock.now();
    const pending = httpGet(ctx, url(), opts).catch((e) => e);
    await until(() => reg.requests.length === 1, 'the request');
    const step = ctx.log.steps.at(-1)!;
    expect(step.states.map((x) => x.deadlineAt).filter(Boolean)).toEqual([start + 120_000]);
    clock.advance(119_999);
    expect(reg.requests).toHaveLength(1);
    clock.advance(1);
    const err = await pending;
    expect(err.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/no answer within 2m \(1 attempt\); gave up/);
    expect(err.details).toMatchObject({ timeout_ms: 120_000, attempts: 1 });
    expect(err.hint).toMatch(/--timeout/);
    expect(clock.pending).toBe(0);
  });

  it('spans every retry and pause: a pause never outlasts it, and the message says it', async () => {
    reg.fault('/crates/', { kind: 'status', status: 503, headers: { 'retry-after': '8' } });
    const { clock, ctx } = clocked();
    ctx.http.limits = { ...ctx.http.limits, totalMs: 20_000 };
    const start = clock.now();
    const err = await httpGet(ctx, url(), opts).catch((e) => e);
    expect(err.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/no answer within 20s \(3 attempts, the last: the server answered 503\); gave up/);
    // Three answers, two pauses; the third Retry-After would end past the total: given up at once.
    expect(reg.requests).toHaveLength(3);
    expect(clock.sleeps).toEqual([8_000, 8_000]);
    expect(clock.now() - start).toBe(16_000);
    // Every attempt's countdown was the total, never the attempt's own.
    const deadlines = ctx.log.steps
      .at(-1)!
      .states.map((x) => x.deadlineAt)
      .filter(Boolean);
    expect(new Set(deadlines)).toEqual(new Set([start + 20_000]));
  });

  it("does not cut a download's flowing body: the download's own rules take over", async () => {
    reg.fault('/crates/', { kind: 'slow-drip', intervalMs: 20, chunk: 500 });
    const { clock, ctx } = clocked();
    ctx.http.limits = { ...ctx.http.limits, totalMs: 1_000 };
    const file = resolve(home.root, 'download.bin');
    const pending = httpDownload(ctx, url(), file, opts);
    // Once bytes arrive the total is cancelled (the download's deadline and throughput window remain).
    await until(() => ctx.log.steps.some((x) => x.states.some((st) => (st.done ?? 0) > 0)), 'the body to start');
    expect(clock.pending).toBe(2);
    clock.advance(5_000);
    const got = await pending;
    expect(got.size).toBe(DATA.length);
  });
});

describe('keychain on ctx.clock', () => {
  // The fake keyring reads its mode from this process's environment, which the worker's later files share: put back as found.
  const priorMode = process.env.FAKE_KEYRING_MODE;
  afterEach(() => {
    if (priorMode === undefined) delete process.env.FAKE_KEYRING_MODE;
    else process.env.FAKE_KEYRING_MODE = priorMode;
  });

  it('abandons a keychain that never answers after 5 s of the clock', async () => {
    process.env.FAKE_KEYRING_MODE = 'hang';
    const { clock, ctx } = clocked();
    const pending = keychainGet('logfire', 'token', { ...ctx.keychain, load: () => import(FAKE), clock }).catch((e) => e);
    await until(() => clock.pending === 1, 'the keychain call');
    clock.advance(4_999);
    clock.advance(1);
    const err = await pending;
    expect(err.name).toBe('KeychainUnavailable');
    expect(err.message).toMatch(/did not answer within 5000 ms/);
  });
});

describe('installer lock on ctx.clock', () => {
  it('a wait set in milliseconds is said as waited (ctx.waits.lockMs = 1500: over 1.5 s, not 2)', async () => {
    const { clock, ctx } = clocked({ YEP_EXT_TEST_LOCK_WAIT_MS: '1500' });
    mkdirSync(ctx.paths.storeDir, { recursive: true });
    const release = await lockfile.lock(ctx.paths.storeDir, { lockfilePath: ctx.paths.installLockFile, realpath: false, stale: 5_000, update: 1_000 });
    try {
      const err = await withInstallLock(ctx, async () => undefined).catch((e) => e);
      expect(err.code).toBe('E_LOCKED');
      expect(err.message).toMatch(/for over 1\.5 s\./);
      expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBeGreaterThan(1_500);
    } finally {
      await release();
    }
  });

  it('waits 5 min of the clock for a live holder, polling, then fails with E_LOCKED', async () => {
    const { clock, ctx } = clocked();
    mkdirSync(ctx.paths.storeDir, { recursive: true });
    const release = await lockfile.lock(ctx.paths.storeDir, { lockfilePath: ctx.paths.installLockFile, realpath: false, stale: 5_000, update: 1_000 });
    try {
      let ran = false;
      const started = Date.now();
      const err = await withInstallLock(ctx, async () => {
        ran = true;
      }).catch((e) => e);
      expect(err.code).toBe('E_LOCKED');
      expect(err.message).toMatch(/for over 300 s/);
      expect(ran).toBe(false);
      const waited = clock.sleeps.reduce((a, b) => a + b, 0);
      expect(waited).toBeGreaterThan(300_000);
      expect(waited).toBeLessThan(300_000 + 250);
      for (const ms of clock.sleeps) expect(ms >= 100 && ms <= 250).toBe(true);
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      await release();
    }
  });
});

describe('yep client on ctx.clock', () => {
  const server = (script: string, clock: ManualClock, options: { requestTimeoutMs?: number } = {}): YepClient =>
    YepClient.start({ command: process.execPath, args: ['-e', script], packageDir: home.root, workspaceRoot: home.root }, { clock, ...options });
  /** Advance the clock in small steps until `p` settles (a real process answers in between). */
  async function driveUntil<T>(clock: ManualClock, p: Promise<T>, stepMs = 50): Promise<T> {
    let done = false;
    void p.then(
      () => (done = true),
      () => (done = true),
    );
    const started = Date.now();
    while (!done) {
      if (Date.now() - started > 10_000) throw new Error('timed out driving the clock');
      clock.advance(stepMs);
      await new Promise((r) => setTimeout(r, 5));
    }
    return p;
  }

  it('a request times out at 30 s of the clock (the default), not of the wall', async () => {
    const clock = new ManualClock();
    const c = server('process.stdin.resume()', clock, { requestTimeoutMs: 30_000 });
    expect(await c.spawned).toBe(true);
    const started = Date.now();
    let settled: unknown;
    const answer = c.request('ping').then(
      () => (settled = 'answered'),
      (e: unknown) => (settled = e),
    );
    expect(clock.pending).toBe(1);
    clock.advance(29_999);
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBeUndefined();
    clock.advance(1);
    await answer;
    expect(settled).toMatchObject({ kind: 'timeout', method: 'ping', message: expect.stringMatching(/within 30000 ms/) });
    expect(Date.now() - started).toBeLessThan(5_000);
    // A grace long in clock steps: the server ends at EOF, in real time.
    const report = await driveUntil(clock, c.stop({ shutdown: false, graceMs: 600_000 }));
    expect(report.endedBy).toBe('eof');
  });

  it('stop escalates EOF -> SIGTERM -> SIGKILL at the grace of the clock; the process is gone', async () => {
    const clock = new ManualClock();
    // Ignores EOF and SIGTERM: only SIGKILL ends it.
    const c = server(
      "process.on('SIGTERM', () => {}); process.stdin.on('end', () => {}); process.stdin.resume(); setInterval(() => {}, 1e6); process.stderr.write('ready\\n');",
      clock,
    );
    expect(await c.spawned).toBe(true);
    await until(() => c.stderrTail().includes('ready'), 'the server to trap SIGTERM');
    const pid = c.pid!;
    const started = Date.now();
    const GRACE = 60_000;
    let report: Awaited<ReturnType<YepClient['stop']>> | undefined;
    const stopping = c.stop({ shutdown: false, graceMs: GRACE }).then((r) => (report = r));
    // EOF sent; the first grace runs on the clock.
    await until(() => clock.pending === 1, 'the EOF grace timer');
    clock.advance(GRACE - 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(report).toBeUndefined();
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    clock.advance(1);
    // SIGTERM sent (and ignored); the second grace.
    await until(() => clock.pending === 1, 'the SIGTERM grace timer');
    await new Promise((r) => setTimeout(r, 100));
    expect(report).toBeUndefined();
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    clock.advance(GRACE);
    await driveUntil(clock, stopping);
    expect(report!.endedBy).toBe('sigkill');
    expect(report!.exit).toMatchObject({ signal: 'SIGKILL' });
    expect(report!.durationMs).toBeGreaterThanOrEqual(2 * GRACE);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
