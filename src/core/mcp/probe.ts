/**
 * Connect to one contributed MCP server the way the host's MCP client does
 * (mcp-launch.ts) with the official TypeScript MCP SDK, list its tools, and
 * disconnect, every step under a deadline. A stdio server runs under yep-ext's
 * server supervisor (stdio-transport.ts): stopped by closing stdin, then SIGTERM,
 * then SIGKILL of its process group, and whatever it started is found, killed and
 * reported. The SDK is loaded only here, when a manifest declares an MCP server.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RunPermit } from '../binary/cargo-build.js';
import type { Clock } from '../clock.js';
import type { Spawn } from '../context.js';
import { useProxy } from '../net/proxy.js';
import { redactText, truncateRedacted } from '../text/redact.js';
import type { StopReport } from '../yep/server-process.js';
import type { McpLaunch } from './mcp-launch.js';

/** One tool as the model gets it: what the record keeps and compares. */
export interface McpToolDef {
  name: string;
  description: string;
  input_schema: unknown;
}

export interface McpProbeOptions {
  /** The stdio server's cwd (the workspace root, as the host's). */
  workspaceRoot: string;
  /**
   * A stdio server's program, as the one resolver found it (package/inspect-command.ts),
   * and the permit of the one guard in front of package code (policy/package-code.ts):
   * a stdio server is never spawned without both.
   */
  stdio?: { program: string; permit: RunPermit };
  /** The environment the host would run with (the user's). */
  env: Record<string, string | undefined>;
  /** Connecting and the `initialize` answer. */
  timeoutMs: number;
  /** Each `tools/list` page. */
  probeMs: number;
  /** Each stop step. */
  graceMs: number;
  /** Values never to show (the run's secrets and the launch's). */
  secrets: readonly string[];
  signal?: AbortSignal;
  spawn?: Spawn;
  clock?: Clock;
}

export interface McpProbe {
  /** undefined when it answered; else why not, in a sentence after "the server". */
  failure?: string;
  /** How far it got. */
  reached: 'start' | 'connect' | 'list' | 'done';
  /** Set when doctor did not start it (`failure` says why): the guard refused it, or the resolver found nothing that could start. */
  notStarted?: 'refused' | 'cannot-start';
  tools: McpToolDef[];
  /** True when tools/list had more pages than doctor reads (MAX_PAGES). */
  truncated: boolean;
  pid?: number;
  stop?: StopReport;
  /** Lines on stdout that were not MCP messages (count, and the first few, redacted and cut). */
  badLines: { count: number; first: string[] };
  stderrTail?: string;
  durationMs: number;
}

/** Pages of tools/list read at most (a server paging without end is cut off, and said so). */
const MAX_PAGES = 50;

/** Probe one server. Never throws for what the server does; rejects only when `signal` aborts. */
export async function probeMcpServer(launch: McpLaunch, o: McpProbeOptions): Promise<McpProbe> {
  const t0 = Date.now();
  const [{ Client }, { ProcessTransport }] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('./stdio-transport.js')]);
  const out: McpProbe = { reached: 'start', tools: [], truncated: false, badLines: { count: 0, first: [] }, durationMs: 0 };
  const client = new Client(
    { name: 'yep-ext-doctor', version: '1' },
    // Tool calls are never made, so no output schema is ever checked: accept any rather than compile a server's schemas.
    { capabilities: {}, jsonSchemaValidator: { getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }) } },
  );
  let stdio: InstanceType<typeof ProcessTransport> | undefined;
  let http: { close(): Promise<void>; terminateSession(): Promise<void> } | undefined;
  const abort = new AbortController();
  const onAbort = (): void => {
    stdio?.kill();
    abort.abort();
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let transport: Transport;
    if (launch.transport === 'stdio') {
      if (o.stdio?.permit.kind !== 'server') {
        out.failure = 'was not started: no permit from the guard in front of package code';
        return out;
      }
      stdio = new ProcessTransport(
        { command: o.stdio.program, args: launch.args, workspaceRoot: o.workspaceRoot, env: o.env, injectedEnv: launch.env },
        { secrets: o.secrets, ...(o.spawn ? { spawn: o.spawn } : {}), ...(o.clock ? { clock: o.clock } : {}) },
      );
      transport = stdio;
    } else {
      const url = httpUrl(launch.url ?? '');
      if (typeof url === 'string') {
        out.failure = url;
        return out;
      }
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const t = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: launch.headers },
        fetch: capped(await fetchFor(url, o.env)),
        // One try: a doctor run reports what it found instead of waiting on retries.
        reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 },
      });
      http = t;
      transport = t;
    }
    out.reached = 'connect';
    try {
      // The request timeout covers initialize only; the `initialized` notification after it
      // (an HTTP POST) has none of its own, so the whole connect gets the deadline too.
      const connected = client.connect(transport, { timeout: o.timeoutMs, signal: abort.signal });
      if ((await beforeDeadline(connected, o.timeoutMs)) === TIMED_OUT) {
        out.failure = `did not finish connecting within ${fmtMs(o.timeoutMs)} (it answered initialize, then left the next message unanswered)`;
        return out;
      }
    } catch (e) {
      if (o.signal?.aborted) throw e;
      out.failure = stdio && !stdio.running && stdio.pid === undefined ? `${stdio.describeExit()}` : connectFailure(e, stdio, o.timeoutMs);
      return out;
    }
    out.pid = stdio?.pid;
    out.reached = 'list';
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page === MAX_PAGES) {
        out.truncated = true;
        break;
      }
      let r: Awaited<ReturnType<typeof client.listTools>>;
      try {
        r = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: o.probeMs, signal: abort.signal });
      } catch (e) {
        if (o.signal?.aborted) throw e;
        out.failure = `${page === 0 ? '' : `after ${page} page(s), `}tools/list: ${requestFailure(e, stdio, o.probeMs)}`;
        return out;
      }
      for (const tool of r.tools) out.tools.push({ name: tool.name, description: tool.description ?? '', input_schema: tool.inputSchema });
      cursor = r.nextCursor;
      if (cursor === undefined) break;
    }
    out.reached = 'done';
    return out;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    if (http) {
      // End the session as a client should (DELETE), bounded; then drop every open request and stream.
      await withDeadline(http.terminateSession(), o.graceMs);
      abort.abort();
      await http.close().catch(() => undefined);
    }
    if (stdio) {
      out.pid ??= stdio.pid;
      out.stop = await stdio.stop(o.graceMs);
      out.badLines = { count: stdio.badLineCount, first: stdio.badLines };
      out.stderrTail = stdio.stderrTail();
    }
    // The client's own state (pending requests, timers) goes with its transport.
    await withDeadline(client.close(), o.graceMs);
    if (out.failure) out.failure = redactText(out.failure, o.secrets);
    out.durationMs = Date.now() - t0;
  }
}

