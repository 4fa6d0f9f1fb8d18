/**
 * The `node:http`/`node:https` transport: a direct GET without loading undici
 * (send.ts says when, and why). What undici's direct agent did for http.ts is
 * done here the same way:
 *
 * - the address rules after DNS and on the connected peer: the connection's
 *   lookup is guarded-connect.ts's `guardedLookup` (with the `ctx.http.resolve`
 *   answers), an IP-literal host is checked before connecting, and the peer's
 *   address once the TCP connection is up, before the request's bytes (which the
 *   socket holds until then) are written;
 * - the stall rule in three phases, each `stallMs` long and each failing with
 *   the code undici uses for it, so http.ts retries and words them alike:
 *   connecting (TCP and TLS: UND_ERR_CONNECT_TIMEOUT), waiting for the headers
 *   (UND_ERR_HEADERS_TIMEOUT), and silence while the body is awaited
 *   (UND_ERR_BODY_TIMEOUT); the overall deadline and the throughput floor stay in
 *   http.ts, on the signal;
 * - keep-alive: one agent per protocol and resolve map, idle sockets closed after
 *   4 s (undici's keepAliveTimeout here) or earlier when the server's Keep-Alive
 *   hint says so, and never holding the process open;
 * - TLS: Node's own (its CA store, NODE_EXTRA_CA_CERTS included; the server name
 *   is the URL's host), so certificate errors carry the same codes;
 * - no redirect followed, no content decoding, headers as received.
 */
import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import { builtin } from '../builtin.js';
import type { Socket } from 'node:net';
import { isLinkLocalAddress } from './address.js';
import { guardedLookup, linkLocalRefusal } from './guarded-connect.js';
import type { Answer, AnswerBody, Send } from './send.js';

type HttpModule = typeof import('node:http');

/** Loaded on first use: `node:https` brings TLS, which a command that sends nothing never needs. */
function moduleFor(protocol: string): HttpModule {
  return builtin<HttpModule>(protocol === 'https:' ? 'node:https' : 'node:http');
}

/**
 * The keep-alive agents of each run, keyed by its `ctx.http` (send.ts): a run reuses its own
 * connections, never one an earlier run in this process left idle, which the server may be
 * closing just then (a library caller's or an in-process test's runs share one process).
 */
const pools = new WeakMap<object, Map<string, Agent>>();

function agentFor(mod: HttpModule, protocol: string, resolve: ReadonlyMap<string, string>, run: object): Agent {
  let agents = pools.get(run);
  if (!agents) {
    agents = new Map();
    pools.set(run, agents);
  }
  // The pool is keyed by host and port only, so sockets found through other resolve answers live in another agent.
  const key = `${protocol}\n${[...resolve].join(',')}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new mod.Agent({ keepAlive: true, timeout: 4_000 });
    agents.set(key, agent);
  }
  return agent;
}

/**
 * The stall delay as a timer takes it: undefined for no limit (0, as undici reads
 * `YEP_EXT_HTTP_STALL_MS=0`), and at most setTimeout's own maximum (a larger delay
 * would fire after 1 ms).
 */
function stallDelay(stallMs: number): number | undefined {
  return stallMs > 0 ? Math.min(stallMs, 2 ** 31 - 1) : undefined;
}

/** An error with the code http.ts (and undici) give this condition. */
function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** Sockets whose connection (and TLS handshake) completed and whose peer passed the address rule. */
const ready = new WeakSet<Socket>();

export function nodeSender(stallMs: number, resolve: ReadonlyMap<string, string>, run: object): Send {
  const lookup = guardedLookup(resolve);
  return async (url, init) => {
    const mod = moduleFor(url.protocol);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isLinkLocalAddress(host)) throw linkLocalRefusal(host, host);
    if (init.signal.aborted) throw init.signal.reason;
    const tls = url.protocol === 'https:';
    return new Promise<Answer>((resolvePromise, reject) => {
      let settled = false;
      let res: IncomingMessage | undefined;
      let timer: NodeJS.Timeout | undefined;
      const phase = (message: string | undefined, code?: string): void => {
        if (timer) clearTimeout(timer);
        const delay = stallDelay(stallMs);
        timer = message === undefined || delay === undefined ? undefined : setTimeout(() => req.destroy(coded(message, code!)), delay);
      };
      const fail = (err: Error): void => {
        phase(undefined);
        // Bytes after a complete body (a Content-Length that under-states it) are a parse
        // error on the connection, not on this answer: the body as announced stands.
        if (res?.complete) return;
        if (res) res.destroy(err);
        if (!settled) {
          settled = true;
          reject(err);
        }
      };
      const onAbort = (): void => {
        const reason = init.signal.reason instanceof Error ? init.signal.reason : coded('The request was aborted.', 'ABORT_ERR');
        req.destroy(reason);
        res?.destroy(reason);
      };
      const req: ClientRequest = mod.request(url, {
        method: 'GET',
        headers: init.headers,
        agent: agentFor(mod, url.protocol, resolve, run),
        lookup,
      });
      init.signal.addEventListener('abort', onAbort, { once: true });
      // Errors after the answer (a reset mid-body) end the body with that error.
      req.on('error', fail);
      req.on('close', () => {
        phase(undefined);
        init.signal.removeEventListener('abort', onAbort);
      });
      phase('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT');
      req.on('socket', (socket: Socket) => {
        if (ready.has(socket)) return phase('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT');
        // Registered before the request's first write waits for 'connect', so it runs first.
        socket.once('connect', () => {
          const peer = socket.remoteAddress;
          if (peer !== undefined && isLinkLocalAddress(peer)) req.destroy(linkLocalRefusal(host, peer));
        });
        socket.once(tls ? 'secureConnect' : 'connect', () => {
          if (socket.destroyed) return;
          ready.add(socket);
          phase('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT');
        });
      });
      req.on('response', (message: IncomingMessage) => {
        phase(undefined);
        res = message;
        settled = true;
        resolvePromise({ statusCode: message.statusCode ?? 0, headers: message.headers, body: new NodeBody(message, stallMs) });
      });
      req.end();
    });
  };
}

/** A response body with undici's body interface (send.ts) and its body-idle rule. */
class NodeBody implements AnswerBody {
  constructor(
    private readonly res: IncomingMessage,
    private readonly stallMs: number,
  ) {
    // The async iterator sees every error; this keeps one raised while nobody iterates from being unhandled.
    res.on('error', () => undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    const chunks = this.res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    // Armed only while a chunk is awaited: time the consumer spends on a chunk is not the server's silence.
    let waiting = false;
    const delay = stallDelay(this.stallMs);
    const timer =
      delay === undefined
        ? undefined
        : setTimeout(() => {
            if (waiting) this.res.destroy(coded('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT'));
          }, delay);
    try {
      for (;;) {
        waiting = true;
        timer?.refresh();
        const next = await chunks.next();
        waiting = false;
        if (next.done) return;
        yield next.value;
      }
    } finally {
      clearTimeout(timer);
      if (!this.res.complete) this.res.destroy();
    }
  }

  destroy(err?: Error): void {
    this.res.destroy(err);
  }

  on(event: 'error', fn: (err: Error) => void): this {
    this.res.on(event, fn);
    return this;
  }

  async dump({ limit }: { limit: number }): Promise<void> {
    let n = 0;
    try {
      for await (const chunk of this) {
        n += chunk.length;
        if (n > limit) break;
      }
    } catch {
      // A body we drop may fail as it likes.
    }
  }
}
