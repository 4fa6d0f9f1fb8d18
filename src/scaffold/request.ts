/**
 * `yep-ext new` flags -> ScaffoldSpec. Everything a user can get wrong is caught
 * here, before a single file is rendered, so a refused request writes nothing.
 * The rules are the host's (names, hook events, contributions: host-compat §2)
 * plus what the templates need (prompt text they can embed, Cargo-safe names).
 */
import { YepError } from '../core/errors.js';
import { HOOK_EVENTS, type HookEvent } from '../core/package/manifest.js';
import { CRATE_PREFIX, assertValidName, isValidName } from '../core/package/names.js';
import { DEFAULT_LANGUAGE, LANGUAGES, type Language, languageOf } from './languages.js';

export { DEFAULT_LANGUAGE, LANGUAGES, type Language, languageOf };

/**
 * The tool a package gets when nothing else was asked for (`yep-ext new weather`): one
 * sample tool named after the extension, so the package works and doctor passes at once.
 */
export function sampleToolName(extension: string): string {
  return extension;
}

export interface HookSpec {
  event: HookEvent;
  glob: string;
}

export interface ConfigFieldSpec {
  key: string;
  secret: boolean;
  /** Environment variable the host injects the value into. Always set for a secret (derived when not given). */
  env?: string;
  /** True when `env` was derived (a secret given without env=). */
  envDerived?: boolean;
}

/** A validated scaffold request: exactly the facets the package will declare. */
export interface ScaffoldSpec {
  name: string;
  language: Language;
  tools: string[];
  hooks: HookSpec[];
  commands: string[];
  /** Static prompt text (`--prompt`), non-empty when present. */
  prompt?: string;
  /** True when no contribution was asked for and the package got the sample tool. */
  sampleTool?: boolean;
  dynamicPrompt: boolean;
  status: boolean;
  skills: boolean;
  config: ConfigFieldSpec[];
}

/** The raw request, as flags give it (the programmatic API takes the same shape). */
export interface ScaffoldInput {
  name: string;
  language?: string;
  tools?: string[];
  hooks?: string[];
  commands?: string[];
  prompt?: string;
  dynamicPrompt?: boolean;
  status?: boolean;
  skills?: boolean;
  config?: string[];
}

/** The flags that make a contribution, for the "nothing requested" message. */
const CONTRIBUTION_FLAGS = [
  '--tool NAME',
  '--hook pre_tool_use|post_tool_use[:GLOB]',
  '--command NAME',
  '--prompt TEXT',
  '--dynamic-prompt',
  '--status',
  '--skills',
] as const;

const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Tool-name globs: the host knows only `*` as a wildcard, anchored and case-sensitive. */
const GLOB_RE = /^[A-Za-z0-9_.:*-]+$/;
const GLOB_MAX = 128;
const PROMPT_MAX = 64 * 1024;
/** Control characters other than tab and newline: a prompt has no use for them and a terminal would act on them. */
// eslint-disable-next-line no-control-regex
const PROMPT_CONTROL_RE = /[\u0000-\u0008\u000b-\u001f\u007f]/;
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Cargo refuses these as binary target names (they collide with its build directories). */
const CARGO_RESERVED_BINS = ['build', 'deps', 'examples', 'incremental'];

const CONFIG_SYNTAX = '--config FIELD[:secret][:env=NAME], e.g. --config endpoint or --config token:secret:env=API_TOKEN';
const HOOK_SYNTAX = '--hook pre_tool_use or --hook post_tool_use:GLOB (GLOB defaults to *, e.g. --hook pre_tool_use:bash)';

function usage(message: string, hint: string): YepError {
  return new YepError('E_USAGE', message, { hint });
}

