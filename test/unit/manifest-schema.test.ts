/**
 * One set of rules, three consumers (manifest-schema.ts): the zod schemas (the full
 * verdict and the messages), the quick verdict every command runs without zod (the
 * generated check of schema/plugin/v1.json plus manifest-rules.ts), and loadManifest,
 * which combines them. They must agree on every manifest: a corpus of several
 * thousand mutations of a full manifest (every key removed, set to each of ~35 odd
 * values, given an unknown sibling) is judged by all three.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManifest, quickAccept } from '../../src/core/package/manifest.js';
import { MAX_PROBLEMS } from '../../src/core/package/manifest-schema.js';
import { parseManifest, validateManifest } from '../../src/core/package/manifest-validate.js';

type Json = unknown;
const FULL = {
  name: 'echo',
  version: '0.1.0',
  description: 'd',
  // Any value of engines and engines.yolop is valid (a malformed range is a warning: agent/engines.ts).
  engines: { yolop: '>=0.12', node: '>=20' },
  yolop: {
    protocol_version: '1.0',
    capabilityServer: { command: 'srv', args: ['a'], binaries: 'https://x/{name}-{version}-{target}' },
    config_schema: {
      type: 'object',
      required: ['token'],
      properties: { token: { type: 'string', secret: true, env: 'TOK' }, mode: { type: 'string', enum: ['a', 'b'] } },
    },
    tools: [{ name: 'echo', description: 'e', schema: { type: 'object' }, never_defer: true }, { name: 'two' }],
    prompt: true,
    dynamic_prompt: false,
    mcpServers: { docs: { url: 'https://x' }, local: { command: 'srv', args: ['-v'], env: { A: 'b' }, headers: {} } },
    hooks: [{ event: 'pre_tool_use', tool_name_glob: 'b*', timeout_ms: 100, on_error: 'block' }],
    commands: [{ name: 'go', description: 'g', args: [{ name: 'a', description: 'x', required: true }] }],
    status: true,
    skills: false,
    ui_ask: true,
    trace: false,
  },
};
const ODD: Json[] = [
  null,
  0,
  1,
  -1,
  1.5,
  '',
  ' ',
  'x',
  'a b',
  '../x',
  '2.0',
  '1.2',
  '01.3',
  true,
  false,
  [],
  [1],
  ['a'],
  {},
  { a: 1 },
  { a: 'b' },
  { name: 'n' },
  { name: '' },
  { command: 'c' },
  { event: 'post_tool_use' },
  { type: 'http' },
  { type: 'stdio' },
  { url: 'u', type: null },
  'pre_tool_use',
  'warn',
  'block',
  'http',
  [{ name: 'x' }, { name: 'x' }],
  [{}],
  'X_1',
  'A'.repeat(129),
  'A'.repeat(128),
];

type Path = (string | number)[];
function paths(o: Json, p: Path = [], out: Path[] = []): Path[] {
  if (p.length > 0) out.push(p);
  if (o !== null && typeof o === 'object') for (const [k, v] of Object.entries(o)) paths(v, [...p, Array.isArray(o) ? Number(k) : k], out);
  return out;
}
function edit(o: Json, p: Path, change: (parent: Record<string | number, Json>, key: string | number) => void): Json {
  const copy = structuredClone(o) as Record<string | number, Json>;
  let t = copy;
  for (const k of p.slice(0, -1)) t = t[k] as Record<string | number, Json>;
  change(t, p.at(-1)!);
  return copy;
}

const corpus: Json[] = [FULL];
for (const p of paths(FULL)) {
  corpus.push(edit(FULL, p, (t, k) => (Array.isArray(t) ? t.splice(k as number, 1) : delete t[k])));
  for (const v of ODD) corpus.push(edit(FULL, p, (t, k) => (t[k] = v)));
  // An unknown key beside every key that sits in an object (not in an array).
  if (typeof p.at(-1) === 'string') corpus.push(edit(FULL, [...p.slice(0, -1), 'zz_unknown'], (t, k) => (t[k] = 1)));
}
for (const key of ['tools', 'prompt', 'dynamic_prompt', 'mcpServers', 'hooks', 'commands', 'status', 'skills', 'trace', 'ui_ask', 'config_schema']) {
  for (const v of ODD) corpus.push({ name: 'n', yolop: { capabilityServer: { command: 'x' }, [key]: v } });
}
corpus.push(null, [], 'x', 1, {}, { name: 'n' }, { name: 'n', yolop: [] }, { name: 'n', yolop: null });

describe('the quick verdict agrees with the zod schemas', () => {
  it(`on ${corpus.length} manifests`, () => {
    expect(corpus.length).toBeGreaterThan(2500);
    const disagree: string[] = [];
    let valid = 0;
    for (const value of corpus) {
      const zodValid = 'manifest' in validateManifest(value);
      if (zodValid) valid++;
      // The one form the generated check refuses and zod accepts: `mcpServers: []` (loadManifest asks zod then).
      const emptyMcpArray =
        Array.isArray((value as { yolop?: { mcpServers?: unknown } } | null)?.yolop?.mcpServers) &&
        (value as { yolop: { mcpServers: unknown[] } }).yolop.mcpServers.length === 0;
      if (quickAccept(value) !== zodValid && !(emptyMcpArray && zodValid))
        disagree.push(`${JSON.stringify(value).slice(0, 300)} quick=${!zodValid} zod=${zodValid}`);
    }
    expect(disagree).toEqual([]);
    // Both verdicts occur often: the corpus is not all-valid or all-invalid.
    expect(valid).toBeGreaterThan(300);
    expect(corpus.length - valid).toBeGreaterThan(1000);
  });

  it('loadManifest gives the zod result for every manifest, valid or not (same manifest, same problems)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'yep-manifest-corpus-'));
    try {
      // Every 7th: loadManifest reads files, the full corpus would take long on a busy machine.
      for (const value of corpus.filter((_, i) => i % 7 === 0)) {
        writeFileSync(join(dir, 'plugin.json'), JSON.stringify(value));
        const viaZod = validateManifest(value);
        const loaded = await loadManifest(dir).then(
          (m) => ({ manifest: m }),
          (e: { code?: string; details?: { problems?: string[] }; message: string }) => ({ code: e.code, problems: e.details?.problems ?? [e.message] }),
        );
        if ('manifest' in viaZod) expect(loaded, JSON.stringify(value)).toEqual({ manifest: viaZod.manifest });
        else expect(loaded).toEqual({ code: 'E_MANIFEST', problems: viaZod.problems });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('engines is kept as written', () => {
  it.each([[{ yolop: '>=0.12' }], ['yolop>=1'], [{ yolop: 7 }], [[1]]])('%j reaches the Manifest unchanged', async (engines) => {
    const dir = mkdtempSync(join(tmpdir(), 'yep-manifest-engines-'));
    try {
      writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ name: 'e', engines, yolop: { capabilityServer: { command: 'srv' }, tools: [{ name: 't' }] } }));
      expect((await loadManifest(dir)).engines).toEqual(engines);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('engines: null counts as absent', () => {
    const r = validateManifest({ name: 'e', engines: null, yolop: { capabilityServer: { command: 'srv' }, tools: [{ name: 't' }] } });
    expect('manifest' in r && !('engines' in r.manifest)).toBe(true);
  });
});

describe('the host rules, as messages', () => {
  const base = { name: 'echo', yolop: { capabilityServer: { command: 'srv' }, tools: [{ name: 't' }] } };
  const withYolop = (y: Record<string, unknown>) => ({ ...base, yolop: { ...base.yolop, ...y } });
  const problemsOf = (v: Json): string[] => {
    const r = validateManifest(v);
    return 'problems' in r ? r.problems : [];
  };

  it.each([
    [
      'null counts as absent',
      withYolop({ prompt: null, hooks: null, mcpServers: null, commands: null, capabilityServer: { command: 'srv', args: null, binaries: null } }),
      [],
    ],
    ['an empty mcpServers array means none', withYolop({ mcpServers: [] }), []],
    ['a top-level $schema and unknown keys are ignored', { $schema: 'https://x/v1.json', engines: { yolop: '>=1' }, ...base }, []],
    ['engines of any shape never makes a manifest invalid (a malformed range is a warning)', { ...base, engines: 'yolop>=1' }, []],
    ['engines.yolop that is not a string is valid too', { ...base, engines: { yolop: 13 } }, []],
    ['engines: null', { ...base, engines: null }, []],
    ['version must be a string (the host enforces every known type)', { ...base, version: 1 }, ['version: must be a string']],
    ['description must be a string', { ...base, description: ['x'] }, ['description: must be a string']],
    ['a name of 129 characters', { ...base, name: 'a'.repeat(129) }, [`name: "${'a'.repeat(80)}" must match ^[A-Za-z0-9_-]+$ (at most 128 characters)`]],
    ['protocol 01.2 is major 1', withYolop({ protocol_version: '01.2' }), []],
    ['protocol 1.x', withYolop({ protocol_version: '1.x' }), ['yolop.protocol_version: "1.x" is not MAJOR.MINOR']],
    ['duplicate tools', withYolop({ tools: [{ name: 't' }, { name: 'u' }, { name: 't' }] }), ['yolop.tools[2].name: duplicate tool "t"']],
    ['duplicate commands', withYolop({ commands: [{ name: 'c' }, { name: 'c' }] }), ['yolop.commands[1].name: duplicate command "c"']],
    ['an http server needs a url', withYolop({ mcpServers: { a: { type: 'http' } } }), ['yolop.mcpServers.a.url: is required for an http server']],
    ['a url alone makes an http server', withYolop({ mcpServers: { a: { url: 'https://x' } } }), []],
    ['a bad server name', withYolop({ mcpServers: { 'a b': { command: 'x' } } }), ['yolop.mcpServers.a b: server names must match ^[A-Za-z0-9_-]+$']],
    [
      'a bad config key',
      withYolop({ config_schema: { properties: { 'a/b': {} } } }),
      ['yolop.config_schema.properties.a/b: config keys must match ^[A-Za-z0-9_-]+$'],
    ],
    ['args not all strings', withYolop({ capabilityServer: { command: 'srv', args: ['a', 1] } }), ['yolop.capabilityServer.args: must be an array of strings']],
    ['env not all strings', withYolop({ mcpServers: { a: { command: 'x', env: { A: 1, B: 2 } } } }), ['yolop.mcpServers.a.env: must be an object of strings']],
    ['a zero hook timeout', withYolop({ hooks: [{ event: 'pre_tool_use', timeout_ms: 0 }] }), ['yolop.hooks[0].timeout_ms: must be a positive integer']],
    [
      'an unknown command arg key',
      withYolop({ commands: [{ name: 'c', args: [{ name: 'a', kind: 'x' }] }] }),
      ['yolop.commands[0].args[0].kind: unknown key (the host refuses it)'],
    ],
    [
      'a secret flag that is not a boolean',
      withYolop({ config_schema: { properties: { t: { secret: 'yes' } } } }),
      ['yolop.config_schema.properties.t.secret: must be true or false'],
    ],
  ])('%s', (_what, value, want) => {
    expect(problemsOf(value)).toEqual(want);
    expect(quickAccept(value)).toBe(want.length === 0 && !Array.isArray((value as { yolop: { mcpServers?: unknown } }).yolop.mcpServers));
  });

  it(`lists at most ${MAX_PROBLEMS} problems and counts them all`, () => {
    const r = validateManifest(withYolop({ hooks: Array(500).fill({ event: 'x' }) }));
    expect(r).toMatchObject({ total: 500 });
    expect((r as { problems: string[] }).problems).toHaveLength(MAX_PROBLEMS);
    expect(() => parseManifest(JSON.stringify(withYolop({ hooks: Array(500).fill({ event: 'x' }) })), 'pkg')).toThrow(/…and 488 more/);
  });

  it('refuses text over 1 MiB before parsing it, also through the library API', () => {
    expect(() => parseManifest(JSON.stringify({ ...base, description: 'é'.repeat(600_000) }), 'pkg')).toThrow(
      /pkg\/plugin\.json is 1200\d+ bytes; manifests are capped at 1048576/,
    );
  });
});
