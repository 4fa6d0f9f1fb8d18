/**
 * The published schema artifacts: generated == committed (drift), and compatible
 * with the host's committed artifacts (copied into test/fixtures/host-yep-v1, and
 * that copy checked against ../shared/reference/yep-v1 wherever it is present).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildArtifacts, SCHEMA_DIR } from '../../src/core/yep/schema-gen.js';
import { findMethod } from '../../src/core/yep/protocol.js';
import { payloadProblems } from '../../src/core/yep/validate.js';

const REPO = resolve(import.meta.dirname, '../..');
const ours = {
  meta: JSON.parse(readFileSync(join(REPO, SCHEMA_DIR, 'meta.json'), 'utf8')),
  schema: JSON.parse(readFileSync(join(REPO, SCHEMA_DIR, 'schema.json'), 'utf8')),
};

// The host's artifacts, copied into the repo as test data (test/fixtures/host-yep-v1) so
// these tests run in any clone; the copy is checked against the host's own directory
// (../shared/reference/yep-v1 beside the repo, a worktree one level deeper finds it one
// more level up, or $YEP_SHARED_DIR) wherever that is present.
const HOST_FIXTURE = join(REPO, 'test/fixtures/host-yep-v1');
const ARTIFACTS = ['meta.json', 'schema.json'];
const host = {
  meta: JSON.parse(readFileSync(join(HOST_FIXTURE, 'meta.json'), 'utf8')),
  schema: JSON.parse(readFileSync(join(HOST_FIXTURE, 'schema.json'), 'utf8')),
};
const SHARED_CANDIDATES = [process.env.YEP_SHARED_DIR, resolve(REPO, '../shared'), resolve(REPO, '../../shared')].filter((d): d is string => Boolean(d));
const HOST_DIR = SHARED_CANDIDATES.map((d) => join(d, 'reference/yep-v1')).find((d) => existsSync(join(d, 'meta.json')));

/** Methods the host's method table lists but its artifact does not (see docs/protocol.md). */
const DOCUMENTED_EXTRAS = ['cancel', 'log', 'workspace/changed'];

