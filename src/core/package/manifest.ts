/**
 * plugin.json -> Manifest, by the host's rules (host-compat §2). Unknown keys are
 * ignored where the host ignores them and refused where the host refuses them;
 * every problem is collected so the author sees them all at once.
 */
import { inspectRegularFile, readRegularTextSync } from '../store/read-regular-file.js';
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { parseStrictJson, StrictJsonError } from './json-strict.js';
import { NAME_RE, isValidName } from './names.js';

export const MANIFEST_FILE = 'plugin.json';
/** A manifest larger than this is refused before parsing (hardening D28). */
export const MANIFEST_MAX_BYTES = 1024 * 1024;
export const HOST_PROTOCOL_MAJOR = 1;
export const HOOK_EVENTS = ['pre_tool_use', 'post_tool_use'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface ToolDecl {
  name: string;
  description?: string;
  schema: Record<string, unknown>;
  never_defer: boolean;
}

export interface HookDecl {
  event: HookEvent;
  tool_name_glob: string;
  timeout_ms: number;
  on_error: 'warn' | 'block';
}

export interface McpServerDecl {
  type: 'stdio' | 'http';
  command?: string;
  args: string[];
  env: Record<string, string>;
  url?: string;
  headers: Record<string, string>;
}

export interface CommandArgDecl {
  name: string;
  description?: string;
  required: boolean;
}

export interface CommandDecl {
  name: string;
  description?: string;
  args: CommandArgDecl[];
}

export interface ConfigField {
  key: string;
  type?: string;
  description?: string;
  secret: boolean;
  env?: string;
  enum?: string[];
  required: boolean;
  default?: unknown;
  /** The property's JSON Schema as written (yolop keywords included). */
  schema: Record<string, unknown>;
}

export interface CapabilityServer {
  command: string;
  args: string[];
  binaries?: string;
}

export interface YolopFacet {
  protocol_version?: string;
  capabilityServer: CapabilityServer;
  config_schema?: Record<string, unknown>;
  tools: ToolDecl[];
  prompt: boolean;
  dynamic_prompt: boolean;
  mcpServers: Record<string, McpServerDecl>;
  hooks: HookDecl[];
  commands: CommandDecl[];
  status: boolean;
  skills: boolean;
  ui_ask: boolean;
  trace: boolean;
}

export interface Manifest {
  name: string;
  version?: string;
  description?: string;
  /**
   * The top-level `engines` value as written, unchecked: the host ignores it, so it
   * never makes a manifest invalid. `engines.yolop` is read by agent/engines.ts.
   */
  engines?: unknown;
  yolop: YolopFacet;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

class Problems {
  list: string[] = [];
  add(path: string, msg: string): void {
    this.list.push(`${path}: ${msg}`);
  }
}

function optString(p: Problems, o: Obj, key: string, path: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    p.add(`${path}.${key}`, 'must be a string');
    return undefined;
  }
  return v;
}

function optBool(p: Problems, o: Obj, key: string, path: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') {
    p.add(`${path}.${key}`, 'must be true or false');
    return false;
  }
  return v;
}

function stringArray(p: Problems, v: unknown, path: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    p.add(path, 'must be an array of strings');
    return [];
  }
  return v as string[];
}

function stringMap(p: Problems, v: unknown, path: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObj(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    p.add(path, 'must be an object of strings');
    return {};
  }
  return { ...(v as Record<string, string>) };
}

function unknownKeys(p: Problems, o: Obj, allowed: readonly string[], path: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) p.add(`${path}.${k}`, 'unknown key (the host refuses it)');
}

function arrayOf(p: Problems, v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) {
    p.add(path, 'must be an array');
    return [];
  }
  return v;
}

function parseTools(p: Problems, v: unknown): ToolDecl[] {
  const seen = new Set<string>();
  return arrayOf(p, v, 'yolop.tools').flatMap((t, i) => {
    const path = `yolop.tools[${i}]`;
    if (!isObj(t)) return p.add(path, 'must be an object'), [];
    const name = optString(p, t, 'name', path);
    if (!name) return p.add(`${path}.name`, 'is required'), [];
    if (!NAME_RE.test(name)) p.add(`${path}.name`, `${JSON.stringify(name)} must match ^[A-Za-z0-9_-]+$`);
    if (seen.has(name)) p.add(`${path}.name`, `duplicate tool ${JSON.stringify(name)}`);
    seen.add(name);
    const schema = t.schema === undefined || t.schema === null ? { type: 'object' } : t.schema;
    if (!isObj(schema)) p.add(`${path}.schema`, 'must be a JSON Schema object');
    const description = optString(p, t, 'description', path);
    return [{ name, ...(description !== undefined ? { description } : {}), schema: isObj(schema) ? schema : {}, never_defer: optBool(p, t, 'never_defer', path) }];
  });
}

