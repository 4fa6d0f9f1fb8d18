/**
 * The download cache shared by every home of a user (docs/fleet.md):
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
 * A verified file is put in with no second read of its bytes: a
 * `.crate` the caller is about to delete is hard-linked to its content path (else
 * copied by the kernel under a temp name and renamed), and its index line appended.
 * A cache read is a kernel copy from the content path. Both use cacache's on-disk
 * layout (content-v2, index-v5) directly, so an install never loads cacache (a large
 * bundle of its own) nor streams the file through it for a second SHA-256: the
 * layout is pinned against cacache itself by test/integration/download-cache-layout.test.ts.
 */
import { closeSync, lstatSync, openSync, readdirSync, rmdirSync, type Stats } from 'node:fs';
import { appendFile, chmod, link, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Context } from '../context.js';
import { YepError, errnoCode, isYepError, stateIoError } from '../errors.js';
import { describeFileKind, readRegularTextSync } from '../fs/read-regular-file.js';
import { fileDigest } from '../fs/file-digest.js';
import type { HashedWrite } from '../fs/hashed-write.js';
import { copyFileAtomic, copyRegularInto, writeFileAtomic } from '../fs/fs-atomic.js';
import { checkCustody, makeOwnedDir, removeOwned, removeWork, type Custody } from '../fs/custody.js';
import { isProcessAlive } from '../fs/temp-files.js';
import { newHash } from '../fs/hash.js';

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
  await removeWork(dest);
  // The content file itself (what cacache's rm.content removes), without loading cacache for it.
  const content = contentPath(ctx.paths.sharedCacheDir, sha256Hex);
  await removeOwned(contentCustody(ctx.paths.sharedCacheDir, content), basename(content)).catch(() => undefined);
  return undefined;
}

/**
 * Copy the cached bytes for `sha256Hex` to `dest` and hash the copy (streamed: a
 * large crate is never held in memory): its size, or undefined on a miss (absent,
 * unreadable, or corrupted: then removed when possible, and `dest` removed).
 */
