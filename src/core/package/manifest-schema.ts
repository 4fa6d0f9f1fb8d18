/**
 * plugin.json as zod schemas, by the host's rules (host-compat §2): unknown keys are
 * ignored at the top level, in `yolop`, in `capabilityServer` and in `tools[]`, and
 * refused in `hooks[]`, `mcpServers.*`, `commands[]` and `commands[].args[]`; the
 * type of every known key is enforced; `null` counts as absent; a manifest must
 * contribute something. Stricter than the host where a name becomes a path or a
 * label (tool, command, server and config-key names pass the name rule).
 *
 * One definition gives the verdict, the messages authors read (`path: message`,
 * every problem at once) and, through plugin-json-schema.ts, `schema/plugin/v1.json`
 * (the JSON Schema editors use) and the generated check the commands run first
 * (plugin-check.generated.ts: a valid manifest never loads zod). Rules JSON Schema
 * cannot say live in manifest-rules.ts. Shaping the valid value into a `Manifest`
 * (defaults) is manifest.ts's job.
 */
import {
  array,
  boolean,
  enum as enumOf,
  globalRegistry,
  int,
  looseObject,
  minLength,
  nullish,
  optional,
  positive,
  record,
  regex,
  strictObject,
  string,
  union,
  unknown,
  type ZodMiniType,
} from 'zod/mini';
import type { $ZodLooseShape, ParsePayload, SomeType } from 'zod/v4/core';
import { CONTRIBUTIONS, HOOK_EVENTS, HOST_PROTOCOL_MAJOR, contributes, duplicateNames, isAbsent, mcpServerLacks } from './manifest-rules.js';
import { NAME_MAX, NAME_RE } from './names.js';

/** At most this many problems are reported (the rest are counted): a hostile manifest must not make a huge error. */
export const MAX_PROBLEMS = 100;

const NAME_PATTERN = NAME_RE.source;
// Patterns, not code, wherever a rule can be one: they reach the JSON Schema, and so
// the generated check and the editors. FULL_NAME is names.ts's isValidName.
const FULL_NAME = new RegExp(`^[A-Za-z0-9_-]{1,${NAME_MAX}}$`);
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROTOCOL_RE = /^(\d+)(?:\.(\d+))?$/;
/** PROTOCOL_RE with major HOST_PROTOCOL_MAJOR (leading zeros allowed, as Number() reads them). */
const HOST_PROTOCOL = new RegExp(`^0*${HOST_PROTOCOL_MAJOR}(?:\\.\\d+)?$`);

// Messages that describe a whole container: zod reports them on an entry
// (`env.A`, `args[3]`), authors read them on the container (`env`, `args`).
const STRINGS = 'must be an array of strings';
const STRING_MAP = 'must be an object of strings';
const ENUM_STRINGS = 'must be an array of strings';
const SHA256_HEX = 'must be 64 hex digits (a SHA-256)';
const CONTAINER_MESSAGES = new Set([STRINGS, STRING_MAP, ENUM_STRINGS]);

const str = (what = 'must be a string') => string({ error: what });
const bool = () => nullish(boolean({ error: 'must be true or false' }));
const obj = <T extends $ZodLooseShape>(shape: T) => looseObject(shape, { error: 'must be an object' });
const strict = <T extends $ZodLooseShape>(shape: T) => strictObject(shape, { error: 'must be an object' });
const list = <T extends SomeType>(item: T) => array(item, { error: 'must be an array' });
const strings = () => nullish(array(string({ error: STRINGS }), { error: STRINGS }));
const stringMap = () => nullish(record(string(), string({ error: STRING_MAP }), { error: STRING_MAP }));
/** A name that becomes part of a path or a label: the host's name rule, at most NAME_MAX characters. */
const NAME_HINT = `must match ${NAME_PATTERN}`;

/** Attach what editors show (description, default) for schema/plugin/v1.json. */
function doc<T extends ZodMiniType>(schema: T, meta: { description?: string; default?: unknown }): T {
  globalRegistry.add(schema, meta);
  return schema;
}

/** Report duplicate `name`s in a list of objects at `<list>[i].name`. */
function uniqueNames(what: string) {
  return (ctx: ParsePayload<unknown[]>): void => {
    for (const i of duplicateNames(ctx.value)) {
      const name = (ctx.value[i] as { name: string }).name;
      ctx.issues.push({ code: 'custom', input: name, path: [i, 'name'], message: `duplicate ${what} ${JSON.stringify(name)}` });
    }
  };
}

const requiredString = (required: string) => string({ error: (i) => (isAbsent(i.input) ? required : 'must be a string') });

