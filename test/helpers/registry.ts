/**
 * A loopback stand-in for crates.io: a real node:http server on 127.0.0.1 with an
 * ephemeral port that serves a sparse index (config.json, index files with
 * ETag/304 and 404/410/451), `.crate` downloads at both CDN URL forms (with `+`
 * raw and `%2B`), and the search API, plus switches for the faults of
 * hardening.md B (wrong checksum, 5xx then 200, 429 + Retry-After, slow drip,
 * truncated or endless bodies, lying Content-Length, foreign redirects, HTML with
 * status 200, resets, hangs). Every request is logged so tests can assert that
 * nothing (or exactly what) was fetched.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { indexPath } from '../../src/core/sources/crates-io/index-path.js';

interface LoggedRequest {
  method: string;
  /** Raw request target (path and query, undecoded). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Date.now() when it arrived. */
  at: number;
  /** The status the route answered (before any fault). */
  status?: number;
}

type Fault =
  /** Answer this status (with an optional body and headers) instead. */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  /** A captive-portal style HTML page with status 200. */
  | { kind: 'html' }
  | { kind: 'redirect'; location: string; status?: number }
  /** The real body, `chunk` bytes every `intervalMs`. */
  | { kind: 'slow-drip'; intervalMs: number; chunk?: number }
  /** Announce the real length, send `afterBytes`, then cut the connection. */
  | { kind: 'truncate'; afterBytes: number }
  /** The real body under a false Content-Length. */
  | { kind: 'lying-length'; declared: number }
  /** A chunked body that never ends. */
  | { kind: 'endless'; chunkBytes?: number }
  /** The real body with one byte changed (a checksum mismatch). */
  | { kind: 'corrupt' }
  /** Destroy the socket before answering. */
  | { kind: 'reset' }
  /** Never answer. */
  | { kind: 'hang' }
  /** Any body (e.g. an API answer with `errors` and status 200). */
  | { kind: 'body'; body: string | Buffer; status?: number; contentType?: string };

interface PublishOptions {
  name: string;
  vers: string;
  data: Buffer;
  yanked?: boolean;
  /** Override the index cksum (a string), or drop the field (null). Default: the real SHA-256. */
  cksum?: string | null;
  /** Index schema version (`v`). */
  v?: number;
  description?: string;
  keywords?: string[];
  downloads?: number;
  /** Extra fields on the index line (unknown to yep-ext). */
  extra?: Record<string, unknown>;
}

interface CrateVersion {
  name: string;
  vers: string;
  data: Buffer;
  yanked: boolean;
  description?: string;
  keywords: string[];
  downloads: number;
}

