/**
 * An MCP server declared with a `url` and no `type` (docs/formats.md, "MCP servers"):
 * yep-ext reads it as http, as MCP clients and yolop's `.mcp.json` reader do; install
 * places it (no E_MANIFEST) and says that a yolop whose plugin.json reader defaults
 * `type` to "stdio" skips the package (add "type": "http"); doctor connects to it over
 * streamable HTTP and lists its tools. A plugin.json yep-ext writes from a crate's
 * `[package.metadata.yolop]` spells the type out, so the host reads the same server.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestFromCargoToml } from '../../src/core/sources/crates-io/cargo-manifest.js';
import { makePackage } from '../helpers/ext-package.js';
import { jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
// @ts-expect-error: a JavaScript fixture
import { startHttpMcp } from '../fixtures/mcp/http-server.mjs';

let home: TempHome;
let web: { url: string; close(): Promise<void> };
beforeAll(async () => {
  home = makeTempHome('yep-mcp-url-');
  mkdirSync(home.configDir, { recursive: true });
  web = await startHttpMcp({ tools: () => [{ name: 'lookup', description: 'Look a word up', inputSchema: { type: 'object' } }] });
});
afterAll(async () => {
  await web.close();
  home.cleanup();
});

describe('an MCP server with a url and no type', () => {
  it('installs as an http server, with a note on the type; doctor connects over http and lists its tools', async () => {
    const dir = makePackage(join(home.root, 'src'), 'urlonly', { yolop: { mcpServers: { web: { url: web.url } } } });
    const install = await runCli(['install', dir], { env: home.env });
    expect(install.code, install.stdout + install.stderr).toBe(0);
    const lock = parse(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')) as { extensions: { name: string }[] };
    expect(lock.extensions.map((e) => e.name)).toContain('urlonly');
    expect(existsSync(join(home.configDir, 'extensions', 'urlonly', 'plugin.json'))).toBe(true);
    expect(install.stdout).toContain('web (http, remote)');
    expect(install.stdout).toContain('add "type": "http" to plugin.json');

    const doctor = await runCli(['doctor', 'urlonly', '--json'], { env: home.env });
    const servers = jsonOf(doctor).mcp_servers as { server: string; transport: string; ok: boolean; tools: { name: string }[] }[];
    expect(servers).toEqual([expect.objectContaining({ server: 'web', transport: 'http', ok: true, tools: [expect.objectContaining({ name: 'lookup' })] })]);
  });

  it('a plugin.json written from Cargo.toml spells the type out', () => {
    const toml = `[package]\nname = "yolop-extension-urlonly"\nversion = "0.1.0"\n\n[package.metadata.yolop]\ncapabilityServer = { command = "srv" }\n\n[package.metadata.yolop.mcpServers.web]\nurl = "https://mcp.example/mcp"\n\n[package.metadata.yolop.mcpServers.local]\ncommand = "mcp-local"\n`;
    const written = manifestFromCargoToml(toml, 'yolop-extension-urlonly') as { yolop: { mcpServers: Record<string, Record<string, unknown>> } };
    expect(written.yolop.mcpServers.web).toEqual({ type: 'http', url: 'https://mcp.example/mcp' });
    // A command with no type is stdio for every reader: left as written.
    expect(written.yolop.mcpServers.local).toEqual({ command: 'mcp-local' });
  });
});
