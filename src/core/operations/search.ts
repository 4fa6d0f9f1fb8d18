/**
 * `search`: find yolop extensions through the registry's web API (`api` from
 * config.json). Two queries, merged: crates with the `yolop-extension` keyword,
 * and crates whose name starts with `yolop-extension-` (not every author sets
 * the keyword). crates.io's policy is at most one request per second and a
 * User-Agent naming the tool; the list endpoint can report errors with status
 * 200, so every page is checked for an `errors` array.
 */
import type { Context } from '../context.js';
import { YepError, isYepError } from '../errors.js';
import { httpGet } from '../net/http.js';
import { loadStoreLock, type LockEntry } from '../store/lockfile.js';
import { CRATE_PREFIX } from '../package/names.js';
import { loadRegistryConfig } from '../sources/crates-io/registry-config.js';
import { asCrateRecord } from '../sources/crate-source.js';
import { originFacts } from '../sources/index.js';
import { truncateRedacted } from '../text/redact.js';
import { noteCreated } from '../store/created-dirs.js';

const EXTENSION_KEYWORD = 'yolop-extension';
/** crates.io's crawler policy: at most one request per second. */
const API_MIN_INTERVAL_MS = 1000;
const PAGE_MAX = 100;
const MAX_PAGES_PER_QUERY = 10;
const API_MAX_BYTES = 8 * 1024 * 1024;
const CRATE_NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

export interface SearchOptions {
  term?: string;
  /** Most hits to return (1..1000). */
  limit?: number;
}

interface SearchHit {
  crate: string;
  /** What to type after `yep-ext install` (the short name, or crates.io:<crate>). */
  install: string;
  /** Latest stable version (or the newest when there is no stable one). */
  version: string | null;
  downloads: number;
  description: string | null;
  /** The installed extension, when the lock has this crate. */
  installed: { name: string; version: string } | null;
}

export interface SearchResult {
  term: string | null;
  api: string;
  hits: SearchHit[];
  /** More extensions matched than `limit` let through (the registry had more, or a second query did). */
  truncated: boolean;
}

let lastRequestAt = 0;

async function paced<T>(ctx: Context, fn: () => Promise<T>): Promise<T> {
  const wait = lastRequestAt + API_MIN_INTERVAL_MS - ctx.clock.now();
  if (wait > 0) {
    await ctx.clock.sleep(wait, ctx.signal).catch(() => {
      throw new YepError('E_INTERRUPTED', 'Interrupted.');
    });
  }
  // Counted from the end of the previous request, not its start: the registry's clock must see
  // a second between arrivals, and a first request that took long to arrive (a new connection,
  // a busy machine) would otherwise leave less than that before the next (seen in CI).
  try {
    return await fn();
  } finally {
    lastRequestAt = ctx.clock.now();
  }
}

interface ApiCrate {
  name: string;
  description: string | null;
  version: string | null;
  downloads: number;
}

