/**
 * Prebuilt server binaries from the `capabilityServer.binaries` template: verified
 * against the mandatory `<url>.sha256`, written as bin/<command> mode 0755; every
 * refusal is a note and leaves no file behind.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/core/package/manifest.js';
import { parseManifest } from '../../src/core/package/manifest-validate.js';
import { binaryUrl, hostTarget, provisionBinary } from '../../src/core/binary/provision-binary.js';
import { makeTempHome, type TempHome } from '../helpers/home.js';
import { itNeeding, need } from '../helpers/needs.js';
import { sha256Hex, startRegistry, type TestRegistry } from '../helpers/registry.js';
import { buildTar } from '../helpers/tar-builder.js';

const FAST = { YEP_EXT_HTTP_RETRIES: '1', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '20' };
const SCRIPT = Buffer.from('#!/bin/sh\necho prebuilt-ok\n');
let reg: TestRegistry;
let home: TempHome;
let pkg: string;
const target = hostTarget()!;

beforeAll(async () => {
  reg = await startRegistry();
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome();
  pkg = join(home.root, 'pkg');
  mkdirSync(pkg);
});
afterEach(() => {
  reg.requests.length = 0;
  home.cleanup();
});

const ctx = () => home.ctx({ ...FAST, PATH: '/usr/bin:/bin' });
function manifest(binaries: string | undefined, command = 'demo-server'): Manifest {
  return parseManifest(
    JSON.stringify({ name: 'demo', version: '1.2.0', yolop: { capabilityServer: { command, ...(binaries ? { binaries } : {}) }, tools: [{ name: 't' }] } }),
    'test',
  );
}
/** Serve a binary and (unless `sha` is null) its .sha256 file. */
function publish(path: string, body: Buffer, sha: string | null = sha256Hex(body)): string {
  reg.serve(path, body);
  if (sha !== null) reg.serve(`${path}.sha256`, `${sha}  ${path.split('/').pop()}\n`);
  return `${reg.url.replace(/\/$/, '')}${path}`;
}

describe('provisionBinary', () => {
  it('downloads a bare binary for this target, verifies it, and installs it executable', async () => {
    const tpl = `${reg.url}releases/{name}-{version}-{target}`;
    publish(`/releases/demo-1.2.0-${target}`, SCRIPT);
    const out = await provisionBinary(ctx(), pkg, manifest(tpl));
    const digest = sha256Hex(SCRIPT);
    expect(out).toEqual({
      sha256: digest,
      path: join(pkg, 'bin', 'demo-server'),
      url: `${reg.url}releases/demo-1.2.0-${target}`,
      record: { binary_sha256: digest, binary_file_sha256: digest, binary_source: 'prebuilt', binary_digest_source: 'release-host', binary_target: target },
    });
    expect(statSync(out.path!).mode & 0o777).toBe(0o755);
    expect(execFileSync(out.path!).toString()).toBe('prebuilt-ok\n');
    expect(readdirSync(join(pkg, 'bin'))).toEqual(['demo-server']);
  });

  it('extracts the file named like the command from a .tar.gz', async () => {
    const archive = gzipSync(
      buildTar([
        { path: 'demo/README', content: 'docs' },
        { path: 'demo/bin/demo-server', content: SCRIPT, mode: 0o644 },
      ]),
    );
    const url = publish(`/releases/demo-${target}.tar.gz`, archive);
    const out = await provisionBinary(ctx(), pkg, manifest(url.replace(target, '{target}')));
    expect(out.sha256).toBe(sha256Hex(archive));
    expect(statSync(join(pkg, 'bin', 'demo-server')).mode & 0o777).toBe(0o755);
    expect(execFileSync(join(pkg, 'bin', 'demo-server')).toString()).toBe('prebuilt-ok\n');
    expect(readdirSync(join(pkg, 'bin'))).toEqual(['demo-server']);
  });

  it("reads a binary archive under the crate rules: links are read past, a './' root is the archive's own", async () => {
    const archive = buildTar([
      { path: './bin/demo-server', type: 'symlink', linkpath: '/etc/passwd' },
      { path: './bin/dev', type: 'fifo' },
      { path: './other/demo-server', content: SCRIPT },
    ]);
    const out = await provisionBinary(ctx(), pkg, manifest(publish(`/links/demo-${target}.tar`, archive).replace(target, '{target}')));
    expect(out.note).toBeUndefined();
    const bin = join(pkg, 'bin', 'demo-server');
    expect(lstatSync(bin).isFile()).toBe(true);
    expect(readFileSync(bin)).toEqual(SCRIPT);
    expect(readdirSync(join(pkg, 'bin'))).toEqual(['demo-server']);
  });

  it('refuses a binary archive that breaks a crate rule (a .. path, two paths that are one name), placing nothing', async () => {
    const outside = join(home.root, 'escape');
    const hostile = [[{ path: '../escape/demo-server', content: 'owned' }], [{ path: 'demo/bin/DEMO-server', content: 'other' }]];
    for (const [i, first] of hostile.entries()) {
      const archive = gzipSync(buildTar([...first, { path: 'demo/bin/demo-server', content: SCRIPT }]));
      const out = await provisionBinary(ctx(), pkg, manifest(publish(`/hostile${i}/demo-${target}.tar.gz`, archive).replace(target, '{target}')));
      expect(out.sha256).toBeUndefined();
      expect(out.note).toMatch(/no prebuilt binary installed: .*Refusing to unpack the prebuilt binary archive: entry/);
      expect(existsSync(join(pkg, 'bin')) ? readdirSync(join(pkg, 'bin')) : []).toEqual([]);
      expect(existsSync(outside)).toBe(false);
    }
  });

  it('refuses a binary whose .sha256 is missing, malformed or different, leaving nothing behind', async () => {
    const missing = publish(`/m/demo-${target}`, SCRIPT, null);
    expect((await provisionBinary(ctx(), pkg, manifest(missing))).note).toMatch(/\.sha256 is missing \(status 404\).*never installs an unverified binary/);
    reg.serve(`/bad/demo-${target}`, SCRIPT);
    reg.serve(`/bad/demo-${target}.sha256`, `${sha256Hex(SCRIPT).toUpperCase()}\n`);
    expect((await provisionBinary(ctx(), pkg, manifest(`${reg.url}bad/demo-${target}`))).note).toMatch(/does not start with a lowercase hex SHA-256/);
    const wrong = publish(`/w/demo-${target}`, SCRIPT, 'f'.repeat(64));
    const out = await provisionBinary(ctx(), pkg, manifest(wrong));
    expect(out.sha256).toBeUndefined();
    expect(out.note).toMatch(/does not match its published SHA-256/);
    expect(existsSync(join(pkg, 'bin')) ? readdirSync(join(pkg, 'bin')) : []).toEqual([]);
  });

  it('does nothing when the command already resolves (package bin/ or PATH)', async () => {
    mkdirSync(join(pkg, 'bin'));
    writeFileSync(join(pkg, 'bin', 'demo-server'), SCRIPT);
    chmodSync(join(pkg, 'bin', 'demo-server'), 0o755);
    expect(await provisionBinary(ctx(), pkg, manifest(`${reg.url}x/{target}`))).toEqual({});
    expect(await provisionBinary(ctx(), pkg, manifest(`${reg.url}x/{target}`, 'sh'))).toEqual({});
    expect(reg.requests).toHaveLength(0);
  });

  it('does nothing without a template, and notes a template it must refuse', async () => {
    expect(await provisionBinary(ctx(), pkg, manifest(undefined))).toEqual({});
    expect((await provisionBinary(ctx(), pkg, manifest('http://downloads.example.com/{target}'))).note).toMatch(/refusing plain http/);
    expect(reg.requests).toHaveLength(0);
  });
});

