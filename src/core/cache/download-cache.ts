/**
 * The download cache shared by every home of a user (issue 14, docs/fleet.md):
 * verified `.crate`s and prebuilt binary artifacts, content-addressed with
 * cacache + ssri at `Paths.sharedCacheDir` (YEP_EXT_CACHE_DIR, else the platform
 * cache dir).
 *
 * Content is addressed by integrity only: a `.crate` is read by the SHA-256 the lock
 * or index pins (`cksum`); a name and version are never a key. A binary artifact has
 * no digest known before its download when the release host's `.sha256` or a
 * signature vouches for it, so its index key is its URL (`binaryCacheKey`): that
 * only finds a candidate, which the binary step verifies exactly as a download.
 * Only bytes that already matched their pinned digest are put in. On read, the
 * copy is hashed again (streamed): a corrupted entry is
 * a miss (removed when the cache is writable) and the file is downloaded again,
 * never installed. Every cache failure (missing, read-only mount, full disk, EACCES)
 * degrades to "no cache": the cache can make an install faster, never fail it.
 * cacache writes through temp files and atomic moves, so several processes may share it.
 */
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Context } from '../context.js';
import { bufferGarbageMeter } from '../fs/buffer-garbage.js';
import { sha256FileWithSize } from '../fs/file-digest.js';

type Cacache = typeof import('cacache');
let cacachePromise: Promise<Cacache> | undefined;

/** Lazily: most commands never touch the cache. The bundle gives only `default` for a lazy CommonJS import. */
export function loadCacache(): Promise<Cacache> {
  cacachePromise ??= import('cacache').then((m) => ('put' in m ? m : (m as unknown as { default: Cacache }).default));
  return cacachePromise;
}

export function cacheKey(sha256Hex: string): string {
  return `yep-ext:sha256:${sha256Hex}`;
}

/** The index key of a prebuilt binary artifact: where it was downloaded from (a candidate, verified on use). */
export function binaryCacheKey(url: string): string {
  return `yep-ext:binary:${url}`;
}

/** The ssri integrity string for a hex SHA-256. */
export function integrityOf(sha256Hex: string): string {
  return `sha256-${Buffer.from(sha256Hex, 'hex').toString('base64')}`;
}

/** YEP_EXT_CACHE_DIR=off (or 0/false) turns the cache off. */
export function cacheEnabled(env: Record<string, string | undefined>): boolean {
  return !/^(off|0|false|no)$/i.test(env.YEP_EXT_CACHE_DIR?.trim() ?? '');
}

async function dropCorrupted(ctx: Context, sha256Hex: string, dest: string): Promise<undefined> {
  ctx.log.warn(`The download cache entry for sha256 ${sha256Hex.slice(0, 16)}… is corrupted; downloading it again.`);
  await rm(dest, { force: true });
  await loadCacache()
    .then((c) => c.rm.content(ctx.paths.sharedCacheDir, integrityOf(sha256Hex)))
    .catch(() => undefined);
  return undefined;
}

/**
 * Copy the cached bytes for `sha256Hex` to `dest` and hash the copy (streamed: a
 * large crate is never held in memory): its size, or undefined on a miss (absent,
 * unreadable, or corrupted: then removed when possible, and `dest` removed).
 */
export async function readCachedInto(ctx: Context, sha256Hex: string, dest: string): Promise<number | undefined> {
  if (!cacheEnabled(ctx.env)) return undefined;
  try {
    const cacache = await loadCacache();
    await cacache.get.copy.byDigest(ctx.paths.sharedCacheDir, integrityOf(sha256Hex), dest);
  } catch (e) {
    await rm(dest, { force: true });
    if ((e as { code?: string }).code !== 'ENOENT') ctx.log.debug(`download cache not read (${(e as Error).message})`);
    return undefined;
  }
  // cacache's copy does not re-verify, and these bytes are about to be installed: hash them.
  const got = await sha256FileWithSize(dest).catch(() => undefined);
  if (got?.sha256 !== sha256Hex) return dropCorrupted(ctx, sha256Hex, dest);
  ctx.log.debug(`download cache hit for sha256 ${sha256Hex.slice(0, 16)}…`);
  return got.size;
}

