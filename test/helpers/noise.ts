/**
 * Deterministic bytes for the unpack tests' archives: the same in every run and on every
 * machine, so the MiB-sized archives made of them are the same tars and are deflated once
 * across runs (crate-cache.ts keys by the tar's digest). Any change to what these return is a
 * different tar, hence a new key and one more deflate, not a wrong archive.
 */
import { createHash } from 'node:crypto';
import type { TarEntry } from './tar-builder.js';

/** `length` bytes that do not deflate: one SHAKE256 output of `label`, not a hash call per 32 bytes. */
export function noise(label: string, length: number): Buffer {
  return createHash('shake256', { outputLength: length }).update(label).digest();
}

/** ~1-1.5 KB of hex for file `i`, which deflates about 2:1, like real files. */
function hexOf(i: number): string {
  return noise(`hex/${i}`, 32 * (16 + (i % 8))).toString('hex');
}

/** hexOf(i), made once per index: several tests unpack the same files. */
const hex: string[] = [];
export function hexContent(i: number): string {
  hex[i] ??= hexOf(i);
  return hex[i];
}

/**
 * A crate's entries under `root`: its Cargo.toml and `n` files, file `i` at `path(i)` with
 * `content(i)` (hex by default) and `mode(i)` (the tar builder's default when undefined).
 */
export function manyFiles(
  root: string,
  n: number,
  layout: { path: (i: number) => string; content?: (i: number) => string; mode?: (i: number) => number | undefined },
): TarEntry[] {
  const { path, content = hexContent, mode = () => undefined } = layout;
  return [
    { path: `${root}/Cargo.toml`, content: '[package]\n' },
    ...Array.from({ length: n }, (_, i): TarEntry => {
      const m = mode(i);
      return { path: `${root}/${path(i)}`, content: content(i), ...(m !== undefined ? { mode: m } : {}) };
    }),
  ];
}