interface FaultRule {
  match: (url: string) => boolean;
  fault: Fault;
  remaining: number;
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface TestRegistry {
  /** Server root, e.g. `http://127.0.0.1:40123/`. */
  url: string;
  /** Sparse index root: `<url>index/`. */
  indexUrl: string;
  requests: LoggedRequest[];
  publish(options: PublishOptions): string;
  /** Append a raw line (anything at all) to a crate's index file. */
  addIndexLine(name: string, line: string): void;
  /** Serve this config.json (object or raw text) instead of the default. */
  setConfig(config: Record<string, unknown> | string): void;
  /** Answer `status` for a missing crate's index file (default 404). */
  setMissingStatus(status: 404 | 410 | 451): void;
  /** Apply `fault` to requests whose URL matches, `times` times (default: always). */
  fault(match: string | RegExp, fault: Fault, times?: number): void;
  clearFaults(): void;
  /**
   * What it serves now (crates, index lines, config.json, the missing status, served files);
   * the function returned serves exactly that again, with no fault and no request logged.
   */
  checkpoint(): () => void;
  /**
   * The index file it serves for `name` now, byte for byte (no fault applied, no request
   * logged), or undefined where it answers the missing status: for a test that compares what
   * a command wrote with what the origin serves, without an HTTP client of its own.
   */
  indexFile(name: string): string | undefined;
  /** Requests whose raw URL starts with `prefix` (or all). */
  requestsTo(prefix?: string): LoggedRequest[];
  /** Serve `body` at `path` (e.g. prebuilt binaries and their .sha256 files). */
  serve(path: string, body: string | Buffer): void;
  /** Download URL (`{dl}/{crate}/{version}/download` form). */
  downloadUrl(name: string, vers: string): string;
  close(): Promise<void>;
}

/** An index `pubtime` `ms` before now (or before `now`), as the index writes it: seconds precision, Z. */
export function pubtimeAgo(ms: number, now = Date.now()): string {
  return new Date(now - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * HTTP timings for tests: short deadlines, few fast retries, so fault cases
 * (stalls, 5xx, Retry-After) finish in a second or two instead of minutes.
 */
export const FAST_HTTP_ENV: Record<string, string> = {
  YEP_EXT_HTTP_TIMEOUT_MS: '3000',
  YEP_EXT_HTTP_DOWNLOAD_TIMEOUT_MS: '3000',
  YEP_EXT_HTTP_STALL_MS: '1500',
  YEP_EXT_HTTP_MIN_RATE: '2048',
  YEP_EXT_TEST_HTTP_RATE_WINDOW_MS: '400',
  YEP_EXT_HTTP_RETRIES: '2',
  YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '10',
  YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '40',
  YEP_EXT_TEST_HTTP_RETRY_AFTER_MAX_MS: '2000',
};

export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function json(status: number, value: unknown): Reply {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify(value)) };
}

const HTML_PAGE = '<!DOCTYPE html>\n<html><head><title>Welcome to the hotel Wi-Fi</title></head><body><p>Please log in.</p></body></html>\n';

export interface RegistryOptions {
  /** Serve https with this key and certificate (PEM) instead of plain http. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** The host name in the registry's own URLs (config.json `dl`/`api`, `url`); default 127.0.0.1. */
  host?: string;
}

/** What a registry serves and has seen: its handler and its methods share it. */
interface RegistryState {
  /** Lower-case name -> index lines. */
  indexLines: Map<string, string[]>;
  /** Lower-case name -> versions. */
  crates: Map<string, CrateVersion[]>;
  requests: LoggedRequest[];
  statics: Map<string, Buffer>;
  faults: FaultRule[];
  config: Record<string, unknown> | string | undefined;
  missingStatus: number;
  base: string;
}

/** Start a registry on 127.0.0.1 (ephemeral port). Close it in afterEach/afterAll. */
export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const s: RegistryState = {
    indexLines: new Map(),
    crates: new Map(),
    requests: [],
    statics: new Map(),
    faults: [],
    config: undefined,
    missingStatus: 404,
    base: '',
  };
  const { server, sockets } = await listen(s, options);
  const { base, requests } = s;
  return {
    url: base,
    indexUrl: `${base}index/`,
    requests,
    publish: (o) => publish(s, o),
    addIndexLine(name, line) {
      const key = name.toLowerCase();
      s.indexLines.set(key, [...(s.indexLines.get(key) ?? []), line]);
    },
    setConfig(c) {
      s.config = c;
    },
    setMissingStatus(status) {
      s.missingStatus = status;
    },
    fault(match, fault, times = Infinity) {
      const test = typeof match === 'string' ? (u: string) => u.startsWith(match) : (u: string) => match.test(u);
      s.faults.push({ match: test, fault, remaining: times });
    },
    clearFaults() {
      s.faults = [];
    },
    checkpoint() {
      // publish, addIndexLine and serve replace a map's value, never change it in place.
      const kept = { indexLines: new Map(s.indexLines), crates: new Map(s.crates), statics: new Map(s.statics), config: s.config, missing: s.missingStatus };
      return () => {
        s.indexLines = new Map(kept.indexLines);
        s.crates = new Map(kept.crates);
        s.statics = new Map(kept.statics);
        s.config = kept.config;
        s.missingStatus = kept.missing;
        s.faults = [];
        requests.length = 0;
      };
    },
    indexFile(name) {
      return indexBody(s, name)?.toString('utf8');
    },
    requestsTo(prefix = '/') {
      return requests.filter((r) => r.url.startsWith(prefix));
    },
    serve(path, body) {
      s.statics.set(path, Buffer.from(body));
    },
    downloadUrl(name, vers) {
      return `${base}crates/${name}/${vers}/download`;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}

/** The server, listening, with every socket it accepted (to destroy at close); sets `s.base` to its URL. */
async function listen(
  s: RegistryState,
  options: RegistryOptions,
): Promise<{ server: Server | import('node:https').Server; sockets: Set<import('node:net').Socket> }> {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const logged: LoggedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, at: Date.now() };
    s.requests.push(logged);
    const rule = s.faults.find((f) => f.remaining > 0 && f.match(req.url ?? '/'));
    if (rule) rule.remaining--;
    const reply = route(s, req);
    logged.status = reply.status;
    sendReply(req, res, reply, rule?.fault);
  };
  const server: Server | import('node:https').Server = options.tls
    ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handler)
    : createServer(handler);
  // Every TCP socket accepted, to destroy at close: closeAllConnections sees only the
  // connections the HTTP layer took over, not a TLS socket whose handshake never finished
  // (a client that refused the certificate, through a proxy's tunnel), and server.close
  // would wait for that one past the test's hook timeout (seen in CI, proxy-ca).
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket: import('node:net').Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  s.base = `${options.tls ? 'https' : 'http'}://${options.host ?? '127.0.0.1'}:${port}/`;
  return { server, sockets };
}