/**
 * The SHA-256 (hex) the newest index entry under `key` names, or undefined (no entry,
 * no cache, not a sha256 integrity). Reads the index only; the content is read and
 * re-hashed by `readCachedInto`.
 */
export async function cachedDigestOf(ctx: Context, key: string): Promise<string | undefined> {
  if (!cacheEnabled(ctx.env)) return undefined;
  try {
    const cacache = await loadCacache();
    const info = await cacache.get.info(ctx.paths.sharedCacheDir, key);
    const m = /(?:^|\s)sha256-([A-Za-z0-9+/]{43}=)(?:\?\S*)?(?:\s|$)/.exec(String(info?.integrity ?? ''));
    return m ? Buffer.from(m[1]!, 'base64').toString('hex') : undefined;
  } catch (e) {
    ctx.log.debug(`download cache index not read (${(e as Error).message})`);
    return undefined;
  }
}

/** Cache dirs a write already failed on for a lasting reason in this process: not tried again. */
const unwritable = new Set<string>();
const LASTING = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOSPC', 'EDQUOT']);

/**
 * Put a verified file in the cache (streamed) under `key` (default: its digest's
 * key). Any failure is only a debug note; a lasting one (read-only mount, no
 * permission, full disk) is noted once and the cache is then only read by this
 * process: one note per run, not one per file.
 */
export async function storeInCache(ctx: Context, sha256Hex: string, file: string, key: string = cacheKey(sha256Hex)): Promise<void> {
  if (!cacheEnabled(ctx.env)) return;
  const dir = ctx.paths.sharedCacheDir;
  if (unwritable.has(dir)) return;
  try {
    const cacache = await loadCacache();
    const garbage = bufferGarbageMeter();
    await pipeline(
      createReadStream(file, { highWaterMark: 1 << 20 }),
      // Each chunk is a fresh 1 MiB buffer that cacache may hold a while: collect them as they go.
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          garbage(chunk.length);
          yield chunk;
        }
      },
      cacache.put.stream(dir, key, { integrity: integrityOf(sha256Hex), algorithms: ['sha256'] }),
    );
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (LASTING.has(code)) {
      // Downloads run in parallel: only the first of the writes that fail together says so.
      if (unwritable.has(dir)) return;
      unwritable.add(dir);
      ctx.log.debug(`download cache not written (${code}: ${dir} is read-only, not writable or full); reading it only`);
    } else ctx.log.debug(`download cache not written (${(e as Error).message})`);
  }
}

export interface CacheVerifyResult {
  dir: string;
  entries: number;
  verified: number;
  /** Corrupted or unreferenced content removed. */
  reclaimed: number;
  bad: number;
  missing: number;
  bytes: number;
}

/** `yep-ext cache verify`: cacache's verify (re-hashes every entry, drops bad ones, compacts the index). */
export async function verifyCache(ctx: Context): Promise<CacheVerifyResult> {
  const cacache = await loadCacache();
  const dir = ctx.paths.sharedCacheDir;
  const s = (await cacache.verify(dir)) as Record<string, number>;
  return {
    dir,
    entries: s.totalEntries ?? 0,
    verified: s.verifiedContent ?? 0,
    reclaimed: s.reclaimedCount ?? 0,
    bad: s.badContentCount ?? 0,
    missing: s.missingContent ?? 0,
    bytes: s.keptSize ?? 0,
  };
}

/** `yep-ext cache clean`: remove every entry. */
export async function cleanCache(ctx: Context): Promise<{ dir: string; removed: number }> {
  const cacache = await loadCacache();
  const dir = ctx.paths.sharedCacheDir;
  const removed = Object.keys(await cacache.ls(dir).catch(() => ({}))).length;
  await cacache.rm.all(dir);
  return { dir, removed };
}
