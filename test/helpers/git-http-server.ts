/**
 * A real smart-HTTP git server on 127.0.0.1: node:http in front of `git http-backend`
 * (CGI). Lets tests exercise git's network transport without the internet.
 * Repositories under `privatePrefix` demand HTTP Basic auth.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  /** http://127.0.0.1:<port>/ */
  base: string;
  /** URL of a repository path relative to the project root (e.g. "gitext.git"). */
  url(repoPath: string): string;
  /** "METHOD /path?query" of every request, in order. */
  requests: string[];
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** GIT_PROJECT_ROOT: the directory holding the bare repositories. */
  root: string;
  /** Paths starting with this (e.g. "/private/") need Basic auth `user:secret`. */
  privatePrefix?: string;
  credentials?: { user: string; password: string };
  /** Wait this long before answering each request (a slow host: progress tests). */
  delayMs?: number;
}

function serveCgi(root: string, req: IncomingMessage, res: ServerResponse, remoteUser?: string): void {
  const u = new URL(req.url ?? '/', 'http://127.0.0.1');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(u.pathname),
    QUERY_STRING: u.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_ADDR: '127.0.0.1',
    ...(remoteUser ? { REMOTE_USER: remoteUser } : {}),
    ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
    ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
    ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
  };
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.on('error', () => {});
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const crlf = head.indexOf('\r\n\r\n');
    const lf = head.indexOf('\n\n');
    const end = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf : lf;
    if (end === -1) return;
    const sepLen = end === crlf ? 4 : 2;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i === -1) continue;
      const key = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (key.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else res.setHeader(key, value);
    }
    res.statusCode = status;
    headersDone = true;
    const body = head.subarray(end + sepLen);
    if (body.length) res.write(body);
  });
  child.on('close', () => res.end());
  child.on('error', () => {
    res.statusCode = 500;
    res.end();
  });
}

export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const requests: string[] = [];
  const creds = options.credentials ?? { user: 'user', password: 'secret' };
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    let user: string | undefined;
    if (options.privatePrefix && (req.url ?? '').startsWith(options.privatePrefix)) {
      const expected = `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="private"', 'Content-Type': 'text/plain' });
        res.end('authentication required\n');
        return;
      }
      user = creds.user;
    }
    if (options.delayMs) setTimeout(() => serveCgi(options.root, req, res, user), options.delayMs);
    else serveCgi(options.root, req, res, user);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}/`;
  return {
    base,
    url: (repoPath) => `${base}${repoPath.replace(/^\//, '')}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers (a stalled git host). */
export async function startSilentServer(): Promise<{ base: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
