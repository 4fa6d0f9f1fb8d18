/**
 * minisign signatures (the format cargo-binstall's `signing` uses), verified
 * with node:crypto alone: Ed25519 over the file (legacy "Ed") or over its
 * BLAKE2b-512 (pre-hashed "ED", minisign's default), then the global signature
 * over signature || trusted comment, so the trusted comment cannot be swapped.
 * The key id in the signature must be the key's: a signature by another key is
 * refused as such. Formats: https://jedisct1.github.io/minisign/ ("Signature format").
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { fileDigest } from '../fs/file-digest.js';

export interface MinisignKey {
  keyId: Buffer;
  key: KeyObject;
}

export interface MinisignSignature {
  algorithm: 'Ed' | 'ED';
  keyId: Buffer;
  signature: Buffer;
  trustedComment: string;
  globalSignature: Buffer;
}

export class MinisignError extends Error {}

const B64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

function b64(text: string, bytes: number, what: string): Buffer {
  const t = text.trim();
  const buf = B64_RE.test(t) ? Buffer.from(t, 'base64') : Buffer.alloc(0);
  if (buf.length !== bytes) throw new MinisignError(`${what} is not valid (expected ${bytes} bytes of base64)`);
  return buf;
}

/** Hex of a key id as minisign prints it (little-endian u64, upper case). */
export function keyIdHex(id: Buffer): string {
  return Buffer.from(id).reverse().toString('hex').toUpperCase();
}

/** A public key: the base64 line, with or without minisign's "untrusted comment:" line. */
export function parsePublicKey(text: string): MinisignKey {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('untrusted comment:'));
  if (lines.length !== 1) throw new MinisignError('the public key must be one base64 line');
  const raw = b64(lines[0] as string, 42, 'the public key');
  if (raw.subarray(0, 2).toString('latin1') !== 'Ed') throw new MinisignError('the public key is not an Ed25519 minisign key');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.subarray(10).toString('base64url') }, format: 'jwk' });
  return { keyId: raw.subarray(2, 10), key };
}

/** A .minisig/.sig file: untrusted comment, signature, trusted comment, global signature. */
export function parseSignature(text: string): MinisignSignature {
  if (text.length > 8192) throw new MinisignError('the signature file is too large');
  const lines = text.split(/\r?\n/);
  if (!(lines[0] ?? '').startsWith('untrusted comment:')) throw new MinisignError('the signature file does not start with "untrusted comment:"');
  const sig = b64(lines[1] ?? '', 74, 'the signature line');
  const algorithm = sig.subarray(0, 2).toString('latin1');
  if (algorithm !== 'Ed' && algorithm !== 'ED') throw new MinisignError(`unknown signature algorithm ${JSON.stringify(algorithm)}`);
  const tc = lines[2] ?? '';
  if (!tc.startsWith('trusted comment: ')) throw new MinisignError('the signature file has no "trusted comment:" line');
  const globalSignature = b64(lines[3] ?? '', 64, 'the global signature');
  if (lines.slice(4).some((l) => l.trim() !== '')) throw new MinisignError('the signature file has extra lines');
  return { algorithm, keyId: sig.subarray(2, 10), signature: sig.subarray(10), trustedComment: tc.slice('trusted comment: '.length), globalSignature };
}

/** The pre-hash of an `ED` signature, by the one file hasher (fs/file-digest.ts). */
async function blake2b512File(file: string): Promise<Buffer> {
  return Buffer.from(await fileDigest(file, 'blake2b512'), 'hex');
}

/** Largest file a legacy (not pre-hashed) signature is checked for: Ed25519 needs it whole in memory. */
export const LEGACY_MAX_BYTES = 128 * 1024 * 1024;

/**
 * Verify `file` against a signature by `key`. Resolves with the trusted comment;
 * rejects with a MinisignError saying what failed.
 */
export async function verifyFile(key: MinisignKey, sig: MinisignSignature, file: string, readWhole: (f: string) => Promise<Buffer>): Promise<string> {
  if (!sig.keyId.equals(key.keyId)) {
    throw new MinisignError(`signed by another key (key id ${keyIdHex(sig.keyId)}, the crate's key is ${keyIdHex(key.keyId)})`);
  }
  const message = sig.algorithm === 'ED' ? await blake2b512File(file) : await readWhole(file);
  if (!verify(null, message, key.key, sig.signature)) throw new MinisignError('the signature does not match the file');
  const global = Buffer.concat([sig.signature, Buffer.from(sig.trustedComment, 'utf8')]);
  if (!verify(null, global, key.key, sig.globalSignature)) throw new MinisignError('the trusted comment was altered (global signature mismatch)');
  return sig.trustedComment;
}
