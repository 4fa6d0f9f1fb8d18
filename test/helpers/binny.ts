/**
 * The `binny` fixture of the intact-rule and verify/repair tests: a crate whose
 * server is a prebuilt binary (`bin/binny-server`) the registry serves for the
 * host's target with a release-host `.sha256`. One definition, so both files
 * judge the same package.
 */
import { createHash } from 'node:crypto';
import { hostTarget } from '../../src/core/binary/provision-binary.js';
import { buildCrate } from './crates.js';
import { makeTempHome, type TempHome } from './home.js';
import { startRegistry, type TestRegistry } from './registry.js';
import { setupInstall } from './setup-install.js';

const BINNY_CRATE = 'yolop-extension-binny';
/** The binary as published, and another one (a swapped binary). */
export const BINNY_BINARY = '#!/bin/sh\nexec cat\n';
export const BINNY_OTHER = '#!/bin/sh\necho swapped\nexec cat\n';
/** Where the provisioned binary lives in the package. */
export const BINNY_SERVER = 'bin/binny-server';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const binPath = () => `/bin/binny-1.0.0-${hostTarget()}`;

/** Publish binny 1.0.0 (plugin.json, Cargo.toml, README.md, src/lib.txt) on `reg`. */
export function publishBinny(reg: TestRegistry): void {
  const manifest = {
    name: 'binny',
    version: '1.0.0',
    yolop: { capabilityServer: { command: 'binny-server', binaries: `${reg.url}bin/{name}-{version}-{target}` }, tools: [{ name: 't' }] },
  };
  reg.publish({
    name: BINNY_CRATE,
    vers: '1.0.0',
    data: buildCrate({
      name: BINNY_CRATE,
      version: '1.0.0',
      files: {
        'plugin.json': JSON.stringify(manifest),
        'Cargo.toml': `[package]\nname = "${BINNY_CRATE}"\nversion = "1.0.0"\n`,
        'README.md': 'hello\n',
        'src/lib.txt': 'code\n',
      },
    }),
  });
}

/** Serve `content` as binny's binary for the host's target, with its `.sha256`. */
export function serveBinnyBinary(reg: TestRegistry, content: string): void {
  reg.serve(binPath(), content);
  reg.serve(`${binPath()}.sha256`, `${sha(content)}  binny-server\n`);
}

/**
 * A registry serving binny, and a home where binny was installed once (setupInstall): the
 * home the tests copy (prepared-home.ts copyHome) where the install is their set-up, not their
 * subject. The caller closes both.
 */
export async function binnyInstalledOnce(): Promise<{ reg: TestRegistry; installed: TempHome }> {
  const reg = await startRegistry();
  publishBinny(reg);
  serveBinnyBinary(reg, BINNY_BINARY);
  const installed = makeTempHome();
  const names = await setupInstall({ ...installed.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_HTTP_RETRIES: '0' }, ['binny']);
  if (names.join() !== 'binny') throw new Error(`binny's set-up install installed ${names.join(', ')}`);
  return { reg, installed };
}
