/**
 * plugin.json -> Manifest, by the host's rules (host-compat §2; the rules themselves
 * are the zod schemas of manifest-schema.ts). This module is what every command
 * loads, so it judges without zod: the check generated from those schemas
 * (plugin-check.generated.ts) plus the rules JSON Schema cannot say
 * (manifest-rules.ts). A manifest it rejects goes to manifest-validate.ts (zod)
 * for the full verdict and every problem at once.
 */
import { inspectRegularFile, readRegularTextSync } from '../fs/read-regular-file.js';
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { parseStrictJson, StrictJsonError } from './json-strict.js';
import { HOOK_EVENTS, rulesHold } from './manifest-rules.js';
import { checkPluginJson } from './plugin-check.generated.js';
import { readSkillFiles, type SkillFile } from './skill-files.js';

export { HOOK_EVENTS };

export const MANIFEST_FILE = 'plugin.json';
/** A manifest larger than this is refused before parsing (hardening D28). */
const MANIFEST_MAX_BYTES = 1024 * 1024;
export type HookEvent = (typeof HOOK_EVENTS)[number];

interface ToolDecl {
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
  /**
   * Set when plugin.json gives no `type` and `type` was taken from the keys (a `url` and no
   * `command`: http). yolop's own plugin.json reader, as its source reads, defaults `type`
   * to stdio and refuses such a server (docs/formats.md, "MCP servers").
   */
  typeInferred?: true;
  command?: string;
  args: string[];
  env: Record<string, string>;
  url?: string;
  headers: Record<string, string>;
}

interface CommandArgDecl {
  name: string;
  description?: string;
  required: boolean;
}

interface CommandDecl {
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

interface CapabilityServer {
  command: string;
  args: string[];
  binaries?: string;
  /**
   * yep-ext: per-target SHA-256 of the prebuilt artifact (target triple -> 64 lowercase
   * hex), inside the checksummed crate (docs/binaries.md). A sibling of `binaries`,
   * which the host ignores.
   */
  binary_sha256?: Record<string, string>;
}

interface YolopFacet {
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
   * The top-level `engines` value as written: the schema accepts any value there
   * (the host ignores it), so it never makes a manifest invalid; `engines.yolop`
   * is judged by agent/engines.ts, where a malformed range is a warning.
   */
  engines?: unknown;
  yolop: YolopFacet;
  /**
   * Not a plugin.json key: the files of the package's `skills/` directory, read beside the
   * manifest by loadManifest when `yolop.skills` is on (skill-files.ts). The grant pins them:
   * the host mounts them for the model. Absent when the manifest was parsed from text alone.
   */
  skill_files?: SkillFile[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
// The reader below runs on values manifestProblems found valid: it only fills in
// the host's defaults (null counts as absent) and never judges.
const opt = <T>(v: unknown): T | undefined => (v === null ? undefined : (v as T | undefined));
const optional = <K extends string, T>(key: K, v: T | undefined): { [P in K]?: T } => (v === undefined ? {} : ({ [key]: v } as { [P in K]?: T }));

/** Digests are compared as lower-case hex. */
const lowerHexValues = (m: Record<string, string> | undefined) =>
  m === undefined ? undefined : Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.toLowerCase()]));

