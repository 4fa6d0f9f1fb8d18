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
 *
 * A verified file is put in with no second read of its bytes (issue 20, round six): a
 * `.crate` the caller is about to delete is hard-linked to its content path (else
 * copied by the kernel under a temp name and renamed), and its index line appended.
 * A cache read is a kernel copy from the content path. Both use cacache's on-disk
 * layout (content-v2, index-v5) directly, so an install never loads cacache (~260 KB
 * of bundle, ~20-40 ms) nor streams the file through it for a second SHA-256: the
 * layout is pinned against cacache itself by test/integration/download-cache-layout.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { appendFile, chmod, copyFile, link, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Context } from '../context.js';
import { YepError, errnoCode, stateIoError } from '../errors.js';
import { describeFileKind } from '../fs/read-regular-file.js';
import { sha256FileWithSize } from '../fs/file-digest.js';
import { makeDirs } from '../fs/fs-atomic.js';

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
  // The content file itself (what cacache's rm.content removes), without loading cacache for it.
  await rm(contentPath(ctx.paths.sharedCacheDir, sha256Hex), { force: true }).catch(() => undefined);
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
    // What cacache.get.copy.byDigest does for one sha256 integrity: copyFile from the content path.
    await copyFile(contentPath(ctx.paths.sharedCacheDir, sha256Hex), dest);
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
 * Where cacache keeps the content of a sha256 integrity: `content-v2/sha256/ab/cd/ef…`
 * (cacache's lib/content/path.js for content version 2).
 */
export function contentPath(dir: string, sha256Hex: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256Hex)) throw new Error(`not a sha256 digest: ${sha256Hex.slice(0, 80)}`);
  return join(dir, 'content-v2', 'sha256', sha256Hex.slice(0, 2), sha256Hex.slice(2, 4), sha256Hex.slice(4));
}

/** The index bucket of `key` (cacache's entry-index.js for index version 5: the key's SHA-256 in segments). */
export function indexBucketPath(dir: string, key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return join(dir, 'index-v5', h.slice(0, 2), h.slice(2, 4), h.slice(4));
}

/**
 * Append the index entry cacache's `index.insert` appends: a line `\n<sha1 of the
 * JSON>\t<JSON>`, the entry's fields in its order (metadata left out when there is none).
 */
async function insertIndexEntry(dir: string, key: string, sha256Hex: string, size: number): Promise<void> {
  const bucket = indexBucketPath(dir, key);
  await makeDirs(dirname(bucket));
  const json = JSON.stringify({ key, integrity: integrityOf(sha256Hex), time: Date.now(), size });
  await appendFile(bucket, `\n${createHash('sha1').update(json).digest('hex')}\t${json}`);
}

/** The errors after which a hard link into a cache dir is not tried again by this process: it copies instead. */
const NO_LINK = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS', 'EACCES']);
const linkless = new Set<string>();

/** The mode of cache content: what cacache gives its files (0666 less the umask), read once. */
const CONTENT_MODE = 0o666 & ~process.umask();

/**
 * Make `file`'s bytes the content for `sha256Hex`. `linkable`: the caller never
 * changes `file` (it only reads and then deletes it), so a hard link is as good as
 * a copy and costs no byte. Otherwise (or where links fail: another file system, a
 * file system without them) a kernel copy under a temp name in cacache's tmp dir,
 * renamed into place, so the content path never shows part of a file. Content
 * already there is kept (same digest, same bytes; a corrupted one is caught on read).
 */
