/**
 * The plugin.json rules that JSON Schema cannot say, written once and used twice:
 * by the zod schemas (manifest-schema.ts, which turn them into messages) and by the
 * quick verdict every command runs (manifest.ts: the generated check of
 * schema/plugin/v1.json plus `rulesHold`), which must not load zod. Also the
 * constants both sides share. No zod here.
 */
export const HOST_PROTOCOL_MAJOR = 1;
/**
 * Where editors find schema/plugin/v1.json: the file as published in the npm
 * package (`files` includes schema/). `yep-ext new` writes it as the manifest's
 * `"$schema"`, a top-level key the host ignores (host-compat §2).
 */
export const PLUGIN_SCHEMA_URL = 'https://unpkg.com/yep-ext/schema/plugin/v1.json';
export const HOOK_EVENTS = ['pre_tool_use', 'post_tool_use'] as const;
/** What makes a manifest worth loading (`ui_ask` and `config_schema` alone are not). */
export const CONTRIBUTIONS = ['tools', 'prompt', 'dynamic_prompt', 'mcpServers', 'hooks', 'commands', 'status', 'skills', 'trace'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isAbsent = (v: unknown): boolean => v === undefined || v === null;

/** Indexes of entries whose `name` repeats an earlier entry's (tools, commands). */
export function duplicateNames(list: unknown[]): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  list.forEach((item, i) => {
    const name = isObj(item) ? item.name : undefined;
    if (typeof name !== 'string' || name === '') return;
    if (seen.has(name)) out.push(i);
    seen.add(name);
  });
  return out;
}

/**
 * What an MCP server definition lacks for its type: a stdio server needs `command`,
 * an http one `url`; without `type`, a server with a url and no command is http.
 */
export function mcpServerLacks(server: Obj): 'command' | 'url' | undefined {
  const type = isAbsent(server.type) ? (!isAbsent(server.url) && isAbsent(server.command) ? 'http' : 'stdio') : server.type;
  if (type === 'stdio' && !server.command) return 'command';
  if (type === 'http' && !server.url) return 'url';
  return undefined;
}

/** Non-empty lists and maps, and true flags, count as contributions. */
export function contributes(yolop: Obj): boolean {
  return CONTRIBUTIONS.some((k) => {
    const v = yolop[k];
    if (Array.isArray(v)) return v.length > 0;
    if (isObj(v)) return Object.keys(v).length > 0;
    return v === true;
  });
}

/**
 * The rules above over a value the generated structural check accepted (so the
 * shapes are known): true when none is broken.
 */
export function rulesHold(value: Obj): boolean {
  const y = value.yolop as Obj;
  if (Array.isArray(y.tools) && duplicateNames(y.tools).length > 0) return false;
  if (Array.isArray(y.commands) && duplicateNames(y.commands).length > 0) return false;
  if (isObj(y.mcpServers) && Object.values(y.mcpServers).some((s) => mcpServerLacks(s as Obj) !== undefined)) return false;
  return contributes(y);
}