function toManifest(value: Obj): Manifest {
  const y = value.yolop as Obj;
  const cs = y.capabilityServer as Obj;
  const configSchema = opt<Record<string, unknown>>(y.config_schema);
  const mcp = isObj(y.mcpServers) ? (y.mcpServers as Record<string, Obj>) : {};
  return {
    name: value.name as string,
    ...optional('version', opt<string>(value.version)),
    ...optional('description', opt<string>(value.description)),
    ...optional('engines', opt<unknown>(value.engines)),
    yolop: {
      ...optional('protocol_version', opt<string>(y.protocol_version)),
      capabilityServer: {
        command: cs.command as string,
        args: opt<string[]>(cs.args) ?? [],
        ...optional('binaries', opt<string>(cs.binaries)),
        ...optional('binary_sha256', lowerHexValues(opt<Record<string, string>>(cs.binary_sha256))),
      },
      ...optional('config_schema', configSchema),
      tools: (opt<Obj[]>(y.tools) ?? []).map((t) => ({
        name: t.name as string,
        ...optional('description', opt<string>(t.description)),
        schema: opt<Record<string, unknown>>(t.schema) ?? { type: 'object' },
        never_defer: opt<boolean>(t.never_defer) ?? false,
      })),
      prompt: opt<boolean>(y.prompt) ?? false,
      dynamic_prompt: opt<boolean>(y.dynamic_prompt) ?? false,
      mcpServers: Object.fromEntries(
        Object.entries(mcp).map(([name, s]) => {
          const command = opt<string>(s.command);
          const url = opt<string>(s.url);
          const written = opt<'stdio' | 'http'>(s.type);
          const type = written ?? (url !== undefined && command === undefined ? 'http' : 'stdio');
          const decl: McpServerDecl = {
            type,
            ...(written === undefined && type === 'http' ? { typeInferred: true as const } : {}),
            ...optional('command', command),
            args: opt<string[]>(s.args) ?? [],
            env: { ...(opt<Record<string, string>>(s.env) ?? {}) },
            ...optional('url', url),
            headers: { ...(opt<Record<string, string>>(s.headers) ?? {}) },
          };
          return [name, decl];
        }),
      ),
      hooks: (opt<Obj[]>(y.hooks) ?? []).map((h) => ({
        event: h.event as HookEvent,
        tool_name_glob: opt<string>(h.tool_name_glob) ?? '*',
        timeout_ms: opt<number>(h.timeout_ms) ?? 5000,
        on_error: opt<'warn' | 'block'>(h.on_error) ?? 'warn',
      })),
      commands: (opt<Obj[]>(y.commands) ?? []).map((c) => ({
        name: c.name as string,
        ...optional('description', opt<string>(c.description)),
        args: (opt<Obj[]>(c.args) ?? []).map((a) => ({
          name: a.name as string,
          ...optional('description', opt<string>(a.description)),
          required: opt<boolean>(a.required) ?? false,
        })),
      })),
      status: opt<boolean>(y.status) ?? false,
      skills: opt<boolean>(y.skills) ?? false,
      ui_ask: opt<boolean>(y.ui_ask) ?? false,
      trace: opt<boolean>(y.trace) ?? false,
    },
  };
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

/** The parsed value, when the quick verdict accepts it: the generated check, then the rules JSON Schema cannot say. */
export function quickAccept(value: unknown): value is Obj {
  return isObj(value) && checkPluginJson(value) && rulesHold(value);
}

/** A valid value as a Manifest (defaults filled in). Only for values the verdict accepted. */
export function manifestOf(value: unknown): Manifest {
  return toManifest(value as Obj);
}

/** E_MANIFEST listing `problems` (the first of `total`). */
export function manifestError(where: string, problems: string[], total: number): YepError {
  const shown = problems.slice(0, 12).map((s) => `  - ${s}`);
  if (total > 12) shown.push(`  - …and ${total - 12} more`);
  return new YepError('E_MANIFEST', `${where}/plugin.json is not a valid extension manifest:\n${shown.join('\n')}`, {
    hint: 'See the manifest rules in docs/formats.md; `yep-ext doctor <dir>` re-checks after each edit.',
    details: { problems, ...(total > problems.length ? { problem_count: total } : {}) },
  });
}

function tooLarge(file: string, bytes: number): YepError {
  return new YepError('E_MANIFEST', `${file} is ${bytes} bytes; manifests are capped at ${MANIFEST_MAX_BYTES}.`, {
    hint: 'A manifest declares; it does not carry data. Move large text (prompts, schemas) into files the server reads.',
  });
}

/** plugin.json text as a JSON value: the size cap, then strict JSON (json-strict.ts). Throws E_MANIFEST. */
export function manifestValue(text: string, where: string): unknown {
  // Callers of the library may hand over any text: the cap holds here too, not only for files.
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MANIFEST_MAX_BYTES) throw tooLarge(`${where}/plugin.json`, bytes);
  try {
    return parseStrictJson(text);
  } catch (e) {
    if (e instanceof StrictJsonError) {
      throw new YepError('E_MANIFEST', `${where}/plugin.json is not valid: ${e.message}.`, {
        hint: 'Fix the file; `yep-ext doctor <dir>` checks a package before you install it.',
      });
    }
    throw e;
  }
}

/**
 * Read and validate `<dir>/plugin.json`. Synchronous reads on purpose: a manifest
 * is small (capped), and `list` reads one per installed extension, where
 * thread-pool round trips cost more than the reads. A valid
 * manifest is judged by the generated check alone; only a rejected one loads the
 * zod schemas (manifest-validate.ts), for the verdict in full and the messages.
 */
export async function loadManifest(dir: string): Promise<Manifest> {
  const file = join(dir, MANIFEST_FILE);
  // A FIFO, socket, device, directory or symlink here is refused (E_STATE) before any open that could block.
  const regular = { followSymlinks: false, hint: 'plugin.json must be a plain file (not a symlink, directory, FIFO or device).' };
  const info = inspectRegularFile(file, 'The manifest', regular);
  if (!info) {
    throw new YepError('E_MANIFEST', `No plugin.json in ${dir}.`, { hint: 'An extension package has a plugin.json with a "yolop" block at its root.' });
  }
  if (info.stat.size > MANIFEST_MAX_BYTES) throw tooLarge(file, info.stat.size);
  const text = readRegularTextSync(file, 'The manifest', { ...regular, maxBytes: MANIFEST_MAX_BYTES });
  if (text === undefined) throw new YepError('E_MANIFEST', `No plugin.json in ${dir}.`);
  const value = manifestValue(text, dir);
  if (quickAccept(value)) return withSkillFiles(toManifest(value), dir);
  // The zod schemas only (manifest-validate.ts's verdict, inlined), loaded for a rejected
  // manifest alone: zod is a file of its own in the bundle (lib/zod.cjs, scripts/build-cli.mjs).
  const { manifestProblems } = await import('./manifest-schema.js');
  const { problems, total } = manifestProblems(value);
  if (total > 0) throw manifestError(dir, problems, total);
  return withSkillFiles(manifestOf(value), dir);
}

/** A manifest that declares `skills`, with the files the host would mount from `<dir>/skills` (the grant pins them). */
function withSkillFiles(manifest: Manifest, dir: string): Manifest {
  return manifest.yolop.skills ? { ...manifest, skill_files: readSkillFiles(dir) } : manifest;
}
