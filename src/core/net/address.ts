/**
 * The address rules of the HTTP client, on every spelling of an address. A URL
 * host, a DNS answer and a connected peer are all judged here, after
 * normalisation: IPv4 in any form the URL standard (and inet_aton) accepts
 * (`0xa9.0376.43518`, `2852039166`, `169.254.43518`, a trailing dot), IPv6 with
 * brackets, a zone or an embedded dotted quad, and IPv4 carried inside IPv6:
 * mapped `::ffff:0:0/96`, translated `::ffff:0:0:0/96`, compatible `::/96`,
 * NAT64 `64:ff9b::/96` and `64:ff9b:1::/48` (every RFC 6052 prefix length),
 * 6to4 `2002::/16` and Teredo `2001::/32` (server and client). Parsing is
 * ipaddr.js; this module only decides.
 *
 * Rules: link-local (`169.254.0.0/16`, `fe80::/10`: cloud metadata services live
 * there) is refused however it is written. Loopback (`localhost`, `127.0.0.0/8`,
 * `::1`, and `::ffff:127.0.0.0/104`, which the kernel routes to the same place)
 * is the one place plain http is allowed; an address merely embedding
 * 127.0.0.1 through a gateway (NAT64, 6to4) is not this machine.
 */
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** `host` as an IP address, or undefined for a name. Accepts `[v6]`, `v6%zone` and one trailing dot on IPv4. */
export function parseIpLiteral(host: string): IPv4 | IPv6 | undefined {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const zone = h.indexOf('%');
  if (zone !== -1 && h.includes(':')) h = h.slice(0, zone);
  if (!h.includes(':') && h.endsWith('.')) h = h.slice(0, -1);
  if (h === '' || !ipaddr.isValid(h)) return undefined;
  try {
    return ipaddr.parse(h);
  } catch {
    return undefined;
  }
}

function v4(bytes: number[]): IPv4 {
  return new ipaddr.IPv4(bytes);
}

/** Bits [from, from+len) of a 128-bit address, as bytes (len is a multiple of 8). */
function bitsAt(bytes: number[], from: number, len: number): number[] {
  return bytes.slice(from / 8, (from + len) / 8);
}

/** Every IPv4 address an IPv6 address may stand for (empty when it carries none). */
export function embeddedIpv4(addr: IPv6): IPv4[] {
  const b = addr.toByteArray();
  const zero = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  const out: IPv4[] = [];
  const last32 = (): IPv4 => v4(b.slice(12, 16));
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated, RFC 6145)
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) out.push(last32());
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) out.push(last32());
  // ::a.b.c.d (compatible, deprecated); :: and ::1 are not IPv4
  if (zero(0, 12) && !zero(12, 15)) out.push(last32());
  // 64:ff9b::/32 holds the well-known NAT64 prefix (/96) and the local-use one (64:ff9b:1::/48);
  // RFC 6052 places the IPv4 address by prefix length, skipping bits 64-71: try every placement.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    out.push(v4(bitsAt(b, 32, 32)));
    out.push(v4([...bitsAt(b, 40, 24), ...bitsAt(b, 72, 8)]));
    out.push(v4([...bitsAt(b, 48, 16), ...bitsAt(b, 72, 16)]));
    out.push(v4([...bitsAt(b, 56, 8), ...bitsAt(b, 72, 24)]));
    out.push(v4(bitsAt(b, 72, 32)));
    out.push(last32());
  }
  // 6to4: 2002:AABB:CCDD::/48
  if (b[0] === 0x20 && b[1] === 0x02) out.push(v4(bitsAt(b, 16, 32)));
  // Teredo: 2001:0000:<server v4>:<flags>:<port>:<client v4 XOR ffffffff>
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) {
    out.push(v4(bitsAt(b, 32, 32)));
    out.push(v4(b.slice(12, 16).map((x) => x ^ 0xff)));
  }
  return out;
}

/** The address itself and every IPv4 address it carries. */
function forms(addr: IPv4 | IPv6): (IPv4 | IPv6)[] {
  return addr.kind() === 'ipv6' ? [addr, ...embeddedIpv4(addr as IPv6)] : [addr];
}

/** True when `host` is a link-local address in any spelling (169.254.0.0/16, fe80::/10, or either embedded). */
export function isLinkLocalAddress(host: string): boolean {
  const addr = parseIpLiteral(host);
  return addr !== undefined && forms(addr).some((a) => a.range() === 'linkLocal');
}

/** True for hosts that never leave this machine: localhost, 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  if (h === 'localhost' || h === 'localhost.') return true;
  const addr = parseIpLiteral(h);
  if (!addr) return false;
  if (addr.range() === 'loopback') return true;
  const v6 = addr.kind() === 'ipv6' ? (addr as IPv6) : undefined;
  return v6?.isIPv4MappedAddress() === true && v6.toIPv4Address().range() === 'loopback';
}

/** The canonical text of an IP literal (`169.254.169.254`, `::ffff:a9fe:a9fe`), or `host` unchanged for a name. */
export function normalizeHost(host: string): string {
  return parseIpLiteral(host)?.toString() ?? host;
}
