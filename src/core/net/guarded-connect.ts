/**
 * The address rule after name resolution. A URL can name a host whose DNS answer
 * is link-local (a name pointed at 169.254.169.254), which no check of the URL
 * text can see. So the HTTP client connects through this connector: its DNS lookup
 * refuses a name if any of its addresses is link-local (before any packet is
 * sent to it), an IP-literal host is checked before connecting, and the connected
 * peer's address is checked again before a byte of the request is written.
 *
 * Seam: ctx.http.resolve (name -> address) answers those names without DNS (like
 * curl --resolve), so a test can point a name at any address without touching
 * /etc/hosts or the network. The CLI sets it only from a test preload
 * (src/cli/test-seams.ts); the address rules apply to its answers too.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { YepError } from '../errors.js';
import { isLinkLocalAddress, normalizeHost } from './address.js';

export function linkLocalRefusal(host: string, address: string): YepError {
  const addr = normalizeHost(address);
  return new YepError('E_NETWORK', `refusing to connect to ${host}: it resolves to the link-local address ${addr}.`, {
    hint: 'Link-local addresses (169.254.0.0/16, fe80::/10, in any spelling) are never contacted: cloud metadata services live there.',
    details: { host, address: addr },
  });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type LookupOptions = { family?: number | string; all?: boolean; hints?: number; verbatim?: boolean };

/** A `net.connect` lookup that refuses names with a link-local address (see the module comment). */
export function guardedLookup(overrides: ReadonlyMap<string, string>) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const answer = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]): void => {
      const bad = err ? undefined : addresses.find((a) => isLinkLocalAddress(a.address));
      const first = addresses[0];
      if (err) callback(err, options.all ? [] : '');
      else if (bad) callback(linkLocalRefusal(hostname, bad.address) as unknown as NodeJS.ErrnoException, options.all ? [] : '');
      else if (options.all) callback(null, addresses);
      else if (!first) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      else callback(null, first.address, first.family);
    };
    const fixed = overrides.get(hostname.toLowerCase());
    if (fixed !== undefined) {
      process.nextTick(answer, null, [{ address: fixed, family: isIP(fixed) }]);
      return;
    }
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : typeof options.family === 'number' ? options.family : 0;
    dnsLookup(hostname, { family, all: true, ...(options.hints !== undefined ? { hints: options.hints } : {}) }, (err, addresses) =>
      answer(err, addresses ?? []),
    );
  };
}

type Connector = buildConnector.connector;

/**
 * undici's connector with the address rule applied before connecting (IP-literal
 * hosts; names through the guarded lookup) and after (the peer's address).
 */
export function guardedConnector(build: typeof buildConnector, options: { timeout: number }, overrides: ReadonlyMap<string, string>): Connector {
  const base = build({ timeout: options.timeout, lookup: guardedLookup(overrides) } as buildConnector.BuildOptions);
  return (opts, callback) => {
    const host = opts.hostname;
    if (isLinkLocalAddress(host)) {
      callback(linkLocalRefusal(host, host), null);
      return;
    }
    base(opts, (err, socket) => {
      if (err || !socket) {
        callback(err ?? new Error('connect failed'), null);
        return;
      }
      const peer = (socket as Socket).remoteAddress;
      if (peer !== undefined && isLinkLocalAddress(peer)) {
        socket.destroy();
        callback(linkLocalRefusal(host, peer), null);
        return;
      }
      callback(null, socket);
    });
  };
}
