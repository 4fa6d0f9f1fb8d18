/**
 * Builds the published artifacts schema/yep/v1/{meta,schema}.json from the
 * protocol types. Output is deterministic (keys sorted, 2-space JSON, trailing
 * newline) so the drift test and `npm run schema -- --check` can compare bytes.
 */
import { z } from 'zod';
import {
  CAPABILITY_TOKENS,
  EXTRA_DEFS,
  HOST_FEATURE_TOKENS,
  METHODS,
  MIN_PROTOCOL_VERSION,
  PROTOCOL_VERSION,
  yepRegistry,
  ErrorObject,
  CapabilityParams,
} from './protocol.js';

export const SCHEMA_DIR = 'schema/yep/v1';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k] as Json);
    return out;
  }
  return v;
}

function idOf(schema: z.ZodType): string {
  const id = yepRegistry.get(schema)?.id;
  if (!id) throw new Error('schema-gen: a payload schema has no $defs id');
  return id;
}

const ref = (schema: z.ZodType): Json => ({ $ref: `#/$defs/${idOf(schema)}` });

/** meta.json: version, methods with direction and description, capability tokens. */
export function buildMeta(): Json {
  return {
    version: PROTOCOL_VERSION,
    min_version: MIN_PROTOCOL_VERSION,
    methods: METHODS.map((m) => ({ name: m.name, direction: m.direction, kind: m.kind, description: m.description })),
    capabilities: [...CAPABILITY_TOKENS],
    host_capabilities: [...HOST_FEATURE_TOKENS],
  };
}

/** schema.json: JSON Schema 2020-12, payloads keyed by method under `messages`, types under `$defs`. */
export function buildSchema(): Json {
  const payloads: z.ZodType[] = [...EXTRA_DEFS];
  for (const m of METHODS) {
    if (m.params) payloads.push(m.params);
    if (m.result) payloads.push(m.result);
  }
  // One object referencing every payload makes zod emit each named type once under $defs.
  const root = z.object(Object.fromEntries(payloads.map((s) => [idOf(s), s])));
  const generated = z.toJSONSchema(root, { target: 'draft-2020-12', io: 'input', metadata: yepRegistry, unrepresentable: 'throw' }) as {
    $defs?: Record<string, Json>;
  };
  const messages: Record<string, Json> = {};
  for (const m of METHODS) {
    const entry: Record<string, Json> = {};
    if (m.params) entry.params = ref(m.params);
    if (m.result) entry.result = ref(m.result);
    if (Object.keys(entry).length > 0) messages[m.name] = entry;
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'YEP payload schemas',
    description:
      'JSON Schema for yolop extension protocol (YEP) request and result payloads. Companion to meta.json. Generated from src/core/yep/protocol.ts by `npm run schema`.',
    protocol_version: PROTOCOL_VERSION,
    error: ref(ErrorObject),
    capability_params: ref(CapabilityParams),
    messages,
    $defs: generated.$defs ?? {},
  };
}

/** File name -> exact bytes to commit. */
export function buildArtifacts(): Record<'meta.json' | 'schema.json', string> {
  const text = (v: Json): string => `${JSON.stringify(sortKeys(v), null, 2)}\n`;
  return { 'meta.json': text(buildMeta()), 'schema.json': text(buildSchema()) };
}
