/**
 * Prebuilt server binaries through the whole install: downloaded after the
 * content hash, verified against the mandatory .sha256, recorded in the lock,
 * left out of drift checks; a bad checksum leaves the package installed with a note.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { hostTarget } from '../../src/core/binary/provision-binary.js';
import { describeBinaryTrust } from '../../src/core/binary/binary-record.js';
import { buildCrate } from '../helpers/crates.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

let reg: TestRegistry;
let home: TempHome;
const BINARY = '#!/bin/sh\nexec cat\n';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function publish(name: string, checksum: string): void {
  const crate = `yolop-extension-${name}`;
  const manifest = {
    name,
    version: '1.0.0',
    yolop: { capabilityServer: { command: `${name}-server`, binaries: `${reg.url}bin/{name}-{version}-{target}` }, tools: [{ name: 't' }] },
  };
  reg.publish({
    name: crate,
    vers: '1.0.0',
    data: buildCrate({
      name: crate,
      version: '1.0.0',
      files: { 'plugin.json': JSON.stringify(manifest), 'Cargo.toml': `[package]\nname = "${crate}"\nversion = "1.0.0"\n` },
    }),
  });
  const path = `/bin/${name}-1.0.0-${hostTarget()}`;
  reg.serve(path, BINARY);
  reg.serve(`${path}.sha256`, `${checksum}  ${name}-server\n`);
}

beforeAll(async () => {
  reg = await startRegistry();
  publish('binny', sha(BINARY));
  publish('badbin', 'f'.repeat(64));
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());
const env = () => ({ ...home.env, YEP_EXT_INDEX: reg.indexUrl });

describeNeeding(
  need(hostTarget() !== undefined, `a platform with a prebuilt-binary target (this is ${process.platform}-${process.arch})`),
  'prebuilt server binary',
  () => {
    it('is fetched, verified, made executable, recorded, and not reported as drift', async () => {
      const r = await runCli(['install', 'binny'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      const bin = join(home.configDir, 'extensions', 'binny', 'bin', 'binny-server');
      expect(readFileSync(bin, 'utf8')).toBe(BINARY);
      expect(statSync(bin).mode & 0o777).toBe(0o755);
      const lock = parse(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')) as {
        extensions: Array<{ source: Record<string, string> }>;
      };
      expect(lock.extensions[0]!.source.binary_sha256).toBe(sha(BINARY));
      const list = jsonOf(await runCli(['list', '--json'], { env: env() }));
      // No drift; the one problem is that a release-host .sha256 is the weaker kind of digest (docs/binaries.md).
      expect(list.extensions[0].problems).toEqual([describeBinaryTrust('release-host')]);
      expect(lock.extensions[0]!.source.binary_digest_source).toBe('release-host');
    });

    it('a wrong checksum refuses the binary, keeps the package, and says it cannot start yet', async () => {
      const r = await runCli(['install', 'badbin'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/sha256|checksum/i);
      expect(r.stdout).toContain('cannot be found yet');
      const list = jsonOf(await runCli(['list', '--json'], { env: env() }));
      expect(list.extensions[0].name).toBe('badbin');
    });
  },
);
