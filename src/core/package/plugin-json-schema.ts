/**
 * schema/plugin/v1.json, the JSON Schema for plugin.json that editors use (a
 * `"$schema"` pointer in a manifest, or a file association), generated from the zod
 * schemas in manifest-schema.ts by `npm run schema` and checked for drift by
 * test/unit/plugin-schema.test.ts. Kept apart from manifest-schema.ts so that the
 * commands, which only validate, never load zod's JSON Schema generator.
 *
 * What JSON Schema cannot say is left to yep-ext (manifest-rules.ts): duplicate tool
 * and command names, "contributes something", a stdio server's command and an http
 * server's url; and so are the 10,000-entry and 1 MiB caps (docs/formats.md).
 */
import * as z from 'zod/mini';
import { PLUGIN_SCHEMA_URL } from './manifest-rules.js';
import { pluginManifestSchema } from './manifest-schema.js';

export const PLUGIN_SCHEMA_FILE = 'schema/plugin/v1.json';

export function pluginJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(pluginManifestSchema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: PLUGIN_SCHEMA_URL,
    title: 'yolop extension manifest (plugin.json)',
    description: 'An extension package for the yolop agent, as yep-ext and the host read it. See docs/formats.md of yep-ext.',
    ...rest,
  };
}

/** The file's text, as committed. */
export function pluginJsonSchemaText(): string {
  return `${JSON.stringify(pluginJsonSchema(), null, 2)}\n`;
}