export async function readCachedInto(ctx: Context, sha256Hex: string, dest: string): Promise<number | undefined> {
  if (!cacheEnabled(ctx.env)) return undefined;
  let copied: HashedWrite | undefined;
  try {
    // What cacache.get.copy.byDigest does for one sha256 integrity, through the regular-file guard:
    // the cache may be shared between users, and a FIFO planted at a content path must not hang an install.
    // Hashed as it is copied: these bytes are about to be installed, and cacache's copy does not re-verify.
    const out = openSync(dest, 'w', 0o600);
    try {
      copied = await copyRegularInto(contentPath(ctx.paths.sharedCacheDir, sha256Hex), out, 'The download cache content');
    } finally {
      closeSync(out);
    }
    if (!copied) throw Object.assign(new Error('not cached'), { code: 'ENOENT' });
  } catch (e) {
    await removeWork(dest);
    if ((e as { code?: string }).code !== 'ENOENT') ctx.log.debug(`download cache not read (${(e as Error).message})`);
    return undefined;
  }
  if (copied.sha256 !== sha256Hex) return dropCorrupted(ctx, sha256Hex, dest);
  ctx.log.debug(`download cache hit for sha256 ${sha256Hex.slice(0, 16)}…`);
  return copied.size;
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

/**
 * The runs whose cache a write already failed on for a lasting reason: not tried again in
 * that run. Keyed by the run's paths object (one per Context, shared by the contexts an
 * operation derives from it), so a later run in the same process (a library caller's,
 * in-process tests') tries again and notes it again.
 */
const unwritable = new WeakSet<Context['paths']>();
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
function indexBucketPath(dir: string, key: string): string {
  const h = newHash('sha256').update(key).digest('hex');
  return join(dir, 'index-v5', h.slice(0, 2), h.slice(2, 4), h.slice(4));
}

/**
 * Append the index entry cacache's `index.insert` appends: a line `\n<sha1 of the
 * JSON>\t<JSON>`, the entry's fields in its order (metadata left out when there is none).
 */
async function insertIndexEntry(dir: string, key: string, sha256Hex: string, size: number): Promise<void> {
  const bucket = indexBucketPath(dir, key);
  // Through the custody guard: a linked directory on the way is refused (the put is then only a debug note).
  await makeOwnedDir(bucketCustody(dir, bucket), 0o777);
  if (lstatSync(bucket, { throwIfNoEntry: false })?.isFile() === false) throw new Error(`${bucket} is not a regular file`);
  const json = JSON.stringify({ key, integrity: integrityOf(sha256Hex), time: Date.now(), size });
  await appendFile(bucket, `\n${newHash('sha1').update(json).digest('hex')}\t${json}`);
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
 * file system without them) a kernel copy through the one atomic writer (fs-atomic.ts),
 * its temp in cacache's tmp dir, so the content path never shows part of a file. Content
 * already there is kept (same digest, same bytes; a corrupted one is caught on read).
 */
async function placeContent(dir: string, sha256Hex: string, file: string, linkable: boolean): Promise<void> {
  const dest = contentPath(dir, sha256Hex);
  await makeOwnedDir(contentCustody(dir, dest), 0o777);
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
  // The one atomic writer, its temp in cacache's tmp (never a partial file under content-v2).
  await copyFileAtomic(file, dest, {
    mode: CONTENT_MODE,
    tempDir: await makeOwnedDir(tmpCustody(dir), 0o777),
    what: 'The download cache content',
    // The copy is hashed as it is written anyway: content that is not its name never lands.
    check: (copied) => {
      if (copied.sha256 !== sha256Hex) throw new Error(`the copy hashes to ${copied.sha256}, not ${sha256Hex}`);
    },
  });
}

/**
 * Put a verified file in the cache under `key` (default: its digest's key), with no
 * second read of its bytes: `sha256Hex` must be the digest of exactly these bytes (both
 * callers computed it while downloading them and compared it with the pinned one); a copy
 * is checked against it as it is written, a link needs no check. `how: 'link'` when the caller only reads and then deletes `file`
 * (a `.crate` before its unpack): a hard link then. Any failure is only a debug note;
 * a lasting one (read-only mount, no permission, full disk) is noted once and the
 * cache is then only read by this run: one note per run, not one per file.
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
  if (unwritable.has(ctx.paths)) return;
  try {
    const { size } = await stat(file);
    await placeContent(dir, sha256Hex, file, how === 'link');
    await insertIndexEntry(dir, key, sha256Hex, size);
  } catch (e) {
    const code = errnoCode(e) ?? '';
    if (LASTING.has(code)) {
      // Downloads run in parallel: only the first of the writes that fail together says so.
      if (unwritable.has(ctx.paths)) return;
      unwritable.add(ctx.paths);
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
  /**
   * What is in the cache's own directories that neither yep-ext nor cacache put there (a
   * symbolic link, a stray `Thumbs.db`, a directory of another shape): reported, never
   * touched, by `cache verify` and `cache clean` alike.
   */
  foreign: ForeignEntry[];
}

/** An entry of the cache's directories that is not one of its own, by path relative to the cache. */
export interface ForeignEntry {
  path: string;
  /** What it is: "a symbolic link", "a regular file", "a directory". */
  is: string;
}

/*
 * The cache's layout (cacache 20, content version 2, index version 5), the names in it that
 * are the cache's own, and the one delete road into it (fs/custody.ts). `cache verify` and
 * `cache clean` walk it themselves instead of calling cacache's verify and rm.all, which
 * delete every file under content-v2 and index-v5 whatever it is (and fail on a symlink).
 */
const HEX_LENGTH: Record<string, number> = { sha1: 40, sha256: 64, sha384: 96, sha512: 128 };
const HH = /^[0-9a-f]{2}$/;
/** yep-ext's temps in cacache's tmp: fs-atomic's (`.<name>.yep-<pid>-<n>.tmp`), and an older yep-ext's `yep-<pid>-<12 hex>`. */
const OUR_TMP = /^(?:\.[0-9a-f]+\.yep-(\d+)-\d+\.tmp|yep-(\d+)-[0-9a-f]{12})$/;

