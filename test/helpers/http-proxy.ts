/**
 * A real HTTP proxy on loopback: the npm `proxy` package, which tunnels
 * CONNECT requests itself. Its `authenticate` hook sees every request first; we use
 * it to log each one and to play the proxy's DNS: `routes` maps a `host:port` the
 * client asked for to the loopback address that serves it, so a test registry can
 * have a real name (`registry.yep.test`) that only the proxy can reach.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createProxy } from 'proxy';

export interface TestProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request the proxy received: `CONNECT host:port` or `GET http://…`. */
  seen: string[];
  connects(): string[];
  close(): Promise<void>;
}

export async function startProxy(routes: Record<string, string> = {}): Promise<TestProxy> {
  const seen: string[] = [];
  const server = createProxy(createServer());
  server.authenticate = (req: IncomingMessage) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.method === 'CONNECT' && req.url && routes[req.url.toLowerCase()]) req.url = routes[req.url.toLowerCase()];
    return true;
  };
  // CONNECT tunnels leave the HTTP server's bookkeeping (closeAllConnections does
  // not see them), and a tunnel both of whose ends were half-closed can linger
  // after the client process has exited: close() destroys every socket the proxy
  // accepted, as a proxy shutting down drops its tunnels, instead of waiting on them
  // (under load that wait outlasted the hook timeout in CI).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    connects: () => seen.filter((s) => s.startsWith('CONNECT ')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