/** The endpoint as a URL, or why it is not one doctor (or the host) can connect to. */
function httpUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `plugin.json's url is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `plugin.json's url must start with https:// or http://`;
  return url;
}

type Fetch = (u: string | URL, init?: RequestInit) => Promise<Response>;

/** The cap on one HTTP answer's body: a tool list is kilobytes; a server streaming without end is stopped. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

class AnswerTooLarge extends Error {}

/** `base`, with every response body cut off (an error) past MAX_ANSWER_BYTES. */
function capped(base: Fetch): Fetch {
  return async (u, init) => {
    const res = await base(u, init);
    if (!res.body) return res;
    let seen = 0;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          seen += chunk.byteLength;
          if (seen > MAX_ANSWER_BYTES) ctl.error(new AnswerTooLarge(`sent an answer larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`));
          else ctl.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * The fetch for `url`: through the proxy the environment names for it (undici), else Node's own.
 * The proxy is chosen and checked by the one proxy guard: an unusable value is a configuration
 * error naming its variable, before anything is sent.
 */
async function fetchFor(url: URL, env: Record<string, string | undefined>): Promise<Fetch> {
  const proxy = useProxy(url, env);
  if (proxy === undefined) return (u, init) => fetch(u, init);
  const undici = await import('undici');
  const dispatcher = new undici.ProxyAgent(proxy);
  return (u, init) => undici.fetch(u, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
}

const TIMED_OUT = Symbol('timed out');

/** `p`'s value, or TIMED_OUT after `ms` (a little over it: `p`'s own timeout, when it has one, goes first); `p`'s rejection passes through. */
async function beforeDeadline<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<typeof TIMED_OUT>((r) => (timer = setTimeout(() => r(TIMED_OUT), ms + 250)))]);
  } finally {
    clearTimeout(timer);
    p.catch(() => undefined);
  }
}

function withDeadline(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]).finally(() => clearTimeout(timer));
}

interface StdioState {
  running: boolean;
  describeExit(): string;
}

/** An SDK error as a phrase after "the server". */
function requestFailure(e: unknown, stdio: StdioState | undefined, timeoutMs: number): string {
  const message = String((e as Error)?.message ?? e);
  const tooLarge = [e, (e as { cause?: unknown })?.cause].find((x) => x instanceof AnswerTooLarge) as AnswerTooLarge | undefined;
  if (tooLarge || /answer larger than/.test(message)) return tooLarge?.message ?? `sent an answer larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`;
  const code = (e as { code?: unknown })?.code;
  if (stdio && !stdio.running) return stdio.describeExit();
  if (code === -32001 || /timed out/i.test(message)) return `did not answer within ${fmtMs(timeoutMs)}`;
  if (code === -32000 || /connection closed/i.test(message)) return 'closed the connection';
  return `answered with an error: ${truncateRedacted(message, 300, [], { marker: () => '…' })}`;
}

function connectFailure(e: unknown, stdio: StdioState | undefined, timeoutMs: number): string {
  const message = String((e as Error)?.message ?? e);
  if (/Server's protocol version is not supported/i.test(message))
    return `speaks an MCP protocol version this client does not (${truncateRedacted(message, 200, [], { marker: () => '…' })})`;
  // The SDK's StreamableHTTPError carries the HTTP status as its code (MCP's own codes are negative).
  const code = (e as { code?: unknown })?.code;
  const status = typeof code === 'number' && code >= 400 && code < 600 ? String(code) : /\(HTTP (\d{3})\)/.exec(message)?.[1];
  if (status === '401' || status === '403') return `refused the connection (HTTP ${status}): check the headers plugin.json sends and the variables they use`;
  if (status === '404' || status === '405')
    return `does not speak MCP's streamable HTTP at this url (HTTP ${status}): yolop connects with streamable HTTP only`;
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/i.test(message) || /fetch failed/i.test(String((e as { cause?: Error })?.cause?.message ?? '')))
    return `could not be reached (${truncateRedacted(String((e as { cause?: Error })?.cause?.message ?? message), 200, [], { marker: () => '…' })})`;
  const failure = requestFailure(e, stdio, timeoutMs);
  // A timeout or a closed connection reads as it is; anything else is the handshake's error.
  if (failure.startsWith('did not answer')) return `${failure.replace('did not answer', "did not answer MCP's first request (initialize)")}`;
  if (failure === 'closed the connection' || (stdio && !stdio.running)) return `${failure} during MCP's first request (initialize)`;
  return `did not complete MCP's first request (initialize): ${failure}`;
}

const fmtMs = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`);