async function placeContent(dir: string, sha256Hex: string, file: string, linkable: boolean): Promise<void> {
  const dest = contentPath(dir, sha256Hex);
  await makeDirs(dirname(dest));
  if (linkable && !linkless.has(dir)) {
    try {
      // The download was created 0600; content is readable as cacache's is (0666 less the
      // umask), or another user of a cache baked into an image could not read it. The
      // .crate shares the inode: it is only read and then deleted, so its mode is moot.
      await chmod(file, CONTENT_MODE);
      await link(file, dest);
      return;
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'EEXIST') return;
      if (code && NO_LINK.has(code)) linkless.add(dir);
      else throw e;
    }
  }
  // Content already there is kept, as cacache keeps it (and renaming over a file another
  // process has open fails on Windows).
  if (
    await stat(dest).then(
      () => true,
      () => false,
    )
  )
    return;
  const tmp = join(dir, 'tmp', `yep-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    await makeDirs(dirname(tmp));
    await copyFile(file, tmp, constants.COPYFILE_FICLONE);
    await chmod(tmp, CONTENT_MODE);
    await rename(tmp, dest);
  } finally {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}

/**
 * Put a verified file in the cache under `key` (default: its digest's key), with no
 * second read or hash of its bytes: `sha256Hex` must be the digest of exactly these
 * bytes (both callers computed it while downloading them and compared it with the
 * pinned one). `how: 'link'` when the caller only reads and then deletes `file`
 * (a `.crate` before its unpack): a hard link then. Any failure is only a debug note;
 * a lasting one (read-only mount, no permission, full disk) is noted once and the
 * cache is then only read by this process: one note per run, not one per file.
 */
export async function storeInCache(
  ctx: Context,
  sha256Hex: string,
  file: string,
  key: string = cacheKey(sha256Hex),
  how: 'link' | 'copy' = 'copy',
): Promise<void> {
  if (!cacheEnabled(ctx.env)) return;
  const dir = ctx.paths.sharedCacheDir;
  if (unwritable.has(dir)) return;
  try {
    const { size } = await stat(file);
    await placeContent(dir, sha256Hex, file, how === 'link');
    await insertIndexEntry(dir, key, sha256Hex, size);
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

/**
 * `cache verify` and `cache clean` name the cache they act on. With the cache off
 * (YEP_EXT_CACHE_DIR=off) there is none: the value is not a directory, and resolving it
 * made both act on `<cwd>/off` (verify created it) while reporting on it as the cache.
 */
function cacheDirFor(ctx: Context, doing: string): string {
  if (!cacheEnabled(ctx.env)) {
    throw new YepError(
      'E_USAGE',
      `The download cache is off (YEP_EXT_CACHE_DIR=${ctx.env.YEP_EXT_CACHE_DIR?.trim() ?? ''}): there is no cache to ${doing}; nothing was touched.`,
      {
        hint: 'Unset YEP_EXT_CACHE_DIR (or set it to the cache directory) to act on the cache (docs/fleet.md).',
      },
    );
  }
  return ctx.paths.sharedCacheDir;
}

const CACHE_PATH_HINT = 'Point YEP_EXT_CACHE_DIR at a directory (or unset it for the default), or move that file aside.';

/**
 * Whether the cache directory exists (false: not yet); a path that is something else is refused, as
 * downloads cannot use it either. That is the disk's state, not a usage mistake: E_STATE (exit 7),
 * and so is a path that cannot be read at all (under a file, unreadable), never an internal error.
 */
async function cacheDirExists(dir: string): Promise<boolean> {
  const st = await stat(dir).catch((e: unknown) => {
    if (errnoCode(e) === 'ENOENT') return undefined;
    const failure = stateIoError('read the download cache path', dir, e);
    // A file on the way (ENOTDIR) is the cache path's own mistake: point at YEP_EXT_CACHE_DIR.
    throw new YepError('E_STATE', failure.message, { cause: e, hint: errnoCode(e) === 'ENOTDIR' ? CACHE_PATH_HINT : (failure.hint ?? CACHE_PATH_HINT) });
  });
  if (st === undefined) return false;
  if (st.isDirectory()) return true;
  throw new YepError('E_STATE', `The download cache path ${dir} is not a directory (it is ${describeFileKind(st)}).`, { hint: CACHE_PATH_HINT });
}

/** `yep-ext cache verify`: cacache's verify (re-hashes every entry, drops bad ones, compacts the index). */
export async function verifyCache(ctx: Context): Promise<CacheVerifyResult> {
  const dir = cacheDirFor(ctx, 'verify');
  // No cache yet: nothing to verify, and a verify creates nothing (cacache's would write the directory).
  if (!(await cacheDirExists(dir))) return { dir, entries: 0, verified: 0, reclaimed: 0, bad: 0, missing: 0, bytes: 0 };
  const cacache = await loadCacache();
  // Counted before verify: cacache's own missingContent also counts the entries whose content
  // it has just dropped as corrupted, so one flipped byte read "1 corrupted, 1 with its content
  // missing" (two problems for one).
  const missing = await entriesWithoutContent(cacache, dir);
  const s = (await cacache.verify(dir)) as Record<string, number>;
  return {
    dir,
    entries: s.totalEntries ?? 0,
    verified: s.verifiedContent ?? 0,
    reclaimed: s.reclaimedCount ?? 0,
    bad: s.badContentCount ?? 0,
    missing,
    bytes: s.keptSize ?? 0,
  };
}

/** Index entries whose content file is not there (each sha256 integrity's `contentPath`). */
async function entriesWithoutContent(cacache: Cacache, dir: string): Promise<number> {
  const entries = Object.values((await cacache.ls(dir).catch(() => ({}))) as Record<string, { integrity?: string }>);
  let n = 0;
  for (const e of entries) {
    const b64 = /^sha256-([A-Za-z0-9+/=]+)/.exec(e.integrity ?? '')?.[1];
    if (!b64) continue;
    if (!(await stat(contentPath(dir, Buffer.from(b64, 'base64').toString('hex'))).catch(() => undefined))) n++;
  }
  return n;
}

/** `yep-ext cache clean`: remove every entry. */
export async function cleanCache(ctx: Context): Promise<{ dir: string; removed: number }> {
  const dir = cacheDirFor(ctx, 'clean');
  await cacheDirExists(dir);
  const cacache = await loadCacache();
  const removed = Object.keys(await cacache.ls(dir).catch(() => ({}))).length;
  await cacache.rm.all(dir);
  return { dir, removed };
}