describe('schema/yep/v1 drift', () => {
  it('the committed meta.json and schema.json are exactly what `npm run schema` generates', () => {
    const generated = buildArtifacts();
    for (const [file, text] of Object.entries(generated)) {
      const committed = readFileSync(join(REPO, SCHEMA_DIR, file), 'utf8');
      expect(committed, `${SCHEMA_DIR}/${file} is stale: run \`npm run schema\``).toBe(text);
    }
  });

  it('is JSON Schema 2020-12 with payloads under messages and types under $defs', () => {
    expect(ours.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const ajv = new Ajv2020({ strict: false });
    expect(() => ajv.compile(ours.schema)).not.toThrow();
    for (const entry of Object.values(ours.schema.messages) as Record<string, { $ref: string }>[]) {
      for (const part of Object.values(entry)) expect(ours.schema.$defs[part.$ref.replace('#/$defs/', '')]).toBeDefined();
    }
  });
});

type Node = Record<string, unknown> | boolean;

function deref(schema: { $defs: Record<string, Node> }, node: Node): Node {
  let n = node;
  for (let i = 0; i < 10 && typeof n === 'object' && typeof n.$ref === 'string'; i++) {
    const { $ref, ...rest } = n as Record<string, unknown>;
    const target = schema.$defs[($ref as string).replace('#/$defs/', '')] as Node;
    n = typeof target === 'object' ? { ...target, ...rest } : target;
  }
  return n;
}

function typesOf(schema: { $defs: Record<string, Node> }, node: Node): Set<string> | 'any' {
  const n = deref(schema, node);
  if (n === true || (typeof n === 'object' && n.type === undefined && n.anyOf === undefined && n.enum === undefined)) return 'any';
  if (n === false) return new Set();
  if (Array.isArray(n.anyOf)) {
    const out = new Set<string>();
    for (const alt of n.anyOf as Node[]) {
      const t = typesOf(schema, alt);
      if (t === 'any') return 'any';
      for (const x of t) out.add(x);
    }
    return out;
  }
  if (n.type !== undefined) return new Set(Array.isArray(n.type) ? (n.type as string[]) : [n.type as string]);
  return new Set((n.enum as unknown[]).map((v) => (v === null ? 'null' : typeof v)));
}

/** Differences that would make a payload the host writes or reads mean something else to us. */
function incompatibilities(path: string, hostNode: Node, ourNode: Node): string[] {
  const h = deref(host.schema, hostNode);
  const o = deref(ours.schema, ourNode);
  const ht = typesOf(host.schema, h);
  const ot = typesOf(ours.schema, o);
  const out: string[] = [];
  if (ot !== 'any') {
    if (ht === 'any') return [`${path}: host accepts anything, we accept only ${[...ot].join('|')}`];
    for (const t of ht) if (!ot.has(t) && !(t === 'integer' && ot.has('number'))) out.push(`${path}: host type ${t} missing from ours (${[...ot].join('|')})`);
  }
  if (typeof h !== 'object' || typeof o !== 'object') return out;
  if ('default' in h && JSON.stringify(h.default) !== JSON.stringify(o.default))
    out.push(`${path}: default ${JSON.stringify(h.default)} vs ours ${JSON.stringify(o.default)}`);
  if (Array.isArray(h.enum))
    for (const v of h.enum) if (!(o.enum as unknown[] | undefined)?.includes(v)) out.push(`${path}: enum value ${JSON.stringify(v)} missing`);
  const hostRequired = new Set((h.required as string[] | undefined) ?? []);
  for (const r of (o.required as string[] | undefined) ?? []) if (!hostRequired.has(r)) out.push(`${path}: we require ${r}, the host does not`);
  const hp = (h.properties ?? {}) as Record<string, Node>;
  const op = (o.properties ?? {}) as Record<string, Node>;
  for (const [k, v] of Object.entries(hp)) {
    if (!(k in op)) out.push(`${path}.${k}: missing from ours`);
    else out.push(...incompatibilities(`${path}.${k}`, v, op[k]!));
  }
  if (h.items !== undefined && o.items !== undefined) out.push(...incompatibilities(`${path}[]`, h.items as Node, o.items as Node));
  // anyOf with a $ref alternative (CapabilityParams.prompt): compare the object alternatives.
  const objAlt = (n: Node): Node | undefined =>
    typeof n === 'object' && Array.isArray(n.anyOf) ? (n.anyOf as Node[]).find((a) => typeof a === 'object' && typeof a.$ref === 'string') : undefined;
  const ha = objAlt(h);
  const oa = objAlt(o);
  if (ha && oa) out.push(...incompatibilities(`${path}(object)`, ha, oa));
  return out;
}

describe("the copy of the host's artifacts in test/fixtures/host-yep-v1", () => {
  // The copy is what the tests below use in any clone. It must be the bytes taken from
  // the host (SHA256SUMS, written when copying) and, wherever the host's directory is
  // beside the repo, still equal to it. Naming YEP_SHARED_DIR makes that comparison
  // mandatory.
  const where = HOST_DIR ?? (process.env.YEP_SHARED_DIR ? join(process.env.YEP_SHARED_DIR, 'reference/yep-v1') : undefined);
  it(`holds the bytes recorded in its SHA256SUMS${where ? `, byte-identical to ${where}` : ' (no host directory beside this clone to compare with)'}`, () => {
    const sums = readFileSync(join(HOST_FIXTURE, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/) as [string, string]);
    expect(sums.map(([, f]) => f).sort()).toEqual([...ARTIFACTS].sort());
    for (const [sum, file] of sums)
      expect(
        createHash('sha256')
          .update(readFileSync(join(HOST_FIXTURE, file)))
          .digest('hex'),
        file,
      ).toBe(sum);
    if (where === undefined) return;
    for (const file of ARTIFACTS) {
      expect(existsSync(join(where, file)), `${where}/${file}`).toBe(true);
      expect(readFileSync(join(HOST_FIXTURE, file), 'utf8'), `test/fixtures/host-yep-v1/${file} differs from ${where}/${file}: copy the host's over`).toBe(
        readFileSync(join(where, file), 'utf8'),
      );
    }
  });
});

describe("compatibility with the host's committed artifacts", () => {
  it('has the same version and capability tokens', () => {
    expect(ours.meta.version).toBe(host.meta.version);
    expect(ours.meta.min_version).toBe(host.meta.min_version);
    expect([...ours.meta.capabilities].sort()).toEqual([...host.meta.capabilities].sort());
  });

  it('has every host method with the same direction; extras are only the documented ones', () => {
    const ourByName = new Map<string, { direction: string }>(ours.meta.methods.map((m: { name: string; direction: string }) => [m.name, m]));
    for (const m of host.meta.methods as { name: string; direction: string }[]) {
      expect(ourByName.get(m.name)?.direction, m.name).toBe(m.direction);
    }
    const hostNames = new Set(host.meta.methods.map((m: { name: string }) => m.name));
    const extras = [...ourByName.keys()].filter((n) => !hostNames.has(n)).sort();
    expect(extras).toEqual([...DOCUMENTED_EXTRAS].sort());
  });

  it('has a compatible payload shape for every host message, error and capability_params', () => {
    const problems: string[] = [];
    for (const [method, parts] of Object.entries(host.schema.messages as Record<string, Record<string, Node>>)) {
      const mine = ours.schema.messages[method] as Record<string, Node> | undefined;
      if (!mine) {
        problems.push(`${method}: missing`);
        continue;
      }
      for (const [part, node] of Object.entries(parts)) {
        if (!mine[part]) problems.push(`${method}.${part}: missing`);
        else problems.push(...incompatibilities(`${method}.${part}`, node, mine[part]!));
      }
    }
    problems.push(...incompatibilities('error', host.schema.error, ours.schema.error));
    problems.push(...incompatibilities('capability_params', host.schema.capability_params, ours.schema.capability_params));
    expect(problems).toEqual([]);
  });

  it('every host $defs type exists under the same name', () => {
    expect(Object.keys(host.schema.$defs).filter((k) => !(k in ours.schema.$defs))).toEqual([]);
  });

  // The same verdicts from three validators: the host's schema, ours (via ajv), and the zod types.
  const corpus: [string, 'params' | 'result', unknown][] = [
    ['initialize', 'result', {}],
    [
      'initialize',
      'result',
      { protocol_version: '1.0', name: 'x', capabilities: ['tools'], capability_params: { tools: [{ name: 't' }], prompt: { static: 'p' } } },
    ],
    ['initialize', 'result', { capability_params: { prompt: null } }],
    ['initialize', 'result', { name: 3 }],
    ['initialize', 'result', { capability_params: { tools: [{}] } }],
    ['initialize', 'result', { capabilities: 'tools' }],
    ['initialize', 'params', { protocol_version: '1.0', session_id: 's', workspace_root: '/w', config: { a: 1 }, capabilities: ['cancel'] }],
    ['tool/update', 'params', { request_id: 4, output: 'x' }],
    ['tool/update', 'params', { request_id: 'x' }],
    ['tool/update', 'params', { request_id: -1 }],
    ['hook/fire', 'result', { block: true, reason: 'no', user_message: null }],
    ['hook/fire', 'result', { block: 'yes' }],
    ['status/changed', 'params', { status: 'ready', level: 'warn', detail: null }],
    ['status/changed', 'params', { level: 'loud' }],
    ['ui/ask', 'params', { prompt: 'q', placeholder: null }],
    ['ui/ask', 'result', { answer: 'a', cancelled: false }],
    ['ui/ask', 'result', { answer: 1 }],
    ['command/execute', 'result', { success: false, message: 'm' }],
    ['prompt/contribution', 'result', { text: 5 }],
    ['trace/event', 'params', { id: 'e', event_type: 'turn.started', data: { any: 1 } }],
  ];
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const compiled = new Map<string, (v: unknown) => boolean>();
  const verdictOf = (who: string, schema: Record<string, unknown>, method: string, part: string, value: unknown): boolean => {
    const key = `${who} ${method} ${part}`;
    if (!compiled.has(key)) {
      const node = (schema.messages as Record<string, Record<string, unknown>>)[method]![part] as Record<string, unknown>;
      compiled.set(key, ajv.compile({ ...node, $defs: schema.$defs }) as (v: unknown) => boolean);
    }
    return compiled.get(key)!(value);
  };
  it.each(corpus)('%s %s %j: host schema, our schema and the zod types agree', (method, part, value) => {
    const verdict = (schema: Record<string, unknown>): boolean => verdictOf(schema === ours.schema ? 'ours' : 'host', schema, method, part, value);
    const zodOk = payloadProblems(method, part, value).length === 0;
    expect(findMethod(method)?.[part]).toBeDefined();
    expect(verdict(ours.schema)).toBe(zodOk);
    expect(verdict(host.schema)).toBe(zodOk);
  });
});
