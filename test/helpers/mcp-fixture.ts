/**
 * The stdio MCP fixture server (test/fixtures/mcp/stdio-server.mjs, built with the
 * official SDK) as the file tests start: the same source, bundled by esbuild with the
 * SDK it imports into one ES module. Node then reads one file instead of resolving
 * and linking the SDK's and zod's modules one by one at every start, which cost more
 * CPU than everything the server then does in a test. Kept in the suite's cache
 * (./test-cache.ts), named by what decides it: the fixture's sources, the locked dependency versions
 * (package-lock.json), esbuild's and Node's.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync, version as esbuildVersion } from 'esbuild';
import { REPO_ROOT } from './home.js';
import { testCacheDir } from './test-cache.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'mcp');
const ENTRY = join(FIXTURES, 'stdio-server.mjs');

let built: string | undefined;

/** The path of the bundled stdio MCP fixture server (built on the first call of a run whose inputs are new). */
export function mcpStdioServer(): string {
  if (built) return built;
  const key = createHash('sha256')
    .update(
      [ENTRY, join(FIXTURES, 'tools.mjs'), join(REPO_ROOT, 'package-lock.json')]
        .map((f) => readFileSync(f, 'utf8'))
        .concat(esbuildVersion, process.version)
        .join('\0'),
    )
    .digest('hex')
    .slice(0, 24);
  // The file keeps the fixture's name: reports show the command it was started with.
  const dir = testCacheDir('mcp-fixture', key);
  const out = join(dir, 'stdio-server.mjs');
  if (!existsSync(out)) {
    mkdirSync(dir, { recursive: true });
    const staging = join(dir, `.stdio-server.${process.pid}-${Date.now()}.mjs`);
    buildSync({
      entryPoints: [ENTRY],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: staging,
      logLevel: 'error',
      // The SDK's CommonJS dependencies require Node's modules: an ES module has no require of its own.
      banner: { js: "import { createRequire as __fixtureRequire } from 'node:module'; const require = __fixtureRequire(import.meta.url);" },
    });
    try {
      renameSync(staging, out);
    } catch {
      rmSync(staging, { force: true });
    }
  }
  built = out;
  return out;
}
