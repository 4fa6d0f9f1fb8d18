/**
 * The one way the code makes a hash: node:crypto is loaded at the first hash, not when a
 * module that can hash is loaded. Loading it (and node:stream, which it loads) costs every
 * start-up some milliseconds, and the commands that start most often hash nothing: `list`
 * and `verify` on unchanged trees trust their stat signatures, `--help` reads no package.
 */
import type { Hash } from 'node:crypto';
import { builtin } from '../builtin.js';

let crypto: typeof import('node:crypto') | undefined;

/** A fresh hash object of `algorithm` (what node:crypto's createHash makes). */
export function newHash(algorithm: string): Hash {
  crypto ??= builtin<typeof import('node:crypto')>('node:crypto');
  return crypto.createHash(algorithm);
}

/** Lowercase hex SHA-256 of `data` (a string is hashed as UTF-8). */
export function sha256Hex(data: string | Uint8Array): string {
  return newHash('sha256').update(data).digest('hex');
}
