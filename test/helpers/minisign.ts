/**
 * minisign keys and signatures written with node:crypto, in minisign's own
 * format (checked against the real tool's output in test/unit/minisign.test.ts),
 * so tests can sign artifacts they build on the fly.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface TestKey {
  /** The base64 line, as `[package.metadata.binstall.signing] pubkey` takes it. */
  pubkey: string;
  /** The whole .pub file (untrusted comment + base64 line). */
  pubFile: string;
  keyId: Buffer;
  privateKey: KeyObject;
}

export function makeKey(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const keyId = randomBytes(8);
  const pubkey = Buffer.concat([Buffer.from('Ed'), keyId, raw]).toString('base64');
  const idHex = Buffer.from(keyId).reverse().toString('hex').toUpperCase();
  return { pubkey, pubFile: `untrusted comment: minisign public key ${idHex}\n${pubkey}\n`, keyId, privateKey };
}

/** A .sig file for `data` (pre-hashed "ED" unless legacy). */
export function signData(key: TestKey, data: Buffer, options: { legacy?: boolean; trustedComment?: string } = {}): string {
  const message = options.legacy ? data : createHash('blake2b512').update(data).digest();
  const signature = sign(null, message, key.privateKey);
  const tc = options.trustedComment ?? `timestamp:${Math.floor(Date.now() / 1000)}\tfile:artifact`;
  const global = sign(null, Buffer.concat([signature, Buffer.from(tc)]), key.privateKey);
  const line = Buffer.concat([Buffer.from(options.legacy ? 'Ed' : 'ED'), key.keyId, signature]).toString('base64');
  return `untrusted comment: signature from minisign secret key\n${line}\ntrusted comment: ${tc}\n${global.toString('base64')}\n`;
}