/** The custody of a content file (`content-v2/<algo>/<hh>/<hh>/<rest>`). */
function contentCustody(dir: string, file: string): Custody {
  const parts = file.slice(dir.length + 1).split(/[\\/]/);
  const algo = parts[1] ?? '';
  const rest = (HEX_LENGTH[algo] ?? 4) - 4;
  return { base: dir, owned: parts.slice(0, -1), names: new RegExp(`^[0-9a-f]{${rest}}$`), what: 'The download cache directory', shared: true };
}

/** The custody of an index bucket (`index-v5/<hh>/<hh>/<60 hex>`). */
function bucketCustody(dir: string, bucket: string): Custody {
  return {
    base: dir,
    owned: bucket
      .slice(dir.length + 1)
      .split(/[\\/]/)
      .slice(0, -1),
    names: /^[0-9a-f]{60}$/,
    what: 'The download cache directory',
  };
}

/** The custody of yep-ext's temp files in cacache's `tmp`. */
function tmpCustody(dir: string): Custody {
  return { base: dir, owned: ['tmp'], names: OUR_TMP, what: 'The download cache directory', shared: true };
}

interface CacheEntry {
  key: string;
  integrity: string | null;
  [k: string]: unknown;
}

interface Walked {
  /** Content files: absolute path -> its digest as `<algo>-<hex>`. */
  content: Map<string, { algo: string; hex: string; size: number }>;
  /** Bucket files (absolute paths). */
  buckets: string[];
  foreign: ForeignEntry[];
}

function kind(st: Stats): string {
  return st.isSymbolicLink() ? 'a symbolic link' : describeFileKind(st);
}

interface Entry {
  name: string;
  path: string;
  st: Stats;
}

/** The entries of `dir` with their lstat (none when it cannot be read). */
function entriesOf(dir: string): Entry[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    return st ? [{ name, path, st }] : [];
  });
}

/** Whether the cache's `tmp` passes the custody guard (a real directory, or none yet). */
function tmpIsOurs(dir: string): boolean {
  try {
    return checkCustody(tmpCustody(dir)) !== 'foreign';
  } catch (e) {
    if (isYepError(e)) return false;
    throw e;
  }
}

/** Walk content-v2 and index-v5 with lstat (never following a link): the cache's own files, and everything else as foreign; a `tmp` that is no real directory too. */
function walkCache(dir: string): Walked {
  const out: Walked = { content: new Map(), buckets: [], foreign: [] };
  const rel = (p: string): string => p.slice(dir.length + 1);
  const foreign = (e: { path: string; st: Stats }): void => {
    out.foreign.push({ path: rel(e.path), is: kind(e.st) });
  };
  const top = (name: string): { path: string; st: Stats } | undefined => {
    const path = join(dir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st) return undefined;
    if (!st.isDirectory()) {
      foreign({ path, st });
      return undefined;
    }
    return { path, st };
  };
  /** The files two `<hh>` levels below `path` (cacache's fan-out), with their `<hh><hh>` prefix; anything else on the way is foreign. */
  const shards = (path: string, leaf: (f: Entry, prefix: string) => void): void => {
    for (const h1 of entriesOf(path)) {
      if (!HH.test(h1.name) || !h1.st.isDirectory()) {
        foreign(h1);
        continue;
      }
      for (const h2 of entriesOf(h1.path)) {
        if (!HH.test(h2.name) || !h2.st.isDirectory()) {
          foreign(h2);
          continue;
        }
        for (const f of entriesOf(h2.path)) leaf(f, `${h1.name}${h2.name}`);
      }
    }
  };
  if (!tmpIsOurs(dir)) {
    const path = join(dir, 'tmp');
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st) foreign({ path, st });
  }
  const content = top('content-v2');
  if (content) {
    for (const a of entriesOf(content.path)) {
      const len = HEX_LENGTH[a.name];
      if (len === undefined || !a.st.isDirectory()) {
        foreign(a);
        continue;
      }
      const rest = new RegExp(`^[0-9a-f]{${len - 4}}$`);
      shards(a.path, (f, prefix) => {
        if (!rest.test(f.name) || !f.st.isFile()) foreign(f);
        else out.content.set(f.path, { algo: a.name, hex: `${prefix}${f.name}`, size: f.st.size });
      });
    }
  }
  const index = top('index-v5');
  if (index) {
    shards(index.path, (f) => {
      // A temp of an interrupted bucket rewrite (fs/temp-files.ts) is the cache's own, not a bucket.
      if (/^\..+\.yep-\d+-\d+\.tmp$/.test(f.name) && f.st.isFile()) return;
      if (!/^[0-9a-f]{60}$/.test(f.name) || !f.st.isFile()) foreign(f);
      else out.buckets.push(f.path);
    });
  }
  return out;
}