/** Publish a version: its index line and its .crate; returns the .crate's SHA-256. */
function publish(s: RegistryState, o: PublishOptions): string {
  const key = o.name.toLowerCase();
  const cksum = sha256Hex(o.data);
  const line: Record<string, unknown> = {
    name: o.name,
    vers: o.vers,
    deps: [],
    ...(o.cksum === null ? {} : { cksum: o.cksum ?? cksum }),
    features: {},
    yanked: o.yanked ?? false,
    ...(o.v !== undefined ? { v: o.v } : {}),
    ...o.extra,
  };
  const text = JSON.stringify(line);
  s.indexLines.set(key, [...(s.indexLines.get(key) ?? []), text]);
  s.crates.set(key, [
    ...(s.crates.get(key) ?? []),
    {
      name: o.name,
      vers: o.vers,
      data: o.data,
      yanked: o.yanked ?? false,
      ...(o.description !== undefined ? { description: o.description } : {}),
      keywords: o.keywords ?? [],
      downloads: o.downloads ?? 0,
    },
  ]);
  return cksum;
}

/** The index file of `name` (its lines, each ended by a newline), or undefined for a crate with none. */
function indexBody(s: RegistryState, name: string): Buffer | undefined {
  const lines = s.indexLines.get(name.toLowerCase());
  return lines ? Buffer.from(lines.map((l) => `${l}\n`).join('')) : undefined;
}

