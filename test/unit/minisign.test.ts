/**
 * minisign verification with node:crypto: real minisign 0.11 output
 * (test/fixtures/minisign, pre-hashed and legacy), a signature by another key,
 * a flipped byte, an altered trusted comment, and the test helper's signer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keyIdHex, parsePublicKey, parseSignature, verifyFile } from '../../src/core/binary/minisign.js';
import { REPO_ROOT } from '../helpers/home.js';
import { makeKey, signData } from '../helpers/minisign.js';

const FIX = join(REPO_ROOT, 'test', 'fixtures', 'minisign');
const read = (f: string) => readFileSync(join(FIX, f), 'utf8');
const whole = async (f: string) => readFileSync(f);
const tmp = mkdtempSync(join(tmpdir(), 'yep-minisign-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('minisign (real tool output)', () => {
  const file = join(FIX, 'server.sh');
  const keyA = parsePublicKey(read('a.pub'));

  it('verifies a pre-hashed signature and returns the trusted comment', async () => {
    expect(parseSignature(read('server.sh.minisig')).algorithm).toBe('ED');
    await expect(verifyFile(keyA, parseSignature(read('server.sh.minisig')), file, whole)).resolves.toBe('yep-ext fixture, key A');
  });

  it('verifies a legacy (Ed) signature', async () => {
    expect(parseSignature(read('server.sh.legacy.minisig')).algorithm).toBe('Ed');
    await expect(verifyFile(keyA, parseSignature(read('server.sh.legacy.minisig')), file, whole)).resolves.toBe('legacy');
  });

  it('takes the key as the bare base64 line too (binstall pubkey)', async () => {
    const line = read('a.pub').split('\n')[1] as string;
    expect(keyIdHex(parsePublicKey(line).keyId)).toBe(read('a.pub').split('\n')[0]!.split(' ').pop());
    await expect(verifyFile(parsePublicKey(line), parseSignature(read('server.sh.minisig')), file, whole)).resolves.toBeTypeOf('string');
  });

  it('refuses a signature by another key, naming both key ids', async () => {
    await expect(verifyFile(keyA, parseSignature(read('server.sh.b.minisig')), file, whole)).rejects.toThrow(
      /signed by another key \(key id [0-9A-F]{16}, the crate's key is 76346E3A4F411598\)/,
    );
  });

  it('refuses a file with one flipped byte', async () => {
    const bytes = readFileSync(file);
    bytes[3] = (bytes[3] ?? 0) ^ 1;
    const flipped = join(tmp, 'flipped');
    writeFileSync(flipped, bytes);
    await expect(verifyFile(keyA, parseSignature(read('server.sh.minisig')), flipped, whole)).rejects.toThrow(/does not match the file/);
    await expect(verifyFile(keyA, parseSignature(read('server.sh.legacy.minisig')), flipped, whole)).rejects.toThrow(/does not match the file/);
  });

  it('refuses an altered trusted comment (global signature)', async () => {
    const text = read('server.sh.minisig').replace('key A', 'key Z');
    await expect(verifyFile(keyA, parseSignature(text), file, whole)).rejects.toThrow(/trusted comment was altered/);
  });

  it.each([
    ['empty', ''],
    ['no untrusted comment', 'x\ny\n'],
    ['short signature', 'untrusted comment: x\nRUQ=\ntrusted comment: t\nAAAA\n'],
  ])('refuses a malformed signature file (%s)', (_w, text) => {
    expect(() => parseSignature(text)).toThrow();
  });

  it('refuses malformed keys', () => {
    expect(() => parsePublicKey('')).toThrow(/one base64 line/);
    expect(() => parsePublicKey('not base64!')).toThrow(/not valid/);
    expect(() => parsePublicKey(Buffer.alloc(42).toString('base64'))).toThrow(/not an Ed25519/);
  });
});

describe('the test helper signer writes what the verifier (and minisign) accept', () => {
  it.each([false, true])('legacy %s', async (legacy) => {
    const key = makeKey();
    const data = Buffer.from('artifact bytes\n');
    const f = join(tmp, `art-${legacy}`);
    writeFileSync(f, data);
    await expect(verifyFile(parsePublicKey(key.pubFile), parseSignature(signData(key, data, { legacy, trustedComment: 'tc' })), f, whole)).resolves.toBe('tc');
    await expect(verifyFile(parsePublicKey(makeKey().pubkey), parseSignature(signData(key, data)), f, whole)).rejects.toThrow(/another key/);
  });
});