function parseHooks(p: Problems, v: unknown): HookDecl[] {
  return arrayOf(p, v, 'yolop.hooks').flatMap((h, i) => {
    const path = `yolop.hooks[${i}]`;
    if (!isObj(h)) return p.add(path, 'must be an object'), [];
    unknownKeys(p, h, ['event', 'tool_name_glob', 'timeout_ms', 'on_error'], path);
    const event = h.event;
    if (!HOOK_EVENTS.includes(event as HookEvent)) p.add(`${path}.event`, `must be one of ${HOOK_EVENTS.join(', ')}`);
    const glob = optString(p, h, 'tool_name_glob', path) ?? '*';
    if (glob === '') p.add(`${path}.tool_name_glob`, 'must not be empty');
    const timeout = h.timeout_ms ?? 5000;
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout <= 0) p.add(`${path}.timeout_ms`, 'must be a positive integer');
    const onError = h.on_error ?? 'warn';
    if (onError !== 'warn' && onError !== 'block') p.add(`${path}.on_error`, 'must be "warn" or "block"');
    return [
      {
        event: event as HookEvent,
        tool_name_glob: glob,
        timeout_ms: typeof timeout === 'number' ? timeout : 5000,
        on_error: onError === 'block' ? 'block' : 'warn',
      },
    ];
  });
}

function parseMcpServers(p: Problems, v: unknown): Record<string, McpServerDecl> {
  if (v === undefined || v === null) return {};
  // The seed spec sketched `mcpServers: []`; an empty array means "none" and is accepted.
  if (Array.isArray(v) && v.length === 0) return {};
  if (!isObj(v)) return p.add('yolop.mcpServers', 'must be an object mapping server names to definitions'), {};
  const out: Record<string, McpServerDecl> = {};
  for (const [name, s] of Object.entries(v)) {
    const path = `yolop.mcpServers.${name}`;
    if (!isValidName(name)) p.add(path, 'server names must match ^[A-Za-z0-9_-]+$');
    if (!isObj(s)) {
      p.add(path, 'must be an object');
      continue;
    }
    unknownKeys(p, s, ['type', 'command', 'args', 'env', 'url', 'headers'], path);
    const command = optString(p, s, 'command', path);
    const url = optString(p, s, 'url', path);
    const type = s.type ?? (url !== undefined && command === undefined ? 'http' : 'stdio');
    if (type !== 'stdio' && type !== 'http') p.add(`${path}.type`, 'must be "stdio" or "http"');
    if (type === 'stdio' && !command) p.add(`${path}.command`, 'is required for a stdio server');
    if (type === 'http' && !url) p.add(`${path}.url`, 'is required for an http server');
    out[name] = {
      type: type === 'http' ? 'http' : 'stdio',
      ...(command !== undefined ? { command } : {}),
      args: stringArray(p, s.args, `${path}.args`),
      env: stringMap(p, s.env, `${path}.env`),
      ...(url !== undefined ? { url } : {}),
      headers: stringMap(p, s.headers, `${path}.headers`),
    };
  }
  return out;
}

function parseCommands(p: Problems, v: unknown): CommandDecl[] {
  const seen = new Set<string>();
  return arrayOf(p, v, 'yolop.commands').flatMap((c, i) => {
    const path = `yolop.commands[${i}]`;
    if (!isObj(c)) return p.add(path, 'must be an object'), [];
    unknownKeys(p, c, ['name', 'description', 'args'], path);
    const name = optString(p, c, 'name', path);
    if (!name || !isValidName(name)) return p.add(`${path}.name`, 'is required and must match ^[A-Za-z0-9_-]+$'), [];
    if (seen.has(name)) p.add(`${path}.name`, `duplicate command ${JSON.stringify(name)}`);
    seen.add(name);
    const args = arrayOf(p, c.args, `${path}.args`).flatMap((a, j): CommandArgDecl[] => {
      const apath = `${path}.args[${j}]`;
      if (!isObj(a)) return p.add(apath, 'must be an object'), [];
      unknownKeys(p, a, ['name', 'description', 'required'], apath);
      const an = optString(p, a, 'name', apath);
      if (!an) return p.add(`${apath}.name`, 'is required'), [];
      const ad = optString(p, a, 'description', apath);
      return [{ name: an, ...(ad !== undefined ? { description: ad } : {}), required: optBool(p, a, 'required', apath) }];
    });
    const description = optString(p, c, 'description', path);
    return [{ name, ...(description !== undefined ? { description } : {}), args }];
  });
}

