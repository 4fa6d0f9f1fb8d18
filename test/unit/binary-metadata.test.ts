/**
 * The pure parts of binary provisioning: binstall's template language, its
 * metadata (overrides, cfg()), the artifact decision (yolop template first,
 * in-crate digests), the strict zip reader, and the trust wording.
 */
import { describe, expect, it } from 'vitest';
import { decideArtifact } from '../../src/core/binary/artifact-source.js';
import { binaryTrust, describeBinaryTrust, weakBinaryProblem, withBinaryRecord } from '../../src/core/binary/binary-record.js';
import { binstallFor, cargoFacts, evalCfg } from '../../src/core/binary/binstall-meta.js';
import { targetInfo } from '../../src/core/binary/target.js';
import { parseTemplate, renderTemplate } from '../../src/core/binary/template.js';
import { zipEntries, zipRead } from '../../src/core/archive/zip-read.js';
import { parseManifest, validateManifest } from '../../src/core/package/manifest-validate.js';
import { buildZip } from '../helpers/zip-builder.js';

const LINUX = 'x86_64-unknown-linux-gnu';
const HEX = 'ab'.repeat(32);

describe('binstall templates', () => {
  it('fills keys with or without spaces, and keeps escapes literal', () => {
    const v = { name: 'foo', version: '1.0.0', target: LINUX, 'archive-suffix': '.tgz' };
    expect(renderTemplate('{ name }-{version}-{  target  }{ archive-suffix }', v)).toBe(`foo-1.0.0-${LINUX}.tgz`);
    expect(renderTemplate('a\\{name\\}\\\\b', v)).toBe('a{name}\\b');
  });
  it('names an unknown key, an unclosed or stray brace', () => {
    expect(() => renderTemplate('{ nope }', {})).toThrow(/uses \{ nope \}/);
    expect(() => parseTemplate('x{name')).toThrow(/unclosed/);
    expect(() => parseTemplate('x}')).toThrow(/unbalanced/);
    expect(() => parseTemplate('{ a b }')).toThrow(/not a template key/);
  });
});

describe('cfg() overrides', () => {
  const linux = targetInfo(LINUX);
  const mac = targetInfo('aarch64-apple-darwin');
  const win = targetInfo('x86_64-pc-windows-msvc');
  it.each([
    ['cfg(target_os = "linux")', linux, true],
    ['cfg(target_os = "linux")', mac, false],
    ['cfg(target_os = "macos")', mac, true],
    ['cfg(unix)', mac, true],
    ['cfg(windows)', win, true],
    ['cfg(not(target_os = "windows"))', linux, true],
    ['cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))', linux, true],
    ['cfg(all(target_os = "linux", target_env = "musl"))', linux, false],
    ['cfg(any(windows, target_vendor = "apple"))', mac, true],
    ['cfg(target_family = "unix",)', linux, undefined],
    ['cfg(oops', linux, undefined],
  ] as const)('%s', (text, info, want) => {
    expect(evalCfg(text, info)).toBe(want);
  });
});