function show(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** assertValidName with a hint for `new` (the shared one points to `yep-ext list`, which is no help here). */
function validName(value: string, what: string, hint: string): string {
  try {
    return assertValidName(value, what);
  } catch (e) {
    throw new YepError('E_NAME', (e as Error).message, { hint });
  }
}

/** The hint for a bad extension name: `new dir/name` most likely meant --dir. */
function extensionNameHint(raw: string): string {
  const slash = raw.lastIndexOf('/');
  const base = raw.slice(slash + 1);
  if (slash > 0 && isValidName(base)) return `To create it in another directory, use --dir: \`yep-ext new ${base} --dir ${raw.slice(0, slash)}\`.`;
  return 'Use letters, digits, _ and -, e.g. `yep-ext new my-ext --tool greet`.';
}

function uniqueNames(values: readonly string[], what: string, flag: string): string[] {
  const seen = new Set<string>();
  for (const v of values) {
    validName(v, `${what} name`, `Use letters, digits, _ and - (the host's rule), e.g. ${flag} ${what === 'tool' ? 'forecast' : 'ship'}.`);
    if (seen.has(v)) throw usage(`${flag} ${v} is given twice.`, `Each ${what} name must be unique (the host refuses duplicates).`);
    seen.add(v);
  }
  return [...values];
}

/** `pre_tool_use` | `post_tool_use:GLOB` -> HookSpec. */
export function parseHookFlag(text: string): HookSpec {
  const colon = text.indexOf(':');
  const event = colon === -1 ? text : text.slice(0, colon);
  const glob = colon === -1 ? '*' : text.slice(colon + 1);
  if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
    throw usage(`--hook ${show(text)}: unknown event ${show(event)}; the host fires ${HOOK_EVENTS.join(' and ')}.`, `Use ${HOOK_SYNTAX}.`);
  }
  if (glob === '' || glob.length > GLOB_MAX || !GLOB_RE.test(glob)) {
    throw usage(
      `--hook ${show(text)}: ${glob === '' ? 'the tool-name glob after ":" is empty' : `${show(glob)} is not a tool-name glob`}.`,
      `A glob is a tool name where * matches any run of characters (no ?, [] or spaces; at most ${GLOB_MAX} characters). Use ${HOOK_SYNTAX}.`,
    );
  }
  return { event: event as HookEvent, glob };
}

/** The env variable a secret gets when `env=` is not given: <NAME>_<FIELD>, upper-cased, `-` -> `_`. */
export function defaultSecretEnv(extension: string, key: string): string {
  const env = `${extension}_${key}`.toUpperCase().replace(/-/g, '_');
  return ENV_NAME_RE.test(env) ? env : `EXT_${env}`;
}

/** `FIELD[:secret][:env=NAME]` -> ConfigFieldSpec. */
export function parseConfigFlag(text: string, extension: string): ConfigFieldSpec {
  const [key = '', ...parts] = text.split(':');
  if (!isValidName(key)) {
    throw usage(`--config ${show(text)}: the field name ${show(key)} must match ^[A-Za-z0-9_-]+$.`, `Use ${CONFIG_SYNTAX}.`);
  }
  let secret = false;
  let env: string | undefined;
  for (const part of parts) {
    if (part === 'secret' && !secret) secret = true;
    else if (part.startsWith('env=') && env === undefined) {
      env = part.slice(4);
      if (!ENV_NAME_RE.test(env)) {
        throw usage(
          `--config ${show(text)}: ${show(env)} is not an environment variable name.`,
          `Names are letters, digits and _, not starting with a digit. Use ${CONFIG_SYNTAX}.`,
        );
      }
    } else {
      throw usage(
        `--config ${show(text)}: ${show(part)} is not understood${part === 'secret' || part.startsWith('env=') ? ' (given twice)' : ''}.`,
        `Use ${CONFIG_SYNTAX}.`,
      );
    }
  }
  // The host hands a secret to the server only through its env variable: without one it could never arrive.
  if (secret && env === undefined) return { key, secret, env: defaultSecretEnv(extension, key), envDerived: true };
  return { key, secret, ...(env !== undefined ? { env } : {}) };
}