/** The config fields a manifest declares, in declaration order. */
export function configFields(manifest: Manifest): ConfigField[] {
  const schema = manifest.yolop.config_schema;
  if (!schema || !isObj(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]).filter((x): x is string => typeof x === 'string') : [];
  return Object.entries(schema.properties).flatMap(([key, prop]): ConfigField[] => {
    if (!isObj(prop)) return [];
    return [
      {
        key,
        ...(typeof prop.type === 'string' ? { type: prop.type } : {}),
        ...(typeof prop.description === 'string' ? { description: prop.description } : {}),
        secret: prop.secret === true,
        ...(typeof prop.env === 'string' ? { env: prop.env } : {}),
        ...(Array.isArray(prop.enum) ? { enum: prop.enum.map(String) } : {}),
        required: required.includes(key),
        ...('default' in prop ? { default: prop.default } : {}),
        schema: prop,
      },
    ];
  });
}

function checkConfigSchema(p: Problems, v: unknown): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) return p.add('yolop.config_schema', 'must be a JSON Schema object'), undefined;
  if (v.properties !== undefined) {
    if (!isObj(v.properties)) p.add('yolop.config_schema.properties', 'must be an object');
    else
      for (const [key, prop] of Object.entries(v.properties)) {
        const path = `yolop.config_schema.properties.${key}`;
        if (!isValidName(key)) p.add(path, 'config keys must match ^[A-Za-z0-9_-]+$');
        if (!isObj(prop)) {
          p.add(path, 'must be an object');
          continue;
        }
        if (prop.secret !== undefined && typeof prop.secret !== 'boolean') p.add(`${path}.secret`, 'must be true or false');
        if (prop.env !== undefined && (typeof prop.env !== 'string' || !ENV_NAME_RE.test(prop.env))) p.add(`${path}.env`, 'must be an environment variable name');
        if (prop.enum !== undefined && (!Array.isArray(prop.enum) || prop.enum.some((x) => typeof x !== 'string'))) p.add(`${path}.enum`, 'must be an array of strings');
      }
  }
  if (v.required !== undefined && (!Array.isArray(v.required) || v.required.some((x) => typeof x !== 'string'))) {
    p.add('yolop.config_schema.required', 'must be an array of strings');
  }
  return v;
}