/** The answer to a request, before any fault. */
function route(s: RegistryState, req: IncomingMessage): Reply {
  const url = new URL(req.url ?? '/', s.base);
  const path = url.pathname;
  const fixed = s.statics.get(decodeURIComponent(path));
  if (fixed) return { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: fixed };
  if (path === '/index/config.json') {
    const body =
      s.config === undefined
        ? JSON.stringify({ dl: `${s.base}crates`, api: s.base.replace(/\/$/, '') })
        : typeof s.config === 'string'
          ? s.config
          : JSON.stringify(s.config);
    // Revalidated like an index file (crates.io's CDN gives config.json an ETag too).
    const etag = `"${sha256Hex(Buffer.from(body)).slice(0, 20)}"`;
    if (req.headers['if-none-match'] === etag) return { status: 304, headers: { etag }, body: Buffer.alloc(0) };
    return { status: 200, headers: { 'content-type': 'application/json', etag }, body: Buffer.from(body) };
  }
  if (path.startsWith('/index/')) {
    const rel = path.slice('/index/'.length);
    const name = rel.split('/').pop() ?? '';
    let expected: string | undefined;
    try {
      expected = indexPath(name);
    } catch {
      expected = undefined;
    }
    const body = expected === rel ? indexBody(s, name) : undefined;
    if (!body) return { status: s.missingStatus, headers: { 'content-type': 'text/plain' }, body: Buffer.from('not found\n') };
    const etag = `"${sha256Hex(body).slice(0, 20)}"`;
    if (req.headers['if-none-match'] === etag) return { status: 304, headers: { etag }, body: Buffer.alloc(0) };
    return { status: 200, headers: { 'content-type': 'text/plain', etag, 'cache-control': 'public,max-age=600' }, body };
  }
  const dl = /^\/crates\/([^/]+)\/(?:([^/]+)\/download|([^/]+)\.crate)$/.exec(path);
  if (dl) {
    const name = decodeURIComponent(dl[1]!);
    let vers: string | undefined;
    if (dl[2] !== undefined) vers = decodeURIComponent(dl[2]);
    else {
      const file = decodeURIComponent(dl[3]!);
      if (file.startsWith(`${name}-`)) vers = file.slice(name.length + 1);
    }
    const found = s.crates.get(name.toLowerCase())?.find((c) => c.vers === vers);
    if (!found) return { status: 404, headers: { 'content-type': 'text/plain' }, body: Buffer.from('no such crate version\n') };
    return { status: 200, headers: { 'content-type': 'application/gzip' }, body: found.data };
  }
  if (path === '/api/v1/crates') return search(s.crates, url);
  const one = /^\/api\/v1\/crates\/([^/]+)$/.exec(path);
  if (one) {
    const key = decodeURIComponent(one[1]!).toLowerCase().replaceAll('_', '-');
    const hit = [...s.crates.entries()].find(([k]) => k.replaceAll('_', '-') === key);
    if (!hit) return json(404, { errors: [{ detail: 'Not Found' }] });
    return json(200, { crate: crateSummary(hit[1]), versions: hit[1].map((c) => ({ num: c.vers, yanked: c.yanked })), keywords: [] });
  }
  return { status: 404, headers: { 'content-type': 'text/plain' }, body: Buffer.from('not found\n') };
}

/** The API's summary of a crate (its newest version's name and description, max versions, downloads). */
function crateSummary(versions: CrateVersion[]): Record<string, unknown> {
  const live = versions.filter((v) => !v.yanked);
  const newest = versions[versions.length - 1]!;
  const stable = live.filter((v) => !v.vers.includes('-'));
  const max =
    (stable.length ? stable : live)
      .map((v) => v.vers)
      .sort(compareLoose)
      .pop() ?? null;
  return {
    name: newest.name,
    description: newest.description ?? null,
    max_version: max,
    max_stable_version:
      stable
        .map((v) => v.vers)
        .sort(compareLoose)
        .pop() ?? null,
    newest_version: newest.vers,
    downloads: versions.reduce((n, v) => n + v.downloads, 0),
    recent_downloads: 0,
    updated_at: '2026-11-01T00:00:00.000000+00:00',
    keywords: null,
    versions: null,
    categories: null,
    repository: null,
    homepage: null,
  };
}

/** crates.io's search API (`q`, `keyword`, `per_page`, `page`), most downloads first. */
function search(crates: Map<string, CrateVersion[]>, url: URL): Reply {
  const perPage = Number(url.searchParams.get('per_page') ?? '10');
  const page = Number(url.searchParams.get('page') ?? '1');
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) return json(400, { errors: [{ detail: 'invalid per_page' }] });
  if (!Number.isInteger(page) || page < 1) return json(400, { errors: [{ detail: 'invalid page' }] });
  const keyword = url.searchParams.get('keyword');
  const words = (url.searchParams.get('q') ?? '').toLowerCase().split(/[\s]+/).filter(Boolean);
  const all = [...crates.values()].filter((versions) => {
    const newest = versions[versions.length - 1]!;
    if (keyword && !newest.keywords.includes(keyword)) return false;
    const hay = `${newest.name.replaceAll(/[-_]/g, ' ')} ${newest.name} ${newest.description ?? ''}`.toLowerCase();
    return words.every((w) => hay.includes(w.replaceAll(/[-_]/g, ' ')) || hay.includes(w));
  });
  all.sort((a, b) => b.reduce((n, v) => n + v.downloads, 0) - a.reduce((n, v) => n + v.downloads, 0));
  const slice = all.slice((page - 1) * perPage, page * perPage);
  const params = new URLSearchParams(url.searchParams);
  params.set('page', String(page + 1));
  const next = page * perPage < all.length ? `?${params.toString()}` : null;
  params.set('page', String(page - 1));
  return json(200, { crates: slice.map(crateSummary), meta: { total: all.length, next_page: next, prev_page: page > 1 ? `?${params.toString()}` : null } });
}

