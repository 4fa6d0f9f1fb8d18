/**
 * Proxies and private CAs, end to end through the built CLI:
 * - an HTTPS registry on loopback whose certificate is signed by a CA made in the
 *   test (openssl), under a real name (`registry.yep.test`) that does not resolve:
 *   only the proxy (the npm `proxy` package, counting CONNECTs) can reach it, so a
 *   request that arrives at the registry went through the proxy;
 * - install, update, search and install --frozen all succeed through HTTPS_PROXY
 *   with NODE_EXTRA_CA_CERTS, and the proxy saw a CONNECT for every connection;
 * - NO_PROXY naming the host: no CONNECT at all (the name is answered by the
 *   client's test resolver instead);
 * - without the CA: a certificate error whose hint names NODE_EXTRA_CA_CERTS.
 * Node reads NODE_EXTRA_CA_CERTS only as it starts: the runs that trust the CA run in one
 * process started with it (../helpers/cli-host.ts), each with its own environment (the
 * proxy variables, NO_PROXY, its home); which network module a run loads is a process's
 * own, so those two runs are CLI processes of their own.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixtureCrate } from '../helpers/crates.js';
import { startCliHost, type CliHost } from '../helpers/cli-host.js';
import { startProxy, type TestProxy } from '../helpers/http-proxy.js';
import { jsonOf, makeTempHome, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { moduleLog, undiciIn } from '../helpers/module-log.js';
import { describeNeeding } from '../helpers/needs.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { NEEDS_OPENSSL, makeTestCa, type TestCa } from '../helpers/tls-ca.js';

const HELLO = 'yolop-extension-hello';
const NAME = 'registry.yep.test';
let ca: TestCa;
let reg: TestRegistry;
let proxy: TestProxy;
let port: number;
/** The process that trusts the private CA (NODE_EXTRA_CA_CERTS at its start). */
let host: CliHost;
const homes: TempHome[] = [];

const home = (): TempHome => {
  const h = makeTempHome();
  homes.push(h);
  return h;
};
const lockText = (h: TempHome) => readFileSync(join(h.configDir, 'extensions', 'extensions.lock'), 'utf8');