function checkPrompt(text: string): string {
  if (text.trim() === '') throw usage('--prompt is empty.', 'Give the text the server adds to the system prompt, or leave --prompt out.');
  if (text.length > PROMPT_MAX)
    throw usage(
      `--prompt is ${text.length} characters long (at most ${PROMPT_MAX}).`,
      'Keep the static prompt short; use --dynamic-prompt to compute it at run time.',
    );
  if (PROMPT_CONTROL_RE.test(text) || LONE_SURROGATE_RE.test(text)) {
    throw usage('--prompt holds control characters or invalid Unicode.', 'Use plain text (tabs and newlines are fine).');
  }
  return text;
}

/** Whether a request asks for anything the host counts as a contribution. */
export function hasContribution(input: {
  tools?: readonly unknown[];
  hooks?: readonly unknown[];
  commands?: readonly unknown[];
  prompt?: string | undefined;
  dynamicPrompt?: boolean | undefined;
  status?: boolean | undefined;
  skills?: boolean | undefined;
}): boolean {
  return Boolean(
    input.tools?.length || input.hooks?.length || input.commands?.length || input.prompt !== undefined || input.dynamicPrompt || input.status || input.skills,
  );
}

/** Validate a request. Throws E_NAME / E_USAGE, naming the flag at fault. */
export function parseScaffoldRequest(input: ScaffoldInput): ScaffoldSpec {
  const raw = input.name.trim();
  // The crate spelling means the same extension everywhere else in yep-ext (enable, doctor…).
  const name = validName(
    raw.startsWith(CRATE_PREFIX) && raw.length > CRATE_PREFIX.length ? raw.slice(CRATE_PREFIX.length) : raw,
    'extension name',
    extensionNameHint(raw),
  );
  const language = input.language === undefined ? DEFAULT_LANGUAGE : languageOf(input.language);
  if (language === undefined) {
    throw usage(
      `--language ${show(String(input.language))} is not supported.`,
      `Choose one of ${LANGUAGES.join(', ')} (or ts, py, rs; default ${DEFAULT_LANGUAGE}).`,
    );
  }
  if (language === 'rust' && CARGO_RESERVED_BINS.includes(name)) {
    throw usage(`"${name}" cannot be a Rust binary name: Cargo reserves ${CARGO_RESERVED_BINS.join(', ')}.`, 'Pick another name, or another --language.');
  }
  const tools = uniqueNames(input.tools ?? [], 'tool', '--tool');
  const commands = uniqueNames(input.commands ?? [], 'command', '--command');
  const hooks: HookSpec[] = [];
  for (const text of input.hooks ?? []) {
    const hook = parseHookFlag(text);
    if (hooks.some((h) => h.event === hook.event && h.glob === hook.glob))
      throw usage(`--hook ${text} is given twice.`, 'Each hook subscription needs to be given once.');
    hooks.push(hook);
  }
  const config: ConfigFieldSpec[] = [];
  for (const text of input.config ?? []) {
    const field = parseConfigFlag(text, name);
    if (config.some((c) => c.key === field.key)) throw usage(`--config ${field.key} is given twice.`, 'Each config field needs to be given once.');
    config.push(field);
  }
  const prompt = input.prompt === undefined ? undefined : checkPrompt(input.prompt);
  const spec: ScaffoldSpec = {
    name,
    language,
    tools,
    hooks,
    commands,
    ...(prompt !== undefined ? { prompt } : {}),
    dynamicPrompt: input.dynamicPrompt ?? false,
    status: input.status ?? false,
    skills: input.skills ?? false,
    config,
  };
  // The host refuses a manifest that contributes nothing (config alone is not a contribution),
  // so a request that asks for none gets the one sample tool, as `cargo new` gives a hello world.
  if (!hasContribution(spec)) {
    spec.tools = [validName(sampleToolName(name), 'tool name', `Pass --tool NAME (${CONTRIBUTION_FLAGS.join(', ')}).`)];
    spec.sampleTool = true;
  }
  return spec;
}