interface ApiPage {
  crates: ApiCrate[];
  hasNext: boolean;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function apiErrors(doc: unknown): string | undefined {
  if (typeof doc !== 'object' || doc === null) return undefined;
  const errors = (doc as { errors?: unknown }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  return errors
    .map((e) =>
      typeof e === 'object' && e !== null && typeof (e as { detail?: unknown }).detail === 'string' ? (e as { detail: string }).detail : JSON.stringify(e),
    )
    .join('; ');
}

async function fetchPage(ctx: Context, api: string, params: Record<string, string>): Promise<ApiPage> {
  const url = `${api}/api/v1/crates?${new URLSearchParams(params).toString()}`;
  const res = await paced(ctx, () =>
    httpGet(ctx, url, { what: `Searching ${api}`, maxBytes: API_MAX_BYTES, headers: { accept: 'application/json' }, passStatuses: [400, 403, 404, 422] }),
  );
  let doc: unknown;
  try {
    doc = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new YepError('E_NETWORK', `The search API at ${api} did not answer with JSON (status ${res.status}).`, {
      hint: 'The registry may not offer the crates.io web API, or a proxy answered instead.',
    });
  }
  // crates.io can report errors with status 200: never take that for "no results".
  const errors = apiErrors(doc);
  if (errors !== undefined || res.status !== 200) {
    throw new YepError(
      'E_NETWORK',
      `The search API at ${api} answered with an error${res.status !== 200 ? ` (status ${res.status})` : ''}: ${truncateRedacted(errors ?? 'no details', 300)}`,
      {
        ...(res.status === 403 ? { hint: 'crates.io refuses requests without a proper User-Agent or above its rate limit; try again later.' } : {}),
      },
    );
  }
  const crates = (doc as { crates?: unknown }).crates;
  if (!Array.isArray(crates)) throw new YepError('E_NETWORK', `The search API at ${api} answered without a "crates" list.`);
  const meta = (doc as { meta?: { next_page?: unknown } }).meta;
  return {
    crates: crates.flatMap((c): ApiCrate[] => {
      if (typeof c !== 'object' || c === null) return [];
      const o = c as Record<string, unknown>;
      if (typeof o.name !== 'string' || !CRATE_NAME_RE.test(o.name)) return [];
      return [
        {
          name: o.name,
          description: str(o.description),
          version: str(o.max_stable_version) ?? str(o.max_version) ?? str(o.newest_version),
          downloads: typeof o.downloads === 'number' && Number.isFinite(o.downloads) ? o.downloads : 0,
        },
      ];
    }),
    hasNext: typeof meta?.next_page === 'string' && meta.next_page !== '',
  };
}

/** Up to `limit` crates for one query, following pages. */
async function collect(
  ctx: Context,
  api: string,
  params: Record<string, string>,
  limit: number,
  keep: (c: ApiCrate) => boolean,
): Promise<{ crates: ApiCrate[]; more: boolean }> {
  const out: ApiCrate[] = [];
  const perPage = Math.min(PAGE_MAX, limit);
  let more = false;
  for (let page = 1; page <= MAX_PAGES_PER_QUERY && out.length < limit; page++) {
    const got = await fetchPage(ctx, api, { ...params, per_page: String(perPage), page: String(page) });
    out.push(...got.crates.filter(keep));
    more = got.hasNext && got.crates.length > 0;
    if (!more) break;
  }
  return { crates: out.slice(0, limit), more: more || out.length > limit };
}

const crateKey = (name: string): string => name.toLowerCase().replaceAll('_', '-');

/**
 * The lock's crate entries from the registry being searched, by crate. A crate of the same
 * name from another index (a mirror, or crates.io when searching a mirror) is another
 * package, and a git or path install is not this crate at all: neither marks a hit installed.
 */
async function installedCrates(ctx: Context): Promise<Map<string, LockEntry>> {
  const map = new Map<string, LockEntry>();
  try {
    for (const e of (await loadStoreLock(ctx.paths)).entries) {
      const crate = asCrateRecord(e.source);
      if (crate && originFacts(crate).index_url === ctx.indexUrl) map.set(crateKey(crate.crate_name), e);
    }
  } catch (e) {
    if (!isYepError(e)) throw e;
    ctx.log.warn(`cannot tell which results are installed: ${e.message}`);
  }
  return map;
}

/** Search the registry for extensions matching `term` (all extensions when absent). */
export async function searchExtensions(ctx: Context, options: SearchOptions = {}): Promise<SearchResult> {
  // Only reading: the index cache (config.json) must not leave a store (and config dir) behind in a home that had none.
  const done = noteCreated(ctx);
  try {
    return await search(ctx, options);
  } finally {
    await done(false);
  }
}

async function search(ctx: Context, options: SearchOptions): Promise<SearchResult> {
  const term = options.term?.trim() || undefined;
  const limit = Math.max(1, Math.min(1000, options.limit ?? 20));
  const config = await loadRegistryConfig(ctx, ctx.indexUrl);
  if (!config.api) {
    throw new YepError('E_UNSUPPORTED', `The registry at ${ctx.indexUrl} has no web API ("api" in its config.json), so it cannot be searched.`, {
      hint: 'Install by name instead: yep-ext install <name>.',
    });
  }
  const api = config.api;
  const keyword = await collect(ctx, api, { ...(term ? { q: term } : {}), keyword: EXTENSION_KEYWORD }, limit, () => true);
  const byKeyword = keyword.crates;
  const prefixQuery = term ? `${CRATE_PREFIX}${term.startsWith(CRATE_PREFIX) ? term.slice(CRATE_PREFIX.length) : term}` : CRATE_PREFIX.slice(0, -1);
  // Only ask again when the keyword query left room: every request costs a second.
  const named =
    byKeyword.length < limit
      ? await collect(ctx, api, { q: prefixQuery }, limit, (c) => crateKey(c.name).startsWith(CRATE_PREFIX))
      : { crates: [], more: false };
  const merged = new Map<string, ApiCrate>();
  let dropped = false;
  for (const c of [...byKeyword, ...named.crates]) {
    if (merged.has(crateKey(c.name))) continue;
    if (merged.size < limit) merged.set(crateKey(c.name), c);
    else dropped = true;
  }
  // The keyword query filled the limit with more pages left; or the name query had more; or merging cut some.
  const truncated = (keyword.more && byKeyword.length >= limit) || (named.more && merged.size >= limit) || dropped;
  const installed = await installedCrates(ctx);
  return {
    term: term ?? null,
    api,
    truncated,
    hits: [...merged.values()].map((c) => {
      const entry = installed.get(crateKey(c.name));
      return {
        crate: c.name,
        install: c.name.toLowerCase().startsWith(CRATE_PREFIX) ? c.name.slice(CRATE_PREFIX.length) : `crates.io:${c.name}`,
        version: c.version,
        downloads: c.downloads,
        description: c.description,
        installed: entry ? { name: entry.name, version: asCrateRecord(entry.source)?.version ?? entry.version ?? '' } : null,
      };
    }),
  };
}
