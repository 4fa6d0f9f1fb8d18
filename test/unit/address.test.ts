/**
 * The address rules on every spelling: link-local is refused
 * however it is written, as a URL (index, config.json `dl`, redirect target: all
 * go through checkFetchUrl), as a DNS answer and as a connected peer; loopback is
 * recognised in its real spellings only. Pure: nothing here touches the network.
 */
import { describe, expect, it, vi } from 'vitest';
import { embeddedIpv4, isLinkLocalAddress, isLoopbackHost, normalizeHost, parseIpLiteral } from '../../src/core/net/address.js';
import { guardedConnector, guardedLookup } from '../../src/core/net/guarded-connect.js';
import { checkFetchUrl } from '../../src/core/net/http.js';
import { parseRegistryConfig } from '../../src/core/sources/crates-io/registry-config.js';
import { parseResolve } from '../helpers/seams.mjs';

/** Link-local, in every spelling we know of: [host as typed in a URL, what it is]. */
const LINK_LOCAL: [string, string][] = [
  ['169.254.169.254', 'dotted decimal'],
  ['169.254.0.1', 'start of the range'],
  ['169.254.255.255', 'end of the range'],
  ['169.254.169.254.', 'trailing dot'],
  ['0xa9.0376.43518', 'hex, octal and a 16-bit tail'],
  ['0xA9.0xFE.0xA9.0xFE', 'hex parts'],
  ['0251.0376.0251.0376', 'octal parts'],
  ['2852039166', 'one decimal number'],
  ['0xa9fea9fe', 'one hex number'],
  ['025177524776', 'one octal number'],
  ['169.254.43518', 'three parts'],
  ['169.16689662', 'two parts'],
  ['%31%36%39.254.169.254', 'percent-encoded'],
  ['[::ffff:169.254.169.254]', 'IPv4-mapped, dotted'],
  ['[::ffff:a9fe:a9fe]', 'IPv4-mapped, hex'],
  ['[0:0:0:0:0:ffff:a9fe:a9fe]', 'IPv4-mapped, uncompressed'],
  ['[::FFFF:A9FE:A9FE]', 'IPv4-mapped, upper case'],
  ['[::ffff:0:a9fe:a9fe]', 'IPv4-translated (RFC 6145)'],
  ['[::169.254.169.254]', 'IPv4-compatible'],
  ['[::a9fe:a9fe]', 'IPv4-compatible, hex'],
  ['[64:ff9b::169.254.169.254]', 'NAT64 well-known prefix'],
  ['[64:ff9b::a9fe:a9fe]', 'NAT64, hex'],
  ['[64:ff9b:1:a9fe:a9:fe00::]', 'NAT64 local-use /48 placement'],
  ['[2002:a9fe:a9fe::1]', '6to4'],
  ['[2001:0:a9fe:a9fe::1]', 'Teredo server'],
  ['[2001:0:4136:e378:8000:63bf:5601:5601]', 'Teredo client (169.254.169.254 inverted)'],
  ['[fe80::1]', 'IPv6 link-local'],
  ['[fe80::a9fe:a9fe]', 'IPv6 link-local with an IPv4-looking tail'],
  ['[febf:ffff::1]', 'end of fe80::/10'],
  ['[FE80::1]', 'IPv6 link-local, upper case'],
];

const NOT_LINK_LOCAL: string[] = [
  '169.253.255.255',
  '169.255.0.0',
  '170.254.169.254',
  '[::ffff:a9fd:ffff]',
  '[fec0::1]',
  '[fe7f::1]',
  '[64:ff9b::a9fd:1]',
  'index.crates.io',
  '169.254.169.254.example.com',
  'static.crates.io',
];

describe('link-local in every spelling', () => {
  it.each(LINK_LOCAL)('%s (%s) is link-local, in a URL and as a bare host', (host) => {
    const url = new URL(`https://${host}/`);
    expect(isLinkLocalAddress(url.hostname), url.hostname).toBe(true);
    if (!host.includes('%')) expect(isLinkLocalAddress(host)).toBe(true);
  });

  it.each(NOT_LINK_LOCAL)('%s is not', (host) => {
    expect(isLinkLocalAddress(new URL(`https://${host}/`).hostname)).toBe(false);
  });

  it.each(LINK_LOCAL)('checkFetchUrl refuses https://%s/ (index, dl and redirect targets all pass through it)', (host) => {
    expect(() => checkFetchUrl(`https://${host}/latest/meta-data/`, 'test')).toThrow(/link-local/);
    expect(() => checkFetchUrl(`https://${host}/`, 'The registry index', 'E_USAGE')).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });

  it.each([
    ['https://[::ffff:169.254.169.254]/crates'],
    ['https://[::ffff:a9fe:a9fe]/{crate}/{version}'],
    ['https://0xa9.0376.43518/dl'],
    ['https://2852039166/dl'],
  ])('a config.json whose dl is %s is refused before any download', (dl) => {
    expect(() => parseRegistryConfig(JSON.stringify({ dl }), 'https://index.example/')).toThrow(/link-local/);
  });

  it('peer addresses as sockets report them (zones, mapped forms) are judged the same', () => {
    for (const peer of ['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1%eth0', 'fe80::1%2']) expect(isLinkLocalAddress(peer), peer).toBe(true);
    for (const peer of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '93.184.216.34']) expect(isLinkLocalAddress(peer), peer).toBe(false);
  });

  it('normalises to one canonical text', () => {
    expect(normalizeHost('0xa9.0376.43518')).toBe('169.254.169.254');
    expect(normalizeHost('[::FFFF:169.254.169.254]')).toBe('::ffff:a9fe:a9fe');
    expect(normalizeHost('index.crates.io')).toBe('index.crates.io');
    expect(parseIpLiteral('index.crates.io')).toBeUndefined();
    expect(embeddedIpv4(parseIpLiteral('::ffff:a9fe:a9fe') as never).map(String)).toContain('169.254.169.254');
  });
});