describeNeeding(NEEDS_OPENSSL, 'proxies and NODE_EXTRA_CA_CERTS', () => {
  beforeAll(async () => {
    ca = makeTestCa([NAME]);
    reg = await startRegistry({ tls: { key: ca.key, cert: ca.cert }, host: NAME });
    port = Number(new URL(reg.url).port);
    reg.publish({ name: HELLO, vers: '0.3.0', data: fixtureCrate(HELLO, '0.3.0'), description: 'Says hello' });
    proxy = await startProxy({ [`${NAME}:${port}`]: `127.0.0.1:${port}` });
    host = startCliHost({ NODE_EXTRA_CA_CERTS: ca.caFile });
  });
  afterAll(async () => {
    await host?.close();
    await proxy?.close();
    await reg?.close();
    ca?.cleanup();
    for (const h of homes) h.cleanup();
  });

  const env = (h: TempHome, extra: Record<string, string> = {}) => ({
    ...h.env,
    YEP_EXT_INDEX: reg.indexUrl,
    YEP_EXT_HTTP_RETRIES: '0',
    NODE_EXTRA_CA_CERTS: ca.caFile,
    HTTPS_PROXY: proxy.url,
    ...extra,
  });

  it('install, search, update and install --frozen go through the proxy, trusting the private CA', async () => {
    const h = home();
    proxy.seen.length = 0;
    reg.requests.length = 0;
    const install = await host.run(['install', 'hello@^0.3'], { env: env(h) });
    expect(install.code, install.stderr).toBe(0);
    expect(lockText(h)).toContain('version = "0.3.0"');
    // Every connection to the registry was a tunnel the proxy opened (the name resolves nowhere else).
    expect(proxy.connects().length).toBeGreaterThan(0);
    expect(new Set(proxy.seen)).toEqual(new Set([`CONNECT ${NAME}:${port}`]));
    expect(reg.requestsTo('/crates/').length).toBe(1);

    const before = proxy.connects().length;
    const search = await host.run(['search', 'hello', '--json'], { env: env(h) });
    expect(search.code, search.stderr).toBe(0);
    expect(jsonOf(search).hits.map((x: { crate: string }) => x.crate)).toEqual([HELLO]);
    expect(proxy.connects().length).toBeGreaterThan(before);

    reg.publish({ name: HELLO, vers: '0.3.1', data: fixtureCrate(HELLO, '0.3.1') });
    const mid = proxy.connects().length;
    const update = await host.run(['update', 'hello', '--json'], { env: env(h) });
    expect(update.code, update.stderr).toBe(0);
    expect(lockText(h)).toContain('version = "0.3.1"');
    expect(proxy.connects().length).toBeGreaterThan(mid);

    const lockFile = join(h.configDir, 'extensions', 'extensions.lock');
    const fresh = home();
    const last = proxy.connects().length;
    reg.requests.length = 0;
    const frozen = await host.run(['install', '--frozen', '--lockfile', lockFile], { env: env(fresh) });
    expect(frozen.code, frozen.stderr).toBe(0);
    expect(lockText(fresh)).toBe(lockText(h));
    expect(reg.requestsTo('/crates/').length).toBe(1);
    expect(proxy.connects().length).toBeGreaterThan(last);
    expect(new Set(proxy.seen)).toEqual(new Set([`CONNECT ${NAME}:${port}`]));
  });

  it('lower-case https_proxy wins over HTTPS_PROXY, as curl reads them', async () => {
    const h = home();
    proxy.seen.length = 0;
    const r = await host.run(['install', 'hello@0.3.0'], { env: env(h, { HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: proxy.url }) });
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.connects().length).toBeGreaterThan(0);
  });

  it('NO_PROXY naming the host: connects directly, the proxy sees nothing', async () => {
    for (const noProxy of [NAME, `.yep.test`, `other.example,${NAME}:${port}`, '*']) {
      const h = home();
      proxy.seen.length = 0;
      reg.requests.length = 0;
      const r = await host.run(['install', 'hello@0.3.0'], { env: env(h, { NO_PROXY: noProxy, YEP_EXT_TEST_RESOLVE: `${NAME}=127.0.0.1` }) });
      expect(r.code, `${noProxy}: ${r.stderr}`).toBe(0);
      expect(proxy.seen, noProxy).toEqual([]);
      expect(reg.requestsTo('/crates/').length).toBe(1);
    }
  });

  it("through the proxy the request is undici's; direct (NO_PROXY) it is node:https, undici never loaded, the private CA still trusted", async () => {
    const proxied = home();
    const viaProxy = moduleLog(proxied.root, 'proxied');
    proxy.seen.length = 0;
    const r1 = await runCliProcess(['install', 'hello@0.3.0'], { env: env(proxied, viaProxy.env) });
    expect(r1.code, r1.stderr).toBe(0);
    expect(proxy.connects().length).toBeGreaterThan(0);
    expect(undiciIn(viaProxy.read()).some((m) => m.endsWith('lib/undici.cjs'))).toBe(true);

    const direct = home();
    const straight = moduleLog(direct.root, 'direct');
    proxy.seen.length = 0;
    reg.requests.length = 0;
    const r2 = await runCliProcess(['install', 'hello@0.3.0'], {
      env: env(direct, { ...straight.env, NO_PROXY: NAME, YEP_EXT_TEST_RESOLVE: `${NAME}=127.0.0.1` }),
    });
    expect(r2.code, r2.stderr).toBe(0);
    expect(lockText(direct)).toContain('version = "0.3.0"');
    expect(proxy.seen).toEqual([]);
    expect(reg.requestsTo('/crates/').length).toBe(1);
    const modules = straight.read();
    expect(modules).toContain('NativeModule https');
    expect(undiciIn(modules)).toEqual([]);
  });

  it('direct (NO_PROXY) without NODE_EXTRA_CA_CERTS: the private certificate is refused, with a hint naming it; nothing installed', async () => {
    const h = home();
    const e = env(h, { NO_PROXY: NAME, YEP_EXT_TEST_RESOLVE: `${NAME}=127.0.0.1` });
    delete (e as Record<string, string>).NODE_EXTRA_CA_CERTS;
    proxy.seen.length = 0;
    const r = await runCli(['install', 'hello@0.3.0', '--json'], { env: e });
    expect(r.code).toBe(6);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_NETWORK');
    expect(err.hint).toMatch(/NODE_EXTRA_CA_CERTS/);
    expect(proxy.seen).toEqual([]);
    expect(() => lockText(h)).toThrow();
  });

  it('NO_PROXY for another port of the host does not bypass the proxy', async () => {
    const h = home();
    proxy.seen.length = 0;
    const r = await host.run(['install', 'hello@0.3.0'], { env: env(h, { NO_PROXY: `${NAME}:1` }) });
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.connects().length).toBeGreaterThan(0);
  });

  it('without NODE_EXTRA_CA_CERTS the private certificate is refused, with a hint naming it; nothing installed', async () => {
    const h = home();
    const e = env(h);
    delete (e as Record<string, string>).NODE_EXTRA_CA_CERTS;
    const r = await runCli(['install', 'hello@0.3.0', '--json'], { env: e });
    expect(r.code).toBe(6);
    const err = jsonOf(r).error;
    expect(err.code).toBe('E_NETWORK');
    expect(err.hint).toMatch(/NODE_EXTRA_CA_CERTS/);
    expect(() => lockText(h)).toThrow();
  });

  it('a proxy that refuses the tunnel: a network error naming the proxy (without its credentials)', async () => {
    const h = home();
    reg.requests.length = 0;
    // No TLS handshake is ever reached, so the private CA is not needed: the run stays in this process.
    const e = env(h, { HTTPS_PROXY: `http://user:s3cret@127.0.0.1:9` });
    delete (e as Record<string, string>).NODE_EXTRA_CA_CERTS;
    const r = await runCli(['install', 'hello@0.3.0', '--json'], { env: e });
    expect(r.code).toBe(6);
    expect(r.stdout + r.stderr).not.toContain('s3cret');
    expect(jsonOf(r).error.message + jsonOf(r).error.hint).toContain('http://127.0.0.1:9');
    // Nothing got past the refused tunnel, and nothing was placed or pinned.
    expect(reg.requests).toEqual([]);
    expect(() => lockText(h)).toThrow();
    expect(existsSync(join(h.configDir, 'extensions', 'hello'))).toBe(false);
  });
});