describe('hostTarget and binaryUrl', () => {
  it.each([
    ['linux', 'x64', false, 'x86_64-unknown-linux-gnu'],
    ['linux', 'arm64', true, 'aarch64-unknown-linux-musl'],
    ['darwin', 'arm64', false, 'aarch64-apple-darwin'],
    ['win32', 'x64', false, 'x86_64-pc-windows-msvc'],
    ['aix', 'ppc64', false, undefined],
    ['linux', 'ia32', false, undefined],
  ] as const)('%s/%s (musl %s) -> %s', (platform, arch, musl, want) => {
    expect(hostTarget(platform as NodeJS.Platform, arch, () => musl)).toBe(want);
  });
  // ldd names its C library in its version line: "GNU libc"/"GLIBC" on glibc; musl's ldd
  // prints "musl libc" on stderr and exits 1.
  const ldd = process.platform === 'linux' ? spawnSync('ldd', ['--version'], { encoding: 'utf8' }) : undefined;
  const lddLine = ldd && !ldd.error ? (`${ldd.stdout}${ldd.stderr}`.split('\n')[0] ?? '') : undefined;
  itNeeding(
    need(lddLine !== undefined && (process.arch === 'x64' || process.arch === 'arm64'), '`ldd` (Debian package libc-bin) on x64 or arm64 Linux'),
    "this machine's own libc, as the default probe tells it, is what the dynamic loader says",
    () => {
      const musl = /musl/i.test(lddLine!);
      expect(musl || /glibc|gnu libc/i.test(lddLine!), lddLine).toBe(true);
      expect(hostTarget()).toBe(`${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-${musl ? 'musl' : 'gnu'}`);
    },
  );
  it('fills the markers', () => {
    expect(binaryUrl('https://x/{name}/v{version}/{name}-{target}.tar.gz', { name: 'lsp', version: '0.3.1', target: 'x86_64-unknown-linux-gnu' })).toBe(
      'https://x/lsp/v0.3.1/lsp-x86_64-unknown-linux-gnu.tar.gz',
    );
  });
});
