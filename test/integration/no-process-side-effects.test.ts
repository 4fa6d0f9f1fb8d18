/**
 * The library API changes nothing process-wide. Importing yep-ext (what
 * `import 'yep-ext'` loads: package.json's exports, dist/bundle/index.js and the
 * api.cjs bundle) and making a network request through it must not set V8
 * flags; the CLI (bin/run.js) still sets --liftoff-only for undici's wasm, just
 * before undici loads (docs/performance.md). Observed by wrapping v8.setFlagsFromString in the
 * child before anything else runs. Needs `npm run build`.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT } from '../helpers/home.js';

let server: Server;
let url = '';
let work = '';
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'yep-side-effects-'));
  // A registry whose config.json has no API: the request is made (undici loads), then a clean error.
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(req.url === '/config.json' ? JSON.stringify({ dl: 'http://127.0.0.1:9/crates' }) : '{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(work, { recursive: true, force: true });
});

/** Run node asynchronously: the registry above lives in this process and must keep answering. */
function node(args: string[], env?: Record<string, string | undefined>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: 'utf8', timeout: 30_000, ...(env ? { env } : {}) }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** The file `import 'yep-ext'` loads (package.json's exports), relative to the checkout. */
function packageEntry(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { exports: { '.': { default: string } } };
  return pkg.exports['.'].default;
}

/** A preload that records every V8 flag set in the process into `log`. */
function flagRecorder(log: string): string {
  const file = join(work, 'record-v8-flags.cjs');
  writeFileSync(
    file,
    `const v8 = require('node:v8'); const fs = require('node:fs'); const orig = v8.setFlagsFromString;
     v8.setFlagsFromString = (f) => { fs.appendFileSync(${JSON.stringify(log)}, f + '\\n'); return orig(f); };
     require('node:module').syncBuiltinESMExports();`,
  );
  return file;
}

describe('no process-wide side effects from the library API', () => {
  it('importing yep-ext and searching a registry sets no V8 flag', async () => {
    const log = join(work, 'library.log');
    writeFileSync(log, '');
    const script = `
      const { createContext, searchExtensions, silentLogger } = await import(${JSON.stringify(join(REPO_ROOT, packageEntry()))});
      const ctx = createContext({ env: { YEP_EXT_INDEX: ${JSON.stringify(url)}, YOLOP_CONFIG_DIR: ${JSON.stringify(join(work, 'cfg'))} }, log: silentLogger });
      const e = await searchExtensions(ctx, { term: 'x' }).catch((x) => x);
      console.log(e.code);`;
    const r = await node(['--require', flagRecorder(log), '--input-type=module', '-e', script]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('E_UNSUPPORTED'); // the request went out: undici was loaded
    expect(readFileSync(log, 'utf8')).toBe('');
  });

  // The control for the test above: the CLI does set V8 flags, each only when it needs it.
  // A V8 flag set before Node's built-ins or the code-cached bundle load makes V8 refuse their
  // code caches (docs/performance.md), so bin/run.js sets none at start: --liftoff-only just
  // before undici loads, and --expose-gc (unset again at once) on the first buffer collection.
  it('the CLI sets no V8 flag until it needs one (control for the test above)', async () => {
    const env = { PATH: process.env.PATH, HOME: work, YOLOP_CONFIG_DIR: join(work, 'cfg'), YEP_EXT_NO_UPDATE_CHECK: '1', YEP_EXT_HTTP_RETRIES: '0' };
    const log = join(work, 'cli.log');
    writeFileSync(log, '');
    const r = await node(['--require', flagRecorder(log), BIN, 'search', 'x', '--json'], { ...env, YEP_EXT_INDEX: url });
    expect(r.stdout).toContain('E_UNSUPPORTED'); // the request went out (direct: node:http) and failed cleanly
    expect(readFileSync(log, 'utf8')).toBe('');
    const install = join(work, 'install.log');
    writeFileSync(install, '');
    const i = await node(['--require', flagRecorder(install), BIN, 'install', 'nothing-here'], { ...env, YEP_EXT_INDEX: `${url}index/` });
    expect(i.status, i.stderr).not.toBe(0); // the request went out (direct: node:http) and failed cleanly
    expect(readFileSync(install, 'utf8')).toBe('');
    // Through a proxy undici makes the request: --liftoff-only is set just before it loads.
    const proxied = join(work, 'cli-proxy.log');
    writeFileSync(proxied, '');
    const p = await node(['--require', flagRecorder(proxied), BIN, 'search', 'x', '--json'], {
      ...env,
      YEP_EXT_INDEX: 'https://registry.example/index/',
      HTTPS_PROXY: 'http://127.0.0.1:9',
    });
    expect(p.stdout).toContain('http://127.0.0.1:9');
    expect(readFileSync(proxied, 'utf8')).toBe('--liftoff-only\n');
    // The collector the core calls during a long transfer: gc exposed on its first call, the flag unset again.
    const collected = join(work, 'collect.log');
    writeFileSync(collected, '');
    const collector = join(work, 'collect-at-exit.cjs');
    writeFileSync(
      collector,
      `process.on('exit', () => { const c = globalThis[Symbol.for('yep-ext.collect-garbage')]; c({ type: 'minor' }); c({ type: 'minor' }); require('node:fs').appendFileSync(${JSON.stringify(collected)}, 'collected\\n'); });`,
    );
    const l = await node(['--require', flagRecorder(collected), '--require', collector, BIN, 'list'], env);
    expect(l.status, l.stderr).toBe(0);
    expect(readFileSync(collected, 'utf8')).toBe('--expose-gc\n--no-expose-gc\ncollected\n');
  });
});