const capabilityServer = looseObject(
  {
    command: doc(requiredString('is required and must not be empty').check(regex(/\S/, { error: 'is required and must not be empty' })), {
      description: "The server's command: resolved on PATH with the package's bin/ first.",
    }),
    args: doc(strings(), { description: 'Arguments passed to the command.', default: [] }),
    binaries: doc(nullish(str()), {
      description: 'URL template of a prebuilt server: {name}, {version}, {target} (Rust target triple); a <url>.sha256 beside it is mandatory.',
    }),
    binary_sha256: doc(
      nullish(
        record(
          string().check(regex(/^[A-Za-z0-9_.-]{1,100}$/, { error: 'is not a target triple' })),
          string({ error: SHA256_HEX }).check(regex(/^[0-9a-fA-F]{64}$/, { error: SHA256_HEX })),
          {
            error: 'must be an object of target triple -> SHA-256 hex',
          },
        ),
      ),
      {
        description:
          'SHA-256 (hex) of each prebuilt server, by Rust target triple: inside the checksummed crate, so the download is checked against the registry (docs/binaries.md).',
      },
    ),
  },
  { error: 'is required' },
);

const configKey = `config keys ${NAME_HINT}`;
const configProperty = obj({
  secret: doc(optional(boolean({ error: 'must be true or false' })), {
    description: 'A credential: stored in connections.toml or the keychain, never in settings.',
  }),
  env: doc(optional(string({ error: 'must be an environment variable name' }).check(regex(ENV_NAME_RE, { error: 'must be an environment variable name' }))), {
    description: 'Also passed to the server as this environment variable.',
  }),
  enum: optional(array(string({ error: ENUM_STRINGS }), { error: ENUM_STRINGS })),
});

const configSchema = looseObject(
  {
    properties: optional(record(string().check(regex(FULL_NAME, { error: configKey })), configProperty, { error: 'must be an object' })),
    required: optional(array(string({ error: STRINGS }), { error: STRINGS })),
  },
  { error: 'must be a JSON Schema object' },
);

const tool = obj({
  name: requiredString('is required').check(
    minLength(1, { error: 'is required' }),
    regex(NAME_RE, { error: (i) => `${JSON.stringify(i.input)} ${NAME_HINT}` }),
  ),
  description: nullish(str()),
  schema: doc(nullish(record(string(), unknown(), { error: 'must be a JSON Schema object' })), {
    description: 'JSON Schema of the arguments.',
    default: { type: 'object' },
  }),
  never_defer: doc(bool(), { description: 'Always offered to the model (the host honours at most 8).', default: false }),
});

const positiveInt = 'must be a positive integer';
const hook = strict({
  event: enumOf(HOOK_EVENTS, { error: `must be one of ${HOOK_EVENTS.join(', ')}` }),
  tool_name_glob: doc(nullish(str().check(minLength(1, { error: 'must not be empty' }))), {
    description: 'Anchored, case-sensitive; only * is a wildcard.',
    default: '*',
  }),
  timeout_ms: doc(nullish(int({ error: positiveInt }).check(positive({ error: positiveInt }))), { default: 5000 }),
  on_error: doc(nullish(enumOf(['warn', 'block'], { error: 'must be "warn" or "block"' })), { default: 'warn' }),
});

const mcpServer = strict({
  type: doc(nullish(enumOf(['stdio', 'http'], { error: 'must be "stdio" or "http"' })), {
    description: 'Default: "http" when only url is given, else "stdio".',
  }),
  command: nullish(str()),
  args: strings(),
  env: stringMap(),
  url: nullish(str()),
  headers: stringMap(),
}).check((ctx) => {
  const lacks = mcpServerLacks(ctx.value);
  if (lacks === 'command') ctx.issues.push({ code: 'custom', input: ctx.value, path: ['command'], message: 'is required for a stdio server' });
  if (lacks === 'url') ctx.issues.push({ code: 'custom', input: ctx.value, path: ['url'], message: 'is required for an http server' });
});

const serverName = `server names ${NAME_HINT}`;
// The seed spec sketched `mcpServers: []`: an empty array means "none" (manifestProblems
// and the reader accept it; the JSON Schema leaves it out, so editors steer to the map).
const mcpServers = doc(
  nullish(
    record(string().check(regex(FULL_NAME, { error: serverName })), mcpServer, {
      error: 'must be an object mapping server names to definitions',
    }),
  ),
  { description: 'name -> server; surfaced to the agent as <extension>__<name>.' },
);

const commandArg = strict({
  name: requiredString('is required').check(minLength(1, { error: 'is required' })),
  description: nullish(str()),
  required: bool(),
});

const commandNameMessage = 'is required and must match ^[A-Za-z0-9_-]+$';
const command = strict({
  name: string({ error: commandNameMessage }).check(regex(FULL_NAME, { error: commandNameMessage })),
  description: nullish(str()),
  args: nullish(list(commandArg)),
});

