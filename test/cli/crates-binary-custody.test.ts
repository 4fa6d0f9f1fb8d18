/**
 * Chain of custody for prebuilt binaries, through the CLI against the loopback
 * registry: digests inside the crate (plugin.json and [package.metadata.yolop])
 * are the only ones that count, so a release host that swaps both the artifact
 * and its .sha256 is refused; cargo-binstall metadata (pkg-url, pkg-fmt,
 * bin-dir) with a minisign key verifies the .sig beside the artifact; a crate
 * without a key falls back to the host's .sha256 form. Each refusal is checked
 * on disk: no bin/ file, no digest in the lock.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'smol-toml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeBinaryTrust } from '../../src/core/binary/binary-record.js';
import { hostTarget } from '../../src/core/binary/target.js';
import { buildCrate } from '../helpers/crates.js';
import { describeNeeding, need } from '../helpers/needs.js';
import { mountTmpfs, tmpfsMountable } from '../helpers/tmpfs-mount.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { makeKey, signData, type TestKey } from '../helpers/minisign.js';
import { FAST_HTTP_ENV, startRegistry, type TestRegistry } from '../helpers/registry.js';
import { buildTar } from '../helpers/tar-builder.js';
import { buildZip } from '../helpers/zip-builder.js';

const TARGET = hostTarget();
if (!TARGET && process.env.YEP_EXT_REQUIRE_ALL === '1') throw new Error(`no prebuilt target for ${process.platform}-${process.arch}: these tests need one`);
const GOOD = Buffer.from('#!/bin/sh\nexec cat\n');
const EVIL = Buffer.from('#!/bin/sh\necho pwned\n');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let reg: TestRegistry;
let home: TempHome;
let key: TestKey;
let otherKey: TestKey;

function publish(name: string, files: Record<string, NonNullable<Parameters<typeof buildCrate>[0]['files']>[string]>): void {
  const crate = `yolop-extension-${name}`;
  reg.publish({
    name: crate,
    vers: '1.0.0',
    data: buildCrate({ name: crate, version: '1.0.0', files: { 'Cargo.toml': `[package]\nname = "${crate}"\nversion = "1.0.0"\n`, ...files } }),
  });
}
const pluginJson = (name: string, server: Record<string, unknown>) =>
  JSON.stringify({ name, version: '1.0.0', yolop: { capabilityServer: { command: `${name}-server`, ...server }, tools: [{ name: 't' }] } });
const binstallToml = (name: string, meta: string) =>
  `[package]\nname = "yolop-extension-${name}"\nversion = "1.0.0"\nrepository = "${reg.url}repo/"\n\n[package.metadata.binstall]\n${meta}\n`;
const signing = (k: TestKey) => `\n[package.metadata.binstall.signing]\nalgorithm = "minisign"\npubkey = "${k.pubkey}"\n`;
const tgz = (name: string, body: Buffer) =>
  gzipSync(
    buildTar([
      { path: `yolop-extension-${name}-${TARGET}/README`, content: 'r' },
      { path: `yolop-extension-${name}-${TARGET}/${name}-server`, content: body, mode: 0o755 },
    ]),
  );

beforeAll(async () => {
  reg = await startRegistry();
  key = makeKey();
  otherKey = makeKey();
  const t = TARGET ?? 'none';
  // 1. In-crate digest (plugin.json), release host honest; and one whose host swapped both files.
  for (const [name, served] of [
    ['digested', GOOD],
    ['swapped', EVIL],
  ] as const) {
    publish(name, { 'plugin.json': pluginJson(name, { binaries: `${reg.url}rel/{name}-{target}`, binary_sha256: { [t]: sha(GOOD) } }) });
    reg.serve(`/rel/${name}-${t}`, served);
    reg.serve(`/rel/${name}-${t}.sha256`, `${sha(served)}  ${name}\n`);
  }
  // 2. The same through [package.metadata.yolop] (no plugin.json in the crate).
  publish('tomldigest', {
    'Cargo.toml': `[package]\nname = "yolop-extension-tomldigest"\nversion = "1.0.0"\n\n[package.metadata.yolop]\ntools = [{ name = "t" }]\n\n[package.metadata.yolop.capabilityServer]\ncommand = "tomldigest-server"\nbinaries = "${reg.url}rel/{name}-{target}"\n\n[package.metadata.yolop.capabilityServer.binary_sha256]\n${t} = "${sha(GOOD)}"\n`,
  });
  reg.serve(`/rel/tomldigest-${t}`, GOOD);
  // 3. binstall metadata (tgz + bin-dir) with a minisign key: valid, flipped byte, other key, missing .sig.
  const bsUrl = `pkg-url = "{ repo }/dl/v{ version }/{ name }-{ target }{ archive-suffix }"\npkg-fmt = "tgz"\nbin-dir = "{ name }-{ target }/{ bin }{ binary-ext }"`;
  for (const name of ['signed', 'flipped', 'otherkey', 'nosig']) {
    publish(name, { 'plugin.json': pluginJson(name, {}), 'Cargo.toml': binstallToml(name, bsUrl) + signing(key) });
    const archive = tgz(name, GOOD);
    const served = Buffer.from(archive);
    if (name === 'flipped') served[served.length >> 1] = (served[served.length >> 1] ?? 0) ^ 0x01;
    // binstall tries .tgz first, then .tar.gz: serve the second to prove the fallback.
    reg.serve(`/repo/dl/v1.0.0/yolop-extension-${name}-${t}.tar.gz`, served);
    if (name !== 'nosig') reg.serve(`/repo/dl/v1.0.0/yolop-extension-${name}-${t}.tar.gz.sig`, signData(name === 'otherkey' ? otherKey : key, archive));
  }
  // 4. binstall zip, signed, with a per-target override; and binstall without a key (host .sha256 form).
  publish('zipped', {
    'plugin.json': pluginJson('zipped', {}),
    'Cargo.toml':
      binstallToml(
        'zipped',
        `pkg-url = "{ repo }/nope/{ target }.tgz"\n\n[package.metadata.binstall.overrides.${t}]\npkg-url = "{ repo }/zip/{ name }-{ target }.zip"\npkg-fmt = "zip"\nbin-dir = "pkg/{ bin }"`,
      ) + signing(key),
  });
  const zip = buildZip([
    { name: 'pkg/', mode: 0o040755 },
    { name: 'pkg/zipped-server', content: GOOD },
    { name: 'pkg/link', content: '/bin/sh', mode: 0o120777 },
  ]);
  reg.serve(`/repo/zip/yolop-extension-zipped-${t}.zip`, zip);
  reg.serve(`/repo/zip/yolop-extension-zipped-${t}.zip.sig`, signData(key, zip, { legacy: true }));
  publish('keyless', {
    'plugin.json': pluginJson('keyless', {}),
    'Cargo.toml': binstallToml('keyless', 'pkg-url = "{ repo }/k/{ bin }-{ target }"\npkg-fmt = "bin"'),
  });
  reg.serve(`/repo/k/keyless-server-${t}`, GOOD);
  reg.serve(`/repo/k/keyless-server-${t}.sha256`, `${sha(GOOD)}\n`);
  // 5. A prebuilt declared (and served), but the crate ships something at bin/<command> that cannot start.
  for (const [name, shipped] of [
    ['shipsdir', { 'bin/shipsdir-server/README': 'a directory where the program should be\n' }],
    ['shipstext', { 'bin/shipstext-server': { content: '#!/bin/sh\nexec cat\n', mode: 0o644 } }],
  ] as const) {
    publish(name, { 'plugin.json': pluginJson(name, { binaries: `${reg.url}rel/{name}-{target}`, binary_sha256: { [t]: sha(GOOD) } }), ...shipped });
    reg.serve(`/rel/${name}-${t}`, GOOD);
  }
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
  reg.requests.length = 0;
});
afterEach(() => home.cleanup());

const env = () => ({ ...home.env, ...FAST_HTTP_ENV, YEP_EXT_INDEX: reg.indexUrl });
const pkgDir = (name: string) => join(home.configDir, 'extensions', name);
function lockSource(name: string): Record<string, unknown> {
  const lock = parse(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')) as {
    extensions: Array<{ name: string; source: Record<string, unknown> }>;
  };
  return lock.extensions.find((e) => e.name === name)!.source;
}
const binFiles = (name: string) => (existsSync(join(pkgDir(name), 'bin')) ? readdirSync(join(pkgDir(name), 'bin')) : []);
const requested = (suffix: string) => reg.requests.filter((r) => r.url.endsWith(suffix)).map((r) => r.url);

async function expectInstalledWith(name: string, record: Record<string, unknown>): Promise<void> {
  const bin = join(pkgDir(name), 'bin', `${name}-server`);
  expect(readFileSync(bin)).toEqual(GOOD);
  expect(statSync(bin).mode & 0o777).toBe(0o755);
  expect(lockSource(name)).toMatchObject({ binary_file_sha256: sha(GOOD), binary_source: 'prebuilt', binary_target: TARGET, ...record });
}

async function expectRefused(name: string, r: { code: number | null; stdout: string; stderr: string }, why: RegExp): Promise<void> {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(why);
  expect(r.stdout).toContain('cannot be found yet');
  expect(binFiles(name)).toEqual([]);
  const source = lockSource(name);
  for (const k of ['binary_sha256', 'binary_file_sha256', 'binary_source', 'binary_digest_source', 'binary_signature']) expect(source[k], k).toBeUndefined();
}

const NOEXEC = 'noexec,size=1m,mode=0755';
const noexecMountable = tmpfsMountable(NOEXEC);
describeNeeding(need(noexecMountable.ok, `root and a mountable tmpfs (mount said: ${noexecMountable.why})`), 'a program on a noexec mount elsewhere', () => {
  it.skipIf(!TARGET)('a same-named program on PATH that the system refuses to run does not stop the declared prebuilt going into bin/', async () => {
    const pathDir = mkdtempSync(join(home.root, 'noexec-path-'));
    expect(mountTmpfs(pathDir, NOEXEC).status).toBe(0);
    try {
      writeFileSync(join(pathDir, 'digested-server'), GOOD, { mode: 0o755 });
      const r = await runCli(['install', 'digested'], { env: { ...env(), PATH: `${pathDir}:${home.env.PATH}` } });
      expect(r.code, r.stderr).toBe(0);
      await expectInstalledWith('digested', { binary_sha256: sha(GOOD), binary_digest_source: 'crate' });
    } finally {
      spawnSync('umount', [pathDir]);
    }
  });
});

describe.skipIf(!TARGET)('what the package ships in bin/ is its own', () => {
  for (const [name, why, kept] of [
    ['shipsdir', /bin\/shipsdir-server is a directory, not a program: not replacing the package's own file/, 'README'],
    ['shipstext', /bin\/shipstext-server is not executable .*: not replacing the package's own file/, undefined],
  ] as const) {
    it(`${name}: a declared prebuilt is not downloaded over what the package holds at bin/<command>, which stays as published`, async () => {
      const r = await runCli(['install', name, '--json'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(jsonOf(r).installed[0].notes.join('\n')).toMatch(why);
      expect(requested(`/rel/${name}-${TARGET}`)).toEqual([]);
      const shipped = join(pkgDir(name), 'bin', `${name}-server`);
      if (kept) {
        expect(readdirSync(shipped)).toEqual([kept]);
        expect(readFileSync(join(shipped, kept), 'utf8')).toBe('a directory where the program should be\n');
      } else {
        expect(statSync(shipped).mode & 0o777).toBe(0o644);
        expect(readFileSync(shipped, 'utf8')).toBe('#!/bin/sh\nexec cat\n');
      }
      expect(lockSource(name).binary_source).toBeUndefined();
    });
  }
});

describe.skipIf(!TARGET)('digests inside the crate', () => {
  it('verify the artifact without fetching any .sha256, and list calls it the strong kind', async () => {
    const r = await runCli(['install', 'digested'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('verified with a digest inside the crate');
    await expectInstalledWith('digested', { binary_sha256: sha(GOOD), binary_digest_source: 'crate' });
    expect(requested('.sha256')).toEqual([]);
    expect(jsonOf(await runCli(['list', '--json'], { env: env() })).extensions[0].problems).toEqual([]);
  });

  it('refuse a release host that swapped both the artifact and its .sha256', async () => {
    const r = await runCli(['install', 'swapped'], { env: env() });
    await expectRefused('swapped', r, /does not match the digest inside the crate \(wanted [0-9a-f]{64}, got [0-9a-f]{64}\)/);
    expect(requested('.sha256')).toEqual([]);
  });

  it('work from [package.metadata.yolop], and the written plugin.json keeps binaries a string for the host', async () => {
    const r = await runCli(['install', 'tomldigest'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    await expectInstalledWith('tomldigest', { binary_sha256: sha(GOOD), binary_digest_source: 'crate' });
    const written = JSON.parse(readFileSync(join(pkgDir('tomldigest'), 'plugin.json'), 'utf8'));
    expect(typeof written.yolop.capabilityServer.binaries).toBe('string');
    expect(written.yolop.capabilityServer.binary_sha256).toEqual({ [TARGET as string]: sha(GOOD) });
  });
});

describe.skipIf(!TARGET)('cargo-binstall metadata with a minisign key', () => {
  it('a valid signature installs the bin-dir file from the .tar.gz candidate', async () => {
    const r = await runCli(['install', 'signed'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("verified with the crate's minisign key");
    await expectInstalledWith('signed', { binary_digest_source: 'signature', binary_signature: 'minisign' });
    expect(requested('.sha256')).toEqual([]);
    expect(requested('.tgz')).toHaveLength(1); // tried first, 404
    expect(jsonOf(await runCli(['list', '--json'], { env: env() })).extensions[0].problems).toEqual([]);
  });

  it('a flipped byte is refused', async () => {
    await expectRefused(
      'flipped',
      await runCli(['install', 'flipped'], { env: env() }),
      /minisign signature check failed: the signature does not match the file/,
    );
  });

  it('a signature by another key is refused', async () => {
    await expectRefused('otherkey', await runCli(['install', 'otherkey'], { env: env() }), /signed by another key/);
  });

  it('a missing signature is refused', async () => {
    await expectRefused('nosig', await runCli(['install', 'nosig'], { env: env() }), /declares a minisign key but .*\.sig is missing \(status 404\)/);
  });

  it('a zip from a per-target override, with a legacy signature, yields the one regular file', async () => {
    const r = await runCli(['install', 'zipped'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    await expectInstalledWith('zipped', { binary_digest_source: 'signature', binary_signature: 'minisign' });
    expect(binFiles('zipped')).toEqual(['zipped-server']);
    expect(requested('.tgz')).toEqual([]);
  });

  it('without a key behaves as before: the release host .sha256, reported as the weak kind', async () => {
    const r = await runCli(['install', 'keyless'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    await expectInstalledWith('keyless', { binary_sha256: sha(GOOD), binary_digest_source: 'release-host' });
    expect(lockSource('keyless').binary_signature).toBeUndefined();
    expect(requested('.sha256')).toHaveLength(1);
    expect(jsonOf(await runCli(['list', '--json'], { env: env() })).extensions[0].problems).toEqual([describeBinaryTrust('release-host')]);
  });
});
