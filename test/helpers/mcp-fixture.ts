/**
 * The stdio MCP fixture server (test/fixtures/mcp/stdio-server.mjs, built with the official SDK)
 * as the file tests start it: from a V8 startup snapshot of its modules
 * (test/fixtures/mcp/stdio-snapshot.mjs, `node --build-snapshot`). Loading the SDK and zod is
 * most of what the server costs to start, and most of that is evaluating them (zod builds
 * every schema of the protocol at load); a snapshot holds them loaded and evaluated, so a start
 * is little more than a bare Node start. Each process then runs the SDK server as before, with
 * its own arguments, environment and streams.
 *
 * A snapshot is built from one file: esbuild bundles the entry with the SDK into one CommonJS
 * script first. Both are kept in the suite's cache (./test-cache.ts), named by what decides them:
 * the fixture's sources, the locked dependency versions (package-lock.json), esbuild's version,
 * and the Node binary (a snapshot runs only on the Node that built it).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync, version as esbuildVersion } from 'esbuild';
import { REPO_ROOT } from './home.js';
import { testCacheDir } from './test-cache.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'mcp');
const SOURCE = join(FIXTURES, 'stdio-server.mjs');
const ENTRY = join(FIXTURES, 'stdio-snapshot.mjs');

let built: string[] | undefined;

/**
 * The arguments that start the stdio MCP fixture server with process.execPath, its flags to
 * follow (built on the first call of a run whose inputs are new). The last one names the
 * server's source: a process started from a snapshot runs the snapshot's main function, not a
 * script, so that argument is only what reports show of the command.
 */
export function mcpStdioServer(): string[] {
  if (built) return built;
  const key = createHash('sha256')
    .update(
      [SOURCE, ENTRY, join(FIXTURES, 'tools.mjs'), join(REPO_ROOT, 'package-lock.json')]
        .map((f) => readFileSync(f, 'utf8'))
        .concat(esbuildVersion, process.version, process.execPath, process.arch)
        .join('\0'),
    )
    .digest('hex')
    .slice(0, 24);
  const dir = testCacheDir('mcp-fixture', key);
  const blob = join(dir, 'stdio-server.blob');
  if (!existsSync(blob)) {
    mkdirSync(dir, { recursive: true });
    const staging = join(dir, `.${process.pid}-${Date.now()}`);
    try {
      buildSync({ entryPoints: [ENTRY], bundle: true, platform: 'node', format: 'cjs', outfile: `${staging}.cjs`, logLevel: 'error' });
      // Without NODE_OPTIONS: what the worker runs with is no part of the server.
      const { NODE_OPTIONS: _, ...env } = process.env;
      const r = spawnSync(process.execPath, ['--snapshot-blob', `${staging}.blob`, '--build-snapshot', `${staging}.cjs`], { env, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`building the MCP fixture's snapshot failed (${r.status ?? r.signal}): ${r.stderr}`);
      // Over another worker's build of the same inputs, if it got there first: the same server.
      renameSync(`${staging}.blob`, blob);
    } finally {
      rmSync(`${staging}.cjs`, { force: true });
      rmSync(`${staging}.blob`, { force: true });
    }
  }
  built = ['--snapshot-blob', blob, SOURCE];
  return built;
}
