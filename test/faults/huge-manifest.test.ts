/**
 * Hostile manifest sizes (hardening D28): a 10 MB plugin.json, and lists
 * and maps of 100,000 entries inside the 1 MiB cap, from a path package and from a
 * crate. Each is refused with a clean E_MANIFEST (exit 4) naming the limit, in
 * bounded time and memory (the child's own peak RSS and CPU time, reported by a
 * preload), with bounded output, and nothing lands in the store or the lock.
 * The caps are documented in docs/formats.md.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { REPO_ROOT, jsonOf, makeTempHome, runCliProcess, type TempHome } from '../helpers/home.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const PRELOAD = join(REPO_ROOT, 'test/fixtures/report-usage.cjs');
// Generous against a loaded 2-core machine; what they catch is a manifest read or
// walked whole: a hand-written problem per entry for 100,000 args goes far past both limits.
const MAX_CPU_MS = 10_000;
const MAX_RSS_KIB = 200 * 1024;
const MAX_OUTPUT = 64 * 1024;

let home: TempHome;
let reg: TestRegistry;
const usageFile = () => join(home.root, 'usage.json');
const base = { capabilityServer: { command: 'srv' }, tools: [{ name: 't' }] };
const manifest = (name: string, yolop: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, ...extra, yolop: { ...base, ...yolop } });

/** Of a refusal that lists problems: how many its details list, and how many it counts. */
type Listed = { listed: number; count: number };
/**
 * [what, the manifest's name, its text, the refusal, what it lists]: the name carried, not
 * parsed back out of a text of up to 10 MB.
 */
const CASES: Array<[string, string, string, RegExp, Listed?]> = [
  ['a 10 MB manifest', 'huge', manifest('huge', {}, { description: 'x'.repeat(10 * 1024 * 1024) }), /is 1048\d{4} bytes; manifests are capped at 1048576/],
  ['100,000 tools', 'tools', manifest('tools', { tools: Array(100_000).fill(1) }), /yolop\.tools holds more than 10000 entries/],
  [
    '100,000 server arguments',
    'args',
    manifest('args', { capabilityServer: { command: 'srv', args: Array(100_000).fill('a') } }),
    /yolop\.capabilityServer\.args holds more than 10000 entries/,
  ],
  [
    '100,000 MCP servers',
    'mcp',
    manifest('mcp', { mcpServers: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [i.toString(36), 0])) }),
    /yolop\.mcpServers holds more than 10000 entries/,
  ],
  [
    '100,000 enum values in a config field',
    'enum',
    manifest('enum', { config_schema: { properties: { mode: { type: 'string', enum: Array.from({ length: 100_000 }, (_, i) => `${i}`) } } } }),
    /yolop\.config_schema\.properties\.mode\.enum holds more than 10000 entries/,
  ],
  [
    '10,000 bad hooks (at the cap: every problem counted, 100 listed)',
    'hooks',
    manifest('hooks', { hooks: Array(10_000).fill({ event: 'x' }) }),
    /yolop\.hooks\[0\]\.event: must be one of pre_tool_use, post_tool_use[\s\S]*…and 9988 more/,
    { listed: 100, count: 10_000 },
  ],
];

async function expectCleanRefusal(args: string[], env: Record<string, string>, message: RegExp, listed?: Listed): Promise<Record<string, any>> {
  rmSync(usageFile(), { force: true });
  const r = await runCliProcess(args, { env: { ...env, NODE_OPTIONS: `--require ${PRELOAD}`, YEP_TEST_USAGE_FILE: usageFile() } });
  expect(r.code, r.stderr).toBe(4);
  const body = jsonOf<{ error: { code: string; message: string; details?: { problems?: string[]; problem_count?: number } } }>(r);
  expect(body.error.code).toBe('E_MANIFEST');
  expect(body.error.message).toMatch(message);
  if (listed) {
    expect(body.error.details?.problems).toHaveLength(listed.listed);
    expect(body.error.details?.problem_count).toBe(listed.count);
  }
  expect(r.stdout.length + r.stderr.length).toBeLessThan(MAX_OUTPUT);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  const usage = JSON.parse(readFileSync(usageFile(), 'utf8')) as { maxRssKiB: number; cpuMs: number };
  expect(usage.cpuMs).toBeLessThan(MAX_CPU_MS);
  expect(usage.maxRssKiB).toBeLessThan(MAX_RSS_KIB);
  // Nothing installed: no package in the store, no lock entry, no staging left.
  const store = join(home.configDir, 'extensions');
  const lock = join(store, 'extensions.lock');
  if (existsSync(lock)) expect(readFileSync(lock, 'utf8')).not.toMatch(/name = "(huge|tools|args|mcp|enum|hooks)"/);
  if (existsSync(store)) expect(readdirSync(store).filter((f) => !f.startsWith('.') && f !== 'extensions.lock')).toEqual([]);
  return body;
}

beforeAll(async () => {
  reg = await startRegistry();
  for (const [, name, text] of CASES) {
    const crate = `yolop-extension-${name}`;
    reg.publish({
      name: crate,
      vers: '1.0.0',
      data: buildCrate({ name: crate, version: '1.0.0', files: { 'plugin.json': text, 'Cargo.toml': `[package]\nname = "${crate}"\nversion = "1.0.0"\n` } }),
    });
  }
});
afterAll(() => reg.close());
beforeEach(() => {
  home = makeTempHome('yep-fault-huge-');
  return () => home.cleanup();
});

describe('a huge manifest is refused cleanly, in bounded time and memory', () => {
  it.each(CASES)('%s, from a path', async (_what, _name, text, message, listed) => {
    const dir = join(home.root, 'pkg');
    mkdirSync(join(dir, 'bin'), { recursive: true });
    writeFileSync(join(dir, 'plugin.json'), text);
    await expectCleanRefusal(['install', dir, '--json', '--yes'], home.env, message, listed);
  });

  it.each(CASES)('%s, from a crate', async (_what, name, _text, message, listed) => {
    await expectCleanRefusal(['install', name, '--json', '--yes'], { ...home.env, YEP_EXT_INDEX: reg.indexUrl }, message, listed);
  });

  // Below the entry cap (the 10,000 at the cap are the case above, path and crate): 200 bad
  // hooks are 200 problems, a child that validates and words 200, not 10,000.
  it('lists at most 100 problems and counts the rest', async () => {
    const dir = join(home.root, 'pkg');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plugin.json'), manifest('hooks', { hooks: Array(200).fill({ event: 'x' }) }));
    const body = await expectCleanRefusal(['install', dir, '--json', '--yes'], home.env, /…and 188 more/);
    expect(body.error.details.problems).toHaveLength(100);
    expect(body.error.details.problem_count).toBe(200);
  });

  it('doctor says the same about the package, also in bounded time', async () => {
    const dir = join(home.root, 'pkg');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plugin.json'), CASES[2]![2]);
    rmSync(usageFile(), { force: true });
    const r = await runCliProcess(['doctor', dir, '--json'], { env: { ...home.env, NODE_OPTIONS: `--require ${PRELOAD}`, YEP_TEST_USAGE_FILE: usageFile() } });
    expect(r.stdout).toMatch(/yolop\.capabilityServer\.args holds more than 10000 entries/);
    expect(r.stdout.length).toBeLessThan(MAX_OUTPUT);
    const usage = JSON.parse(readFileSync(usageFile(), 'utf8')) as { maxRssKiB: number; cpuMs: number };
    expect(usage.cpuMs).toBeLessThan(MAX_CPU_MS);
    expect(usage.maxRssKiB).toBeLessThan(MAX_RSS_KIB);
  });
});
