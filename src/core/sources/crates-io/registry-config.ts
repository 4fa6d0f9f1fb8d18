/**
 * A sparse index's config.json: where `.crate` files (`dl`) and the web API
 * (`api`) live. Never hard-coded: a mirror or a test registry says where its
 * files are. `dl` must be https (http only for loopback), checked here so a
 * hostile config.json is refused before any download (hardening B19). A
 * `file://` root (a mirror on disk) may name a `file://` `dl`; a remote one may not.
 */
import type { Context } from '../../context.js';
import { YepError, isYepError } from '../../errors.js';
import { checkSourceUrl, getUrl, isFileUrl } from '../../net/transport.js';
import { looksLikeHtml } from './index-lines.js';
import { conditionalHeaders, readCachedResponse, writeCachedResponse } from './index-client.js';
import { buildDownloadUrl } from './dl-url.js';

export interface RegistryConfig {
  /** Sparse index root (ends with `/`). */
  indexUrl: string;
  dl: string;
  api?: string;
}

const CONFIG_MAX_BYTES = 64 * 1024;
const memo = new WeakMap<Context, Map<string, Promise<RegistryConfig>>>();

const INDEX_URL_HINT =
  'Give --index (or YEP_EXT_INDEX) the root of a sparse index: https://index.crates.io/, https://mirror.example/index/, or a `yep-ext mirror` on disk as file:///mnt/share/yep-mirror/index/.';

/** Police the index root the user configured (E_USAGE: it came from a flag or env var). */
export function checkIndexUrl(indexUrl: string): URL {
  // A file:// root is a mirror on disk (docs/fleet.md): the user chose it, so it may be local.
  let url: URL;
  try {
    url = checkSourceUrl(indexUrl, `The registry index ${indexUrl}`, { allowFile: true, code: 'E_USAGE' });
  } catch (e) {
    // A refusal that says nothing of what to type (a word that is no URL, a file URL on another host): the forms that work.
    if (isYepError(e) && !e.hint) throw new YepError(e.code, e.message, { hint: INDEX_URL_HINT, cause: e });
    throw e;
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** Fetch and validate `<index>/config.json` (memoised per context). */
export function loadRegistryConfig(ctx: Context, indexUrl: string): Promise<RegistryConfig> {
  let perCtx = memo.get(ctx);
  if (!perCtx) {
    perCtx = new Map();
    memo.set(ctx, perCtx);
  }
  let p = perCtx.get(indexUrl);
  if (!p) {
    p = fetchRegistryConfig(ctx, indexUrl);
    perCtx.set(indexUrl, p);
    p.catch(() => perCtx!.delete(indexUrl));
  }
  return p;
}

async function fetchRegistryConfig(ctx: Context, indexUrl: string): Promise<RegistryConfig> {
  const root = checkIndexUrl(indexUrl);
  const url = new URL('config.json', root).href;
  // Revalidated with its ETag / Last-Modified, as index files are: a 304 instead of a full GET.
  const cached = await readCachedResponse(ctx, url);
  const res = await getUrl(ctx, url, {
    what: `The registry configuration ${url}`,
    maxBytes: CONFIG_MAX_BYTES,
    headers: { accept: 'application/json', ...conditionalHeaders(cached) },
    passStatuses: cached ? [304, 404, 410, 451] : [404, 410, 451],
  });
  if (res.status === 304 && cached) return parseRegistryConfig(cached.body, root.href);
  if (res.status !== 200) {
    throw new YepError('E_NOT_FOUND', `${root.href} has no config.json (status ${res.status}): it is not a sparse index root.`, {
      hint: 'Check --index / YEP_EXT_INDEX: it must be the root of a sparse index such as https://index.crates.io/.',
    });
  }
  const body = res.body.toString('utf8');
  const config = parseRegistryConfig(body, root.href);
  await writeCachedResponse(ctx, url, res.headers, body);
  return config;
}

/** Validate config.json text for the index at `indexUrl`. */
export function parseRegistryConfig(text: string, indexUrl: string): RegistryConfig {
  const where = `${indexUrl}config.json`;
  if (looksLikeHtml(text)) {
    throw new YepError('E_NETWORK', `${where} is an HTML page, not a registry configuration.`, {
      hint: 'The index URL may be wrong, or a proxy or captive portal answered. Check --index / YEP_EXT_INDEX.',
    });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new YepError('E_NETWORK', `${where} is not valid JSON.`, { hint: 'The index URL may be wrong. Check --index / YEP_EXT_INDEX.' });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new YepError('E_NETWORK', `${where} is not a JSON object.`);
  const o = doc as Record<string, unknown>;
  if (typeof o.dl !== 'string' || o.dl === '') throw new YepError('E_NETWORK', `${where} has no "dl" (where crates are downloaded from).`);
  if (o['auth-required'] === true) {
    throw new YepError('E_UNSUPPORTED', `The registry at ${indexUrl} requires authentication, which yep-ext does not support.`);
  }
  // Substitute harmless values for the markers so the scheme/host policy is checked now.
  const sample = buildDownloadUrl(o.dl, { name: 'crate', vers: '0.0.0', cksum: '0'.repeat(64) });
  // A `dl` on the local disk only for an index that is itself on the local disk.
  checkSourceUrl(sample, `The download location in ${where}`, { allowFile: isFileUrl(indexUrl) });
  const api = typeof o.api === 'string' && o.api !== '' ? o.api.replace(/\/+$/, '') : undefined;
  return { indexUrl, dl: o.dl, ...(api ? { api } : {}) };
}
