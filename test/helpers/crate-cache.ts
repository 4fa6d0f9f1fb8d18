/**
 * buildCrate for the big archives the unpack tests build (thousands of files, MiBs of
 * content): deflating them at gzip's default level is most of such a file's CPU, and
 * the same entries give the same tar every run. The gzip'd bytes are kept under the
 * sha256 of the tar they compress and of the zlib version that deflates it (test-cache.ts):
 * deflate's output is not fixed across zlib versions (Node 20 and 24 carry different ones),
 * so a run finds exactly the bytes buildCrate would have made for these entries in this
 * process, and a change to the entries, to tar-builder.ts or to zlib is a different key.
 * Small archives are deflated as they are: reading one back would cost about as much.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildTar, type TarEntry, type TarOptions } from './tar-builder.js';
import { testCacheDir } from './test-cache.js';

/** Below this much tar, deflating it is cheap enough to do every time. */
const CACHED_FROM = 256 * 1024;

/** The archives already read or made in this process, by their key. */
const made = new Map<string, Buffer>();

/** buildCrate(entries, options): the same bytes, deflated once per tar across runs. */
export function cachedCrate(entries: TarEntry[], options: TarOptions = {}): Buffer {
  const tar = buildTar(entries, options);
  if (tar.length < CACHED_FROM) return gzipSync(tar);
  const key = createHash('sha256').update(`zlib ${process.versions.zlib}\n`).update(tar).digest('hex');
  const known = made.get(key);
  if (known) return known;
  const dir = testCacheDir('crates');
  const file = join(dir, `${key}.crate`);
  let crate: Buffer;
  try {
    crate = readFileSync(file);
  } catch {
    crate = gzipSync(tar);
    mkdirSync(dir, { recursive: true });
    // Renamed into place whole: a run that stops half-way leaves no short archive under the key.
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, crate);
    renameSync(temp, file);
  }
  made.set(key, crate);
  return crate;
}
