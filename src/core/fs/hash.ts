/**
 * The one way the code makes a hash: node:crypto is loaded at the first hash, not when a
 * module that can hash is loaded. Loading it (and node:stream, which it loads) costs every
 * start-up some milliseconds, and the commands that start most often hash nothing: `list`
 * and `verify` on unchanged trees trust their stat signatures, `--help` reads no package.
 * process.getBuiltinModule is Node 20.16+ (package.json engines: 20.18.1), and works the same
 * in the ES module sources and the CommonJS bundle.
 */
import type { Hash } from 'node:crypto';

/** A fresh hash object of `algorithm` (what node:crypto's createHash makes). */
export function newHash(algorithm: string): Hash {
  return process.getBuiltinModule('node:crypto').createHash(algorithm);
}

/** Lowercase hex SHA-256 of `data` (a string is hashed as UTF-8). */
export function sha256Hex(data: string | Uint8Array): string {
  return newHash('sha256').update(data).digest('hex');
}