describe('binstall metadata', () => {
  const toml = `
[package]
name = "yolop-extension-demo"
version = "0.4.0"
repository = "https://example.com/acme/demo/"

[package.metadata.binstall]
pkg-url = "{ repo }/releases/download/v{ version }/{ name }-{ target }{ archive-suffix }"
pkg-fmt = "tgz"
bin-dir = "{ name }-{ target }/{ bin }{ binary-ext }"

[package.metadata.binstall.signing]
algorithm = "minisign"
pubkey = "RWSYFUFPOm40dmqWaISkkFkBdw3VDxFdP2f8+tV1TOfVtqK3Qt3d42+/"

[package.metadata.binstall.overrides.'cfg(target_os = "linux")']
pkg-fmt = "zip"

[package.metadata.binstall.overrides.x86_64-unknown-linux-gnu]
pkg-fmt = "bin"
pkg-url = "https://dl.example.com/{ bin }-{ target }"

[package.metadata.binstall.overrides.x86_64-pc-windows-msvc]
pkg-fmt = "ZIP"
`;
  const facts = cargoFacts(toml);
  it('reads the table and merges overrides: exact triple, then cfg(), then the base', () => {
    expect(facts.problems).toEqual([]);
    expect(binstallFor(facts.binstall!, LINUX)).toMatchObject({ pkgFmt: 'bin', pkgUrl: 'https://dl.example.com/{ bin }-{ target }' });
    expect(binstallFor(facts.binstall!, 'aarch64-unknown-linux-gnu')).toMatchObject({ pkgFmt: 'zip', pkgUrl: expect.stringContaining('{ repo }') });
    expect(binstallFor(facts.binstall!, 'x86_64-pc-windows-msvc').pkgFmt).toBe('zip');
    expect(binstallFor(facts.binstall!, 'aarch64-apple-darwin').pkgFmt).toBe('tgz');
    expect(binstallFor(facts.binstall!, 'aarch64-apple-darwin').signing?.algorithm).toBe('minisign');
  });

  const manifest = (cs: Record<string, unknown> = {}) =>
    parseManifest(
      JSON.stringify({ name: 'demo', version: '0.4.0', yolop: { capabilityServer: { command: 'demo-server', ...cs }, tools: [{ name: 't' }] } }),
      't',
    );

  it('renders the pkg-url per archive suffix and the bin-dir path', () => {
    const d = decideArtifact({ manifest: manifest(), cargo: facts, target: 'aarch64-apple-darwin' });
    expect(d.kind).toBe('artifact');
    if (d.kind !== 'artifact') return;
    expect(d.plan.origin).toBe('binstall');
    expect(d.plan.urls).toEqual([
      'https://example.com/acme/demo/releases/download/v0.4.0/yolop-extension-demo-aarch64-apple-darwin.tgz',
      'https://example.com/acme/demo/releases/download/v0.4.0/yolop-extension-demo-aarch64-apple-darwin.tar.gz',
    ]);
    expect(d.plan.pick).toEqual({ path: 'yolop-extension-demo-aarch64-apple-darwin/demo-server' });
    expect(d.plan.signatureUrl?.(d.plan.urls[0]!)).toBe(`${d.plan.urls[0]}.sig`);
  });

  it('prefers the yolop template, and takes the in-crate digest for this target only', () => {
    const m = manifest({ binaries: 'https://x/{name}-{target}', binary_sha256: { [LINUX]: HEX.toUpperCase() } });
    const d = decideArtifact({ manifest: m, cargo: facts, target: LINUX });
    expect(d).toMatchObject({ kind: 'artifact', plan: { origin: 'yolop', urls: [`https://x/demo-${LINUX}`], expected: HEX, fmts: ['bin'] } });
    expect(decideArtifact({ manifest: m, target: 'aarch64-apple-darwin' })).toEqual({
      kind: 'none',
      reason: 'the crate lists artifact digests, but none for aarch64-apple-darwin',
    });
  });

  it('says what is unusable: unsupported formats, unknown keys, no pkg-fmt to guess', () => {
    const f = (body: string) => cargoFacts(`[package]\nname = "c"\nversion = "1.0.0"\n[package.metadata.binstall]\n${body}`);
    expect(decideArtifact({ manifest: manifest(), cargo: f('pkg-url = "https://x/{ target }.tar.xz"'), target: LINUX })).toMatchObject({
      kind: 'unusable',
      reason: expect.stringContaining('txz is not one yep-ext unpacks'),
    });
    expect(decideArtifact({ manifest: manifest(), cargo: f('pkg-url = "https://x/{ nope }.tgz"'), target: LINUX })).toMatchObject({
      kind: 'unusable',
      reason: expect.stringContaining('{ nope }'),
    });
    expect(decideArtifact({ manifest: manifest(), cargo: f('pkg-url = "https://x/{ target }/file"'), target: LINUX })).toMatchObject({
      kind: 'unusable',
      reason: expect.stringContaining('cannot be guessed'),
    });
    expect(
      decideArtifact({ manifest: manifest(), cargo: f('pkg-url = "https://x/{ target }/file"\npkg-fmt = "bin"\nbin-dir = "x"'), target: LINUX }),
    ).toMatchObject({ kind: 'artifact', plan: { fmts: ['bin'], pick: { fileName: 'demo-server' } } });
    expect(decideArtifact({ manifest: manifest(), cargo: f('pkg-fmt = "rar"\npkg-url = "https://x/{ target }.zip"'), target: LINUX })).toMatchObject({
      kind: 'unusable',
      reason: expect.stringContaining('pkg-fmt "rar"'),
    });
    expect(decideArtifact({ manifest: manifest(), cargo: f('bin-dir = "x"'), target: LINUX })).toMatchObject({ kind: 'none' });
    expect(decideArtifact({ manifest: manifest(), target: LINUX })).toMatchObject({ kind: 'none', reason: 'the crate names no prebuilt artifact' });
  });
});