/** A bucket's valid entries, in order (cacache's: `\n<sha1 of the JSON>\t<JSON>` lines; a line that fails its sha1 is skipped). */
function bucketEntries(bucket: string): CacheEntry[] {
  let text: string | undefined;
  try {
    // The cache may be shared between users: a FIFO swapped in for a bucket must not hang `cache verify`.
    text = readRegularTextSync(bucket, 'The download cache index', { followSymlinks: false });
  } catch {
    return [];
  }
  if (text === undefined) return [];
  const out: CacheEntry[] = [];
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const json = line.slice(tab + 1);
    if (newHash('sha1').update(json).digest('hex') !== line.slice(0, tab)) continue;
    try {
      const e = JSON.parse(json) as CacheEntry;
      if (e && typeof e.key === 'string') out.push(e);
    } catch {
      // as cacache: a line that does not parse is skipped
    }
  }
  return out;
}

/** The live entries of a bucket: the last one of each key, unless it is a deletion (null integrity). */
function liveEntries(entries: CacheEntry[]): CacheEntry[] {
  const last = new Map<string, CacheEntry>();
  for (const e of entries) last.set(e.key, e);
  return [...last.values()].filter((e) => typeof e.integrity === 'string' && e.integrity !== '');
}

/** The content paths an integrity string names (each of its hashes that is of a known algorithm). */
function contentPathsOf(dir: string, integrity: string): string[] {
  return integrity.split(/\s+/).flatMap((h) => {
    const m = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/=]+)/.exec(h);
    if (!m) return [];
    const hex = Buffer.from(m[2]!, 'base64').toString('hex');
    if (hex.length !== HEX_LENGTH[m[1]!]) return [];
    return [join(dir, 'content-v2', m[1]!, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4))];
  });
}

function serializeBucket(entries: CacheEntry[]): string {
  return entries
    .map((e) => {
      const json = JSON.stringify(e);
      return `\n${newHash('sha1').update(json).digest('hex')}\t${json}`;
    })
    .join('');
}

/** Remove yep-ext's temp files whose writer is gone from cacache's tmp (cacache's own are its to manage). */
async function sweepOurTmp(dir: string): Promise<void> {
  // A tmp that fails the guard (a link to the user's directory, a file) is not the cache's: the walk reports it, nothing in it is read.
  if (!tmpIsOurs(dir)) return;
  for (const e of entriesOf(join(dir, 'tmp'))) {
    const m = OUR_TMP.exec(e.name);
    const pid = Number(m?.[1] ?? m?.[2]);
    if (pid && !isProcessAlive(pid)) await removeOwned(tmpCustody(dir), e.name, { keep: (st) => !st.isFile() });
  }
}

