/**
 * What changed in the tools an MCP server offers between two doctor runs
 * (pure). Every word of a tool reaches the model, so any difference in a name,
 * a description or an input schema is a change worth reading.
 */
import { canonicalJson } from '../package/grants.js';
import type { McpServerDecl } from '../package/manifest.js';
import type { McpToolDef } from './probe.js';
import { sha256Hex } from '../fs/hash.js';

export interface McpToolChanges {
  added: string[];
  removed: string[];
  /** Tools whose description changed, with both texts. */
  described: { name: string; before: string; after: string }[];
  /** Tools whose input schema changed. */
  schema: string[];
}

const canonical = (v: unknown): string => {
  try {
    return canonicalJson(v ?? null);
  } catch {
    return JSON.stringify(v ?? null) ?? 'null';
  }
};

/** The tools sorted by name, keeping the first of a repeated name (a repeat is reported on its own). */
export function normalizeTools(tools: readonly McpToolDef[]): McpToolDef[] {
  const seen = new Set<string>();
  const out: McpToolDef[] = [];
  for (const t of tools) {
    if (seen.has(t.name)) continue;
    seen.add(t.name);
    out.push({ name: t.name, description: t.description, input_schema: t.input_schema ?? null });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function diffTools(before: readonly McpToolDef[], after: readonly McpToolDef[]): McpToolChanges {
  const old = new Map(before.map((t) => [t.name, t]));
  const now = new Map(after.map((t) => [t.name, t]));
  const changes: McpToolChanges = { added: [], removed: [], described: [], schema: [] };
  for (const t of after) {
    const o = old.get(t.name);
    if (!o) {
      changes.added.push(t.name);
      continue;
    }
    if (o.description !== t.description) changes.described.push({ name: t.name, before: o.description, after: t.description });
    if (canonical(o.input_schema) !== canonical(t.input_schema)) changes.schema.push(t.name);
  }
  for (const t of before) if (!now.has(t.name)) changes.removed.push(t.name);
  return changes;
}

export const noChanges = (c: McpToolChanges): boolean => c.added.length + c.removed.length + c.described.length + c.schema.length === 0;

/** A digest of a server's declaration as written in plugin.json (did the manifest change it, or the server itself?). */
export function declarationDigest(decl: McpServerDecl): string {
  const shape =
    decl.type === 'http'
      ? { type: 'http', url: decl.url ?? '', headers: decl.headers }
      : { type: 'stdio', command: decl.command ?? '', args: decl.args, env: decl.env };
  return `sha256:${sha256Hex(canonical(shape))}`;
}