/** Validate a parsed plugin.json value. Returns the manifest or the list of problems. */
export function validateManifest(value: unknown): { manifest: Manifest } | { problems: string[] } {
  const p = new Problems();
  if (!isObj(value)) return { problems: ['plugin.json must hold a JSON object'] };
  const name = optString(p, value, 'name', '');
  if (name === undefined) p.add('name', 'is required');
  else if (!isValidName(name)) p.add('name', `${JSON.stringify(name.slice(0, 80))} must match ^[A-Za-z0-9_-]+$ (at most 128 characters)`);
  const version = typeof value.version === 'string' ? value.version : undefined;
  const description = typeof value.description === 'string' ? value.description : undefined;
  const y = value.yolop;
  if (!isObj(y)) {
    p.add('yolop', 'is required (the yolop facet block)');
    return { problems: p.list };
  }
  const protocol = optString(p, y, 'protocol_version', 'yolop');
  if (protocol !== undefined) {
    const m = /^(\d+)(?:\.(\d+))?$/.exec(protocol);
    if (!m) p.add('yolop.protocol_version', `${JSON.stringify(protocol)} is not MAJOR.MINOR`);
    else if (Number(m[1]) !== HOST_PROTOCOL_MAJOR) p.add('yolop.protocol_version', `major ${m[1]} is not supported (the host speaks YEP ${HOST_PROTOCOL_MAJOR}.x)`);
  }
  const cs = y.capabilityServer;
  let server: CapabilityServer = { command: '', args: [] };
  if (!isObj(cs)) p.add('yolop.capabilityServer', 'is required');
  else {
    const command = optString(p, cs, 'command', 'yolop.capabilityServer');
    if (!command || command.trim() === '') p.add('yolop.capabilityServer.command', 'is required and must not be empty');
    const binaries = optString(p, cs, 'binaries', 'yolop.capabilityServer');
    server = { command: command ?? '', args: stringArray(p, cs.args, 'yolop.capabilityServer.args'), ...(binaries !== undefined ? { binaries } : {}) };
  }
  const facet: YolopFacet = {
    ...(protocol !== undefined ? { protocol_version: protocol } : {}),
    capabilityServer: server,
    ...(() => {
      const c = checkConfigSchema(p, y.config_schema);
      return c ? { config_schema: c } : {};
    })(),
    tools: parseTools(p, y.tools),
    prompt: optBool(p, y, 'prompt', 'yolop'),
    dynamic_prompt: optBool(p, y, 'dynamic_prompt', 'yolop'),
    mcpServers: parseMcpServers(p, y.mcpServers),
    hooks: parseHooks(p, y.hooks),
    commands: parseCommands(p, y.commands),
    status: optBool(p, y, 'status', 'yolop'),
    skills: optBool(p, y, 'skills', 'yolop'),
    ui_ask: optBool(p, y, 'ui_ask', 'yolop'),
    trace: optBool(p, y, 'trace', 'yolop'),
  };
  const contributes =
    facet.tools.length > 0 ||
    facet.prompt ||
    facet.dynamic_prompt ||
    Object.keys(facet.mcpServers).length > 0 ||
    facet.hooks.length > 0 ||
    facet.commands.length > 0 ||
    facet.status ||
    facet.skills ||
    facet.trace;
  if (!contributes && p.list.length === 0) {
    p.add('yolop', 'contributes nothing: declare at least one of tools, prompt, dynamic_prompt, mcpServers, hooks, commands, status, skills or trace');
  }
  if (p.list.length > 0) return { problems: p.list };
  return {
    manifest: {
      name: name as string,
      ...(version !== undefined ? { version } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(value.engines !== undefined ? { engines: value.engines } : {}),
      yolop: facet,
    },
  };
}

/** Parse plugin.json text; throws E_MANIFEST listing every problem. `where` names the package. */
export function parseManifest(text: string, where: string): Manifest {
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (e) {
    if (e instanceof StrictJsonError) {
      throw new YepError('E_MANIFEST', `${where}/plugin.json is not valid: ${e.message}.`, { hint: 'Fix the file; `yep-ext doctor <dir>` checks a package before you install it.' });
    }
    throw e;
  }
  const result = validateManifest(value);
  if ('problems' in result) {
    const shown = result.problems.slice(0, 12).map((s) => `  - ${s}`);
    if (result.problems.length > 12) shown.push(`  - …and ${result.problems.length - 12} more`);
    throw new YepError('E_MANIFEST', `${where}/plugin.json is not a valid extension manifest:\n${shown.join('\n')}`, {
      hint: 'See the manifest rules in docs/formats.md; `yep-ext doctor <dir>` re-checks after each edit.',
      details: { problems: result.problems },
    });
  }
  return result.manifest;
}

/**
 * Read and validate `<dir>/plugin.json`. Synchronous reads on purpose: a manifest
 * is small (capped), and `list` reads one per installed extension, where
 * thread-pool round trips cost more than the reads (docs/performance.md).
 */
export async function loadManifest(dir: string): Promise<Manifest> {
  const file = join(dir, MANIFEST_FILE);
  // A FIFO, socket, device, directory or symlink here is refused (E_STATE) before any open that could block.
  const regular = { followSymlinks: false, hint: 'plugin.json must be a plain file (not a symlink, directory, FIFO or device).' };
  const info = inspectRegularFile(file, 'The manifest', regular);
  if (!info) {
    throw new YepError('E_MANIFEST', `No plugin.json in ${dir}.`, { hint: 'An extension package has a plugin.json with a "yolop" block at its root.' });
  }
  if (info.stat.size > MANIFEST_MAX_BYTES) throw new YepError('E_MANIFEST', `${file} is ${info.stat.size} bytes; manifests are capped at ${MANIFEST_MAX_BYTES}.`);
  const text = readRegularTextSync(file, 'The manifest', { ...regular, maxBytes: MANIFEST_MAX_BYTES });
  if (text === undefined) throw new YepError('E_MANIFEST', `No plugin.json in ${dir}.`);
  return parseManifest(text, dir);
}