/** rmdir the cache's own directories (the layout's names) that are empty, innermost first; never one with anything in it. */
async function pruneEmptyDirs(dir: string): Promise<void> {
  const visit = async (path: string, levels: readonly RegExp[]): Promise<void> => {
    const [here, ...below] = levels;
    if (here === undefined) return;
    for (const e of entriesOf(path)) {
      if (!e.st.isDirectory() || !here.test(e.name)) continue;
      await visit(e.path, below);
      try {
        rmdirSync(e.path);
      } catch {
        // not empty, or gone: it stays as it is
      }
    }
  };
  await visit(dir, [/^content-v2$/, new RegExp(`^(?:${Object.keys(HEX_LENGTH).join('|')})$`), HH, HH]);
  await visit(dir, [/^index-v5$/, HH, HH]);
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

/**
 * `yep-ext cache verify`: re-hash every content file the index names, drop the corrupted
 * ones and those nothing names, drop index entries whose content is gone, and report (never
 * touch) what is not the cache's own. What cacache's verify does, without its deletion of
 * whatever else lies in the cache's directories.
 */
export async function verifyCache(ctx: Context): Promise<CacheVerifyResult> {
  const dir = cacheDirFor(ctx, 'verify');
  // No cache yet: nothing to verify, and a verify creates nothing.
  if (!(await cacheDirExists(dir))) return { dir, entries: 0, verified: 0, reclaimed: 0, bad: 0, missing: 0, bytes: 0, foreign: [] };
  const walked = walkCache(dir);
  const buckets = walked.buckets.map((path) => ({ path, entries: bucketEntries(path) }));
  // Content each live entry names, and the entries whose content is not there (counted now: a
  // corrupted one dropped below is one problem, not also "missing").
  const live = new Set<string>();
  let missing = 0;
  for (const b of buckets) {
    for (const e of liveEntries(b.entries)) {
      const paths = contentPathsOf(dir, e.integrity as string);
      for (const p of paths) live.add(p);
      if (!paths.some((p) => walked.content.has(p))) missing++;
    }
  }
  let verified = 0;
  let reclaimed = 0;
  let bad = 0;
  let bytes = 0;
  const valid = new Set<string>();
  for (const [path, c] of walked.content) {
    const custody = contentCustody(dir, path);
    if (!live.has(path)) {
      if (await removeOwned(custody, basename(path))) reclaimed++;
      continue;
    }
    const got = await fileDigest(path, c.algo).catch(() => undefined);
    if (got !== c.hex) {
      bad++;
      if (await removeOwned(custody, basename(path))) reclaimed++;
      continue;
    }
    verified++;
    bytes += c.size;
    valid.add(path);
  }
  // The index keeps exactly the live entries whose content is there and whole.
  let entries = 0;
  for (const b of buckets) {
    const kept = liveEntries(b.entries).filter((e) => contentPathsOf(dir, e.integrity as string).some((p) => valid.has(p)));
    entries += kept.length;
    const text = serializeBucket(kept);
    if (kept.length === 0) await removeOwned(bucketCustody(dir, b.path), basename(b.path));
    else if (text !== readRegularTextSync(b.path, 'The download cache index', { followSymlinks: false }))
      await writeFileAtomic(b.path, text, { what: 'The download cache index' });
  }
  await sweepOurTmp(dir);
  return { dir, entries, verified, reclaimed, bad, missing, bytes, foreign: walked.foreign };
}

/** `yep-ext cache clean`: remove every entry (the cache's own files only; anything else there is left and reported). */
export async function cleanCache(ctx: Context): Promise<{ dir: string; removed: number; foreign: ForeignEntry[] }> {
  const dir = cacheDirFor(ctx, 'clean');
  if (!(await cacheDirExists(dir))) return { dir, removed: 0, foreign: [] };
  const walked = walkCache(dir);
  let removed = 0;
  for (const path of walked.buckets) {
    removed += liveEntries(bucketEntries(path)).length;
    await removeOwned(bucketCustody(dir, path), basename(path));
  }
  for (const path of walked.content.keys()) await removeOwned(contentCustody(dir, path), basename(path));
  await sweepOurTmp(dir);
  await pruneEmptyDirs(dir);
  return { dir, removed, foreign: walked.foreign };
}
