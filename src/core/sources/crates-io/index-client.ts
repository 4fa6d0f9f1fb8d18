/**
 * Reading one crate's index file over HTTP, the way cargo talks to a sparse
 * index (`cargo-protocol: version=1`, `accept: text/plain`), with an ETag /
 * Last-Modified cache under the store's cache dir. The cache is only ever used
 * after the server confirmed it with a 304, so it can make things faster but
 * never staler. A 304 confirms the server's copy, not ours: each entry carries a
 * SHA-256 of its own fields, and an entry that does not match (tampered, torn,
 * an older format) is a miss, fetched again without If-None-Match.
 */
import { basename, dirname, join } from 'node:path';
import type { Context } from '../../context.js';
import { makeOwnedDir } from '../../fs/custody.js';
import { storeCustody } from '../../paths.js';
import { getUrl, isFileUrl } from '../../net/transport.js';
import { writeFileAtomic } from '../../fs/fs-atomic.js';
import { readRegularTextSync } from '../../fs/read-regular-file.js';
import { indexPath } from './index-path.js';
import { htmlPageError, parseIndexFile, type ParsedIndex } from './index-lines.js';
import { sha256Hex } from '../../fs/hash.js';

/** Index files are small (serde's, ~300 versions, is ~250 KiB); anything near this is hostile. */
const INDEX_MAX_BYTES = 20 * 1024 * 1024;

interface CacheRecord {
  url: string;
  etag?: string;
  lastModified?: string;
  body: string;
}

/** On disk: the record plus the SHA-256 of its fields (format 2; format 1 had none). */
interface StoredCacheRecord extends CacheRecord {
  v: 2;
  sha256: string;
}

function cacheFile(ctx: Context, url: string): string {
  const key = sha256Hex(url).slice(0, 32);
  return join(ctx.paths.cacheDir, 'index', key.slice(0, 2), `${key}.json`);
}

/** The digest of every field the cache relies on (JSON of a fixed-order array: unambiguous). */
function cacheRecordDigest(rec: CacheRecord): string {
  return sha256Hex(JSON.stringify([rec.url, rec.etag ?? null, rec.lastModified ?? null, rec.body]));
}

async function readCache(ctx: Context, file: string, url: string): Promise<CacheRecord | undefined> {
  // Not a regular file (a FIFO would block the read): refused, naming it, like every state file.
  const text = readRegularTextSync(file, 'The index cache entry', { followSymlinks: false, maxBytes: 2 * INDEX_MAX_BYTES });
  if (text === undefined) return undefined;
  let rec: Partial<StoredCacheRecord>;
  try {
    rec = JSON.parse(text) as Partial<StoredCacheRecord>;
  } catch {
    return undefined;
  }
  if (rec.v !== 2 || rec.url !== url || typeof rec.body !== 'string' || !(rec.etag || rec.lastModified)) return undefined;
  const fields: CacheRecord = {
    url,
    ...(typeof rec.etag === 'string' ? { etag: rec.etag } : {}),
    ...(typeof rec.lastModified === 'string' ? { lastModified: rec.lastModified } : {}),
    body: rec.body,
  };
  if (rec.sha256 !== cacheRecordDigest(fields)) {
    ctx.log.debug(`index cache entry ${file} does not match its digest; fetching it again`);
    return undefined;
  }
  return fields;
}

async function writeCache(ctx: Context, file: string, rec: CacheRecord): Promise<void> {
  // A lost or refused write just means one more full download next time.
  try {
    // The index shard, each level a real directory of yep-ext's (fs/custody.ts): a linked .yep-cache is not written through.
    await makeOwnedDir(storeCustody(ctx.paths, 'cache', { owned: ['index', basename(dirname(file))], names: /^[0-9a-f]{32}\.json$/ }), 0o755);
    const stored: StoredCacheRecord = { v: 2, ...rec, sha256: cacheRecordDigest(rec) };
    await writeFileAtomic(file, JSON.stringify(stored), { mode: 0o600, what: 'The index cache entry' });
  } catch (e) {
    ctx.log.debug(`index cache not written (${(e as Error).message})`);
  }
}

/**
 * The validated-response cache for another small file of the index (config.json:
 * a warm install revalidates it with a 304 instead of a full GET). Same
 * entries, same rules: used only after a 304, keyed by URL, digest-checked.
 */
export async function readCachedResponse(ctx: Context, url: string): Promise<CacheRecord | undefined> {
  return isFileUrl(url) ? undefined : readCache(ctx, cacheFile(ctx, url), url);
}

/** The conditional request headers for a cached entry. */
export function conditionalHeaders(cached: CacheRecord | undefined): Record<string, string> {
  return cached?.etag ? { 'if-none-match': cached.etag } : cached?.lastModified ? { 'if-modified-since': cached.lastModified } : {};
}

/** Keep `body` (already validated by the caller) when the server gave a validator for it. */
export async function writeCachedResponse(ctx: Context, url: string, headers: Record<string, string | undefined>, body: string): Promise<void> {
  if (isFileUrl(url) || !(headers.etag || headers['last-modified'])) return;
  await writeCache(ctx, cacheFile(ctx, url), {
    url,
    ...(headers.etag ? { etag: headers.etag } : {}),
    ...(headers['last-modified'] ? { lastModified: headers['last-modified'] } : {}),
    body,
  });
}

/**
 * The parsed index file for `crate` (each entry keeps its line, for a mirror to copy
 * byte for byte), or undefined when the registry says there is no such crate (404, 410
 * and 451 all mean that, as in cargo).
 */
export async function fetchIndexFile(ctx: Context, indexUrl: string, crate: string): Promise<ParsedIndex | undefined> {
  const url = new URL(indexPath(crate), indexUrl).href;
  // A mirror on disk (file://) is read in place: no conditional request, nothing to cache.
  const cached = await readCachedResponse(ctx, url);
  const res = await getUrl(ctx, url, {
    what: `The index file for ${crate}`,
    maxBytes: INDEX_MAX_BYTES,
    headers: { accept: 'text/plain', 'cargo-protocol': 'version=1', ...conditionalHeaders(cached) },
    passStatuses: cached ? [304, 404, 410, 451] : [404, 410, 451],
  });
  if (res.status === 404 || res.status === 410 || res.status === 451) return undefined;
  if (res.status === 304 && cached) {
    ctx.log.debug(`index cache hit for ${crate}`);
    return parseIndexFile(cached.body, crate, url);
  }
  if (/\bhtml\b/i.test(res.headers['content-type'] ?? '')) throw htmlPageError(url);
  const body = res.body.toString('utf8');
  // Parsed before it is kept: a body that is refused is not cached.
  const parsed = parseIndexFile(body, crate, url);
  await writeCachedResponse(ctx, url, res.headers, body);
  return parsed;
}