describe('capabilityServer.binary_sha256 in plugin.json', () => {
  const v = (d: unknown) => validateManifest({ name: 'x', yolop: { capabilityServer: { command: 'c', binary_sha256: d }, tools: [{ name: 't' }] } });
  it('accepts target -> hex (normalised to lower case) and refuses anything else', () => {
    expect(v({ [LINUX]: HEX.toUpperCase() })).toMatchObject({ manifest: { yolop: { capabilityServer: { binary_sha256: { [LINUX]: HEX } } } } });
    expect(v('abc')).toMatchObject({ problems: ['yolop.capabilityServer.binary_sha256: must be an object of target triple -> SHA-256 hex'] });
    expect(v({ [LINUX]: 'abc' })).toMatchObject({ problems: [`yolop.capabilityServer.binary_sha256.${LINUX}: must be 64 hex digits (a SHA-256)`] });
    expect(v({ 'a b': HEX })).toMatchObject({ problems: [expect.stringContaining('is not a target triple')] });
  });
});

describe('strict zip reader', () => {
  it('reads stored and deflated regular files, checking size and CRC', () => {
    const zip = buildZip([
      { name: 'dir/', mode: 0o040755 },
      { name: 'dir/a', content: 'stored!', method: 0 },
      { name: 'dir/b', content: 'deflated '.repeat(50) },
    ]);
    const entries = zipEntries(zip);
    expect(entries.map((e) => [e.name, e.kind])).toEqual([
      ['dir/', 'dir'],
      ['dir/a', 'file'],
      ['dir/b', 'file'],
    ]);
    expect(zipRead(zip, entries[1]!, 1000).toString()).toBe('stored!');
    expect(zipRead(zip, entries[2]!, 1000).toString()).toBe('deflated '.repeat(50));
  });
  it('marks links as links, and refuses lies, encryption, oversize and non-zips', () => {
    expect(zipEntries(buildZip([{ name: 'l', content: '/etc/passwd', mode: 0o120777 }]))[0]!.kind).toBe('link');
    const liar = buildZip([{ name: 'x', content: 'abc', declaredSize: 2 }]);
    expect(() => zipRead(liar, zipEntries(liar)[0]!, 100)).toThrow(/inflate|not the recorded/);
    const enc = buildZip([{ name: 'x', content: 'abc', encrypted: true }]);
    expect(() => zipRead(enc, zipEntries(enc)[0]!, 100)).toThrow(/encrypted/);
    const big = buildZip([{ name: 'x', content: 'a'.repeat(100) }]);
    expect(() => zipRead(big, zipEntries(big)[0]!, 10)).toThrow(/larger than/);
    const bad = buildZip([{ name: 'x', content: 'abc', method: 0 }]);
    bad[30 + 1] = 0x41; // the stored data changes, the CRC does not
    expect(() => zipRead(bad, zipEntries(bad)[0]!, 100)).toThrow(/CRC-32/);
    expect(() => zipEntries(Buffer.from('not a zip at all, just text'))).toThrow(/not a zip/);
  });
});

describe('binary trust wording', () => {
  const crate = { type: 'crate' as const, crate_name: 'c', version: '1.0.0' };
  const rec = { binary_sha256: HEX, binary_file_sha256: HEX, binary_source: 'prebuilt' as const };
  it('ranks the digest kinds and calls release-host-only the weak kind', () => {
    expect(binaryTrust(crate)).toBeUndefined();
    expect(binaryTrust(withBinaryRecord(crate, { ...rec, binary_digest_source: 'crate' }))).toBe('crate-digest');
    expect(binaryTrust(withBinaryRecord(crate, { ...rec, binary_digest_source: 'signature', binary_signature: 'minisign' }))).toBe('crate-key');
    expect(binaryTrust(withBinaryRecord(crate, { ...rec, binary_source: 'cargo' }))).toBe('local-build');
    expect(weakBinaryProblem(withBinaryRecord(crate, { ...rec, binary_digest_source: 'release-host' }))).toBe(describeBinaryTrust('release-host'));
    expect(weakBinaryProblem({ ...crate, binary_sha256: HEX })).toMatch(/^weak binary digest/);
    expect(weakBinaryProblem(withBinaryRecord(crate, { ...rec, binary_digest_source: 'crate' }))).toBeUndefined();
  });
  it('replaces an earlier record whole', () => {
    const old = withBinaryRecord(crate, { ...rec, binary_digest_source: 'release-host', binary_target: 'x' });
    expect(withBinaryRecord(old, { ...rec, binary_source: 'cargo' })).toEqual({ ...crate, ...rec, binary_source: 'cargo' });
    expect(withBinaryRecord(old, undefined)).toEqual(crate);
  });
});
