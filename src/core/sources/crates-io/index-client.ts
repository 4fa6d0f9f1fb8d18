/**
 * Reading one crate's index file over HTTP, the way cargo talks to a sparse
 * index (`cargo-protocol: version=1`, `accept: text/plain`), with an ETag /
 * Last-Modified cache under the store's cache dir. The cache is only ever used
 * after the server confirmed it with a 304, so it can make things faster but
 * never staler.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Context } from '../../context.js';
import { httpGet } from '../../net/http.js';
import { readRegularTextSync } from '../../store/read-regular-file.js';
import { indexPath } from './index-path.js';
import { htmlPageError, parseIndexFile, type ParsedIndex } from './index-lines.js';

/** Index files are small (serde's, ~300 versions, is ~250 KiB); anything near this is hostile. */
export const INDEX_MAX_BYTES = 20 * 1024 * 1024;

interface CacheRecord {
  url: string;
  etag?: string;
  lastModified?: string;
  body: string;
}

function cacheFile(ctx: Context, url: string): string {
  const key = createHash('sha256').update(url).digest('hex').slice(0, 32);
  return join(ctx.paths.cacheDir, 'index', key.slice(0, 2), `${key}.json`);
}

async function readCache(file: string, url: string): Promise<CacheRecord | undefined> {
  // Not a regular file (a FIFO would block the read): refused, naming it, like every state file.
  const text = readRegularTextSync(file, 'The index cache entry', { followSymlinks: false, maxBytes: 2 * INDEX_MAX_BYTES });
  if (text === undefined) return undefined;
  try {
    const rec = JSON.parse(text) as CacheRecord;
    return rec.url === url && typeof rec.body === 'string' && (rec.etag || rec.lastModified) ? rec : undefined;
  } catch {
    return undefined;
  }
}

async function writeCache(ctx: Context, file: string, rec: CacheRecord): Promise<void> {
  // A cache, not state: temp + rename keeps readers from seeing half a file;
  // a lost write just means one more full download next time.
  try {
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, JSON.stringify(rec), { mode: 0o600 });
    await rename(tmp, file);
  } catch (e) {
    ctx.log.debug(`index cache not written (${(e as Error).message})`);
  }
}

/**
 * The parsed index file for `crate`, or undefined when the registry says there
 * is no such crate (404, 410 and 451 all mean that, as in cargo).
 */
export async function fetchIndexFile(ctx: Context, indexUrl: string, crate: string): Promise<ParsedIndex | undefined> {
  const url = new URL(indexPath(crate), indexUrl).href;
  const file = cacheFile(ctx, url);
  const cached = await readCache(file, url);
  const res = await httpGet(ctx, url, {
    what: `The index file for ${crate}`,
    maxBytes: INDEX_MAX_BYTES,
    headers: {
      accept: 'text/plain',
      'cargo-protocol': 'version=1',
      ...(cached?.etag ? { 'if-none-match': cached.etag } : cached?.lastModified ? { 'if-modified-since': cached.lastModified } : {}),
    },
    passStatuses: cached ? [304, 404, 410, 451] : [404, 410, 451],
  });
  if (res.status === 404 || res.status === 410 || res.status === 451) return undefined;
  let body: string;
  if (res.status === 304 && cached) {
    ctx.log.debug(`index cache hit for ${crate}`);
    body = cached.body;
  } else {
    if (/\bhtml\b/i.test(res.headers['content-type'] ?? '')) throw htmlPageError(url);
    body = res.body.toString('utf8');
    const parsed = parseIndexFile(body, crate, url);
    if (res.headers.etag || res.headers['last-modified']) {
      await writeCache(ctx, file, {
        url,
        ...(res.headers.etag ? { etag: res.headers.etag } : {}),
        ...(res.headers['last-modified'] ? { lastModified: res.headers['last-modified'] } : {}),
        body,
      });
    }
    return parsed;
  }
  return parseIndexFile(body, crate, url);
}
