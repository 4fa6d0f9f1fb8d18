/**
 * Link-local in every spelling, through the CLI: as an index
 * (--index), as a config.json `dl`, as a redirect target, and as the DNS answer
 * for an ordinary name (through the YEP_EXT_TEST_RESOLVE seam: no DNS, no
 * /etc/hosts). Every refusal happens before a connection is attempted: nothing
 * here ever sends a packet beyond loopback.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';

const CRATE = 'yolop-extension-addr';
let registry: TestRegistry;
let home: TempHome;
let env: Record<string, string>;

beforeEach(async () => {
  registry = await startRegistry();
  const manifest = { name: 'addr', version: '1.0.0', yolop: { capabilityServer: { command: 'addr-server' }, tools: [{ name: 'a' }] } };
  registry.publish({
    name: CRATE,
    vers: '1.0.0',
    data: buildCrate({
      name: CRATE,
      version: '1.0.0',
      files: { 'plugin.json': JSON.stringify(manifest), 'bin/addr-server': { content: '#!/bin/sh\ncat\n', mode: 0o755 } },
    }),
  });
  home = makeTempHome();
  env = { ...home.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: registry.indexUrl };
});
afterEach(async () => {
  await registry.close();
  home.cleanup();
});

describe('link-local addresses through the CLI', () => {
  it.each([
    'https://[::ffff:169.254.169.254]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://0xa9.0376.43518/',
    'https://2852039166/',
    'https://[64:ff9b::a9fe:a9fe]/',
    'https://169.254.169.254./',
  ])('install --index %s is refused as usage (exit 2) before anything is fetched', async (index) => {
    const r = await runCli(['install', 'addr', '--index', index, '--json'], { env });
    expect(r.code, r.stdout).toBe(2);
    expect(jsonOf(r).error.message).toMatch(
      /The registry index .*: refusing the link-local address .* \((169\.254\.169\.254|::ffff:a9fe:a9fe|64:ff9b::a9fe:a9fe) is in 169\.254\.0\.0\/16 or fe80::\/10\)/,
    );
    expect(registry.requests).toHaveLength(0);
  });

  it.each(['https://[::ffff:169.254.169.254]/crates', 'https://[::ffff:a9fe:a9fe]/{crate}/{version}/download', 'https://0xa9.0376.43518/dl'])(
    'a config.json dl of %s is refused before any download',
    async (dl) => {
      registry.setConfig({ dl });
      const r = await runCli(['install', 'addr'], { env });
      expect(r.code, r.stderr).toBe(6);
      expect(r.stderr).toMatch(/The download location in .*config\.json: refusing the link-local address/);
      expect(registry.requests.filter((q) => q.url.startsWith('/crates'))).toHaveLength(0);
    },
  );

  it('a redirect of the download to a link-local address in IPv6 dress is refused', async () => {
    registry.fault('/crates/', { kind: 'redirect', location: 'https://[::ffff:a9fe:a9fe]/latest/meta-data/' });
    const r = await runCli(['install', 'addr'], { env });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/refused a redirect/);
  });

  it.each(['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1'])('a name that resolves to %s is refused before connecting', async (address) => {
    const r = await runCli(['install', 'addr', '--index', 'https://metadata.test:9443/'], {
      env: { ...env, YEP_EXT_TEST_RESOLVE: `metadata.test=${address}` },
    });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/refusing to connect to metadata\.test: it resolves to the link-local address/);
  });

  it('control: the same seam pointing at loopback gets as far as connecting (and is refused by the closed port, not by the rule)', async () => {
    // 127.0.0.1:1 is closed: the refusal comes from the kernel, which proves the name was mapped and connected to.
    const r = await runCli(['install', 'addr', '--index', 'https://ok.test:1/'], { env: { ...env, YEP_EXT_TEST_RESOLVE: 'ok.test=127.0.0.1' } });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/connection was refused/);
    expect(r.stderr).not.toMatch(/link-local/);
  });

  it('control: the loopback registry itself (plain http to 127.0.0.1) still works', async () => {
    const r = await runCli(['install', 'addr'], { env });
    expect(r.code, r.stderr).toBe(0);
  });
});