const protocolVersion = doc(
  nullish(
    string({ error: 'must be a string' }).check(
      regex(HOST_PROTOCOL, {
        error: (i) => {
          const m = PROTOCOL_RE.exec(String(i.input));
          return m ? `major ${m[1]} is not supported (the host speaks YEP ${HOST_PROTOCOL_MAJOR}.x)` : `${JSON.stringify(i.input)} is not MAJOR.MINOR`;
        },
      }),
    ),
  ),
  { description: `YEP version the server speaks, MAJOR.MINOR; MAJOR must be ${HOST_PROTOCOL_MAJOR}.` },
);

const yolopShape = {
  protocol_version: protocolVersion,
  capabilityServer: doc(capabilityServer, { description: 'The YEP server the host spawns.' }),
  config_schema: doc(nullish(configSchema), { description: 'JSON Schema of the settings the extension takes (yolop keywords: secret, env).' }),
  tools: nullish(list(tool).check(uniqueNames('tool'))),
  prompt: doc(bool(), { description: 'The server sends a static prompt in the handshake.' }),
  dynamic_prompt: doc(bool(), { description: 'The server answers prompt/contribution on every turn.' }),
  mcpServers,
  hooks: nullish(list(hook)),
  commands: nullish(list(command).check(uniqueNames('command'))),
  status: bool(),
  skills: bool(),
  ui_ask: bool(),
  trace: bool(),
};

/**
 * `engines.yolop`, the agent versions a package runs on (an npm range, as in
 * package.json). The host ignores `engines`, and yep-ext treats a malformed value as
 * a warning (agent/engines.ts), never as an invalid manifest: so any value passes
 * here. The object branch is for editors (completion, the description); the
 * catch-all branch keeps every other value valid.
 */
const engines = doc(
  optional(
    union([
      looseObject({
        yolop: doc(nullish(string()), {
          description:
            'The yolop versions this package runs on, as an npm semver range (">=0.12", "^0.13"). yep-ext installs the newest version whose range admits the installed agent; a malformed range is a warning.',
        }),
      }),
      unknown(),
    ]),
  ),
  { description: 'Versions of the host this package needs. The host ignores it; yep-ext checks engines.yolop against the installed agent.' },
);

/** The whole of plugin.json. */
export const pluginManifestSchema = obj({
  name: doc(
    requiredString('is required').check(
      regex(FULL_NAME, { error: (i) => `${JSON.stringify(String(i.input).slice(0, 80))} ${NAME_HINT} (at most ${NAME_MAX} characters)` }),
    ),
    { description: 'The extension name: its directory in the store and its prefix in the agent.' },
  ),
  version: nullish(str()),
  description: nullish(str()),
  engines,
  yolop: looseObject(yolopShape, { error: 'is required (the yolop facet block)' }).check((ctx) => {
    if (!contributes(ctx.value)) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: `contributes nothing: declare at least one of ${CONTRIBUTIONS.slice(0, -1).join(', ')} or ${CONTRIBUTIONS.at(-1)}`,
      });
    }
  }),
});

function pathText(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : `${out === '' ? '' : '.'}${String(seg)}`;
  return out;
}

/**
 * Every problem with a parsed plugin.json value, as `path: message` lines (the
 * first MAX_PROBLEMS of `total`); none when the host would load it.
 */
export function manifestProblems(value: unknown): { problems: string[]; total: number } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problems: ['plugin.json must hold a JSON object'], total: 1 };
  const y = (value as { yolop?: unknown }).yolop;
  if (
    typeof y === 'object' &&
    y !== null &&
    Array.isArray((y as { mcpServers?: unknown }).mcpServers) &&
    (y as { mcpServers: unknown[] }).mcpServers.length === 0
  ) {
    value = { ...value, yolop: { ...y, mcpServers: undefined } };
  }
  const result = pluginManifestSchema.safeParse(value);
  if (result.success) return { problems: [], total: 0 };
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (path: ReadonlyArray<PropertyKey>, message: string): void => {
    const line = path.length === 0 ? message : `${pathText(path)}: ${message}`;
    if (!seen.has(line)) out.push(line);
    seen.add(line);
  };
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') for (const k of issue.keys) add([...issue.path, k], 'unknown key (the host refuses it)');
    else if (issue.code === 'invalid_key') add(issue.path, issue.issues[0]?.message ?? issue.message);
    // An entry of the wrong type (`args[3]`, `env.A`) is reported on its container.
    else if (CONTAINER_MESSAGES.has(issue.message) && issue.code === 'invalid_type' && issue.expected === 'string') add(issue.path.slice(0, -1), issue.message);
    else add(issue.path, issue.message);
  }
  return { problems: out.slice(0, MAX_PROBLEMS), total: out.length };
}