describe('loopback (the plain-http exception)', () => {
  it.each([
    'localhost',
    'LOCALHOST',
    'localhost.',
    '127.0.0.1',
    '127.1',
    '127.255.255.254',
    '0x7f.1',
    '2130706433',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
  ])('http://%s/ is loopback and allowed', (host) => {
    const url = new URL(`http://${host}:8080/`);
    expect(isLoopbackHost(url.hostname), url.hostname).toBe(true);
    expect(checkFetchUrl(url.href, 'test').protocol).toBe('http:');
  });

  it.each(['10.0.0.1', '128.0.0.1', '[::2]', '[64:ff9b::7f00:1]', '[2002:7f00:1::1]', '[::127.0.0.1]', 'localhost.example.com', 'notlocalhost', '0.0.0.0'])(
    'http://%s/ is not loopback: plain http refused',
    (host) => {
      expect(isLoopbackHost(new URL(`http://${host}/`).hostname)).toBe(false);
      expect(() => checkFetchUrl(`http://${host}/`, 'test')).toThrow(/plain http/);
    },
  );
});

describe('after DNS: the guarded lookup', () => {
  const lookupOf = (overrides: string) => guardedLookup(parseResolve(overrides));
  const resolve = (overrides: string, host: string, all: boolean): Promise<{ err: any; address: unknown }> =>
    new Promise((done) => lookupOf(overrides)(host, { all }, (err, address) => done({ err, address })));

  it.each([['169.254.169.254'], ['::ffff:169.254.169.254'], ['fe80::1'], ['64:ff9b::a9fe:a9fe']])(
    'refuses a name that resolves to %s, in both lookup shapes',
    async (address) => {
      for (const all of [true, false]) {
        const { err } = await resolve(`metadata.test=${address}`, 'metadata.test', all);
        expect(err?.code).toBe('E_NETWORK');
        expect(err.message).toMatch(/refusing to connect to metadata\.test: it resolves to the link-local address/);
      }
    },
  );

  it('passes other answers through unchanged', async () => {
    expect((await resolve('ok.test=127.0.0.1', 'OK.test', true)).address).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect((await resolve('ok.test=::1', 'ok.test', false)).address).toBe('::1');
  });

  it('parses the test seam strictly (name=IP pairs only)', () => {
    expect([...parseResolve('a.test=1.2.3.4, B.test = ::1,bad,c.test=not-an-ip,=1.1.1.1')]).toEqual([
      ['a.test', '1.2.3.4'],
      ['b.test', '::1'],
    ]);
  });
});

describe('the connector: before connecting and on the connected peer', () => {
  const connectWith = (peer: string, hostname: string) => {
    const socket = { remoteAddress: peer, destroy: vi.fn() };
    const attempts: string[] = [];
    const build = (() => (opts: { hostname: string }, cb: (err: Error | null, s: unknown) => void) => {
      attempts.push(opts.hostname);
      cb(null, socket);
    }) as never;
    const connect = guardedConnector(build, { timeout: 1000 }, new Map());
    return new Promise<{ err: any; sock: unknown; attempts: string[]; socket: typeof socket }>((done) =>
      connect(
        { hostname: hostname, host: hostname, protocol: 'https:', port: '443' } as never,
        ((err: any, sock: unknown) => done({ err, sock, attempts, socket })) as never,
      ),
    );
  };

  it('refuses a link-local peer (a name that resolved past the lookup) and closes the socket', async () => {
    const { err, sock, socket } = await connectWith('::ffff:169.254.169.254', 'sneaky.test');
    expect(err?.code).toBe('E_NETWORK');
    expect(err.message).toMatch(/refusing to connect to sneaky\.test: it resolves to the link-local address ::ffff:a9fe:a9fe/);
    expect(sock).toBeNull();
    expect(socket.destroy).toHaveBeenCalled();
  });

  it('refuses an IP-literal link-local host without attempting the connection', async () => {
    const { err, attempts } = await connectWith('169.254.169.254', '169.254.169.254');
    expect(err?.message).toMatch(/link-local/);
    expect(attempts).toEqual([]);
  });

  it('hands other peers through', async () => {
    const { err, sock, socket } = await connectWith('127.0.0.1', 'localhost');
    expect(err).toBeNull();
    expect(sock).toBe(socket);
  });
});
