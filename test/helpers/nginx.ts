/**
 * A real nginx (Debian package `nginx`) serving a directory on a loopback port, as
 * the user running the tests: the config is written into a temp prefix and nginx
 * runs in the foreground (`-p <prefix> -c <conf> -g 'daemon off;'`), killed by its
 * pid in `stop()`. Its access log is how tests count requests and bytes served.
 * Suites declare NEEDS_NGINX (needs.ts): under YEP_EXT_REQUIRE_ALL=1 a missing
 * nginx fails them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { need, type Need } from './needs.js';

function findNginx(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/local/sbin']) {
    if (dir && existsSync(join(dir, 'nginx'))) return join(dir, 'nginx');
  }
  return undefined;
}

const NGINX = findNginx();
export const NEEDS_NGINX: Need = need(NGINX !== undefined, '`nginx` (Debian package nginx; .ci/run installs it)');

interface AccessLogLine {
  method: string;
  path: string;
  status: number;
  bytes: number;
}

export interface Nginx {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  pid: number;
  /** The access log so far, parsed. */
  accessLog(): AccessLogLine[];
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitListening(port: number, child: ChildProcess, prefix: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${readLog(join(prefix, 'error.log'))}`);
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, '127.0.0.1', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen on ${port}: ${readLog(join(prefix, 'error.log'))}`);
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Serve `root` with nginx on a loopback port (static files, ETag and 304 as nginx does them). */
export async function startNginx(root: string): Promise<Nginx> {
  if (!NGINX) throw new Error('nginx is not installed');
  const prefix = mkdtempSync(join(tmpdir(), 'yep-nginx-'));
  for (const d of ['tmp', 'logs']) mkdirSync(join(prefix, d));
  const port = await freePort();
  const conf = join(prefix, 'nginx.conf');
  const asRoot = process.getuid?.() === 0;
  writeFileSync(
    conf,
    `${asRoot ? 'user root root;\n' : ''}worker_processes 1;
error_log ${prefix}/error.log warn;
pid ${prefix}/nginx.pid;
events { worker_connections 1024; }
http {
  log_format yep '$request_method $uri $status $body_bytes_sent';
  access_log ${prefix}/access.log yep;
  client_body_temp_path ${prefix}/tmp/body;
  proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi;
  uwsgi_temp_path ${prefix}/tmp/uwsgi;
  scgi_temp_path ${prefix}/tmp/scgi;
  types { application/json json; }
  default_type application/octet-stream;
  sendfile on;
  keepalive_timeout 10;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    etag on;
    location ~ /\\. { return 404; }
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    await waitListening(port, child, prefix);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  const pid = child.pid!;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    pid,
    accessLog() {
      return readLog(join(prefix, 'access.log'))
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [method, path, status, bytes] = l.split(' ');
          return { method: method!, path: path!, status: Number(status), bytes: Number(bytes) };
        });
    },
    async stop() {
      if (child.exitCode === null) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        process.kill(pid, 'SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) process.kill(pid, 'SIGKILL');
      }
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}