/** Send `reply`, or what `fault` does instead. */
function sendReply(req: IncomingMessage, res: ServerResponse, reply: Reply, fault: Fault | undefined): void {
  if (!fault) {
    res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.body.length) });
    res.end(reply.body);
    return;
  }
  switch (fault.kind) {
    case 'status':
      res.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers });
      res.end(fault.body ?? `status ${fault.status}\n`);
      return;
    case 'html':
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(HTML_PAGE)) });
      res.end(HTML_PAGE);
      return;
    case 'redirect':
      res.writeHead(fault.status ?? 302, { location: fault.location, 'content-length': '0' });
      res.end();
      return;
    case 'body': {
      const body = Buffer.from(fault.body);
      res.writeHead(fault.status ?? 200, { 'content-type': fault.contentType ?? 'application/json', 'content-length': String(body.length) });
      res.end(body);
      return;
    }
    case 'corrupt': {
      const body = Buffer.from(reply.body);
      if (body.length > 0) body[body.length >> 1] = (body[body.length >> 1] ?? 0) ^ 0xff;
      res.writeHead(reply.status, { ...reply.headers, 'content-length': String(body.length) });
      res.end(body);
      return;
    }
    case 'lying-length':
      sendLyingLength(res, reply, fault.declared);
      return;
    case 'truncate':
      res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.body.length) });
      res.write(reply.body.subarray(0, fault.afterBytes), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    case 'reset':
      req.socket.destroy();
      return;
    case 'hang':
      return;
    case 'endless':
      sendEndless(res, reply, fault.chunkBytes);
      return;
    case 'slow-drip':
      sendSlowDrip(res, reply, fault);
      return;
  }
}

/** A chunked body that never ends. */
function sendEndless(res: ServerResponse, reply: Reply, chunkBytes: number | undefined): void {
  res.writeHead(200, { 'content-type': reply.headers['content-type'] ?? 'application/octet-stream' });
  const chunk = Buffer.alloc(chunkBytes ?? 64 * 1024, 0x61);
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

/** The real body, `chunk` bytes every `intervalMs`. */
function sendSlowDrip(res: ServerResponse, reply: Reply, fault: { intervalMs: number; chunk?: number }): void {
  res.writeHead(reply.status, { ...reply.headers, 'content-length': String(reply.body.length) });
  const step = fault.chunk ?? 1;
  let off = 0;
  const timer = setInterval(() => {
    if (res.destroyed || off >= reply.body.length) {
      clearInterval(timer);
      if (!res.destroyed) res.end();
      return;
    }
    res.write(reply.body.subarray(off, off + step));
    off += step;
  }, fault.intervalMs);
  res.on('close', () => clearInterval(timer));
}

/** The real body under a false Content-Length. */
function sendLyingLength(res: ServerResponse, reply: Reply, declared: number): void {
  // Write through the socket: node:http would refuse a body longer than the header.
  res.socket?.end(
    Buffer.concat([
      Buffer.from(
        `HTTP/1.1 ${reply.status} OK\r\ncontent-type: ${reply.headers['content-type'] ?? 'application/octet-stream'}\r\ncontent-length: ${declared}\r\nconnection: close\r\n\r\n`,
      ),
      reply.body,
    ]),
  );
}

/** Plain numeric-ish ordering for the fake API's max_version (fixtures use simple versions). */
function compareLoose(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  const pb = b.split(/[.+-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? -1;
    const y = pb[i] ?? -1;
    if (x === y) continue;
    return typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : 1;
  }
  return 0;
}
