/**
 * The administrator's policy file (docs/policy.md): TOML text -> PolicyLayer,
 * and layers -> the effective Policy. The user's file can only tighten the
 * system one: allow-lists intersect (each layer's list must admit), deny-lists
 * union, minimum ages take the max, "require" booleans OR, and the maximum grant
 * takes the narrower of each facet. Parsing is strict: an unknown section or key,
 * a wrong type or a bad value is an error naming the file and the line (an
 * ignored rule would be a silently loosened policy). Pure: no I/O.
 */
import { parse as parseToml } from 'smol-toml';
import { normalizeIndexUrl } from '../context.js';
import { YepError } from '../errors.js';
import { KINDS } from '../sources/index.js';
import { durationMs } from '../text/duration.js';

/** How far hooks may go: none at all, scoped only (no match-all glob), or any. */
type HookLevel = 'none' | 'scoped' | 'any';
const HOOK_LEVELS: readonly HookLevel[] = ['none', 'scoped', 'any'];

/** The facets of the maximum grant that are plain allow/deny switches. */
const GRANT_SWITCHES = ['mcp_servers', 'prompts', 'dynamic_prompts', 'commands', 'secrets', 'server_outside_package'] as const;
type GrantSwitch = (typeof GRANT_SWITCHES)[number];

interface MaxGrant {
  hooks: HookLevel;
  /** true = allowed. */
  switches: Record<GrantSwitch, boolean>;
}

/** One file's rules; absent = that file says nothing about it. */
export interface PolicyLayer {
  file: string;
  kinds?: string[];
  index_urls?: string[];
  git_hosts?: string[];
  allow?: string[];
  deny?: string[];
  /** Extension name -> the only content hash admitted for it (`policy init --from-lock`). */
  pins?: Record<string, string>;
  min_age_ms?: number;
  min_age?: string;
  require_in_crate_binary?: boolean;
  /** false = a server is never built from source (a cargo build runs the crate's code). */
  build_from_source?: boolean;
  hooks?: HookLevel;
  grant?: Partial<Record<GrantSwitch, boolean>>;
}

/** The effective policy: every layer merged, tighten-only. */
export interface Policy {
  /** The files it was read from, system first (empty = no policy). */
  files: string[];
  /** The user's own file (<config>/yep-ext-policy.toml) when it is one of them: its refusals are not the administrator's. */
  user_file?: string;
  /** Allowed source kinds / index roots / git hosts (undefined = any). */
  kinds?: string[];
  index_urls?: string[];
  git_hosts?: string[];
  /** Name globs: a name must match some glob of EVERY list (one list per layer that has one). */
  allow: { file: string; globs: string[] }[];
  deny: { file: string; glob: string }[];
  /** Content-hash pins: a name must be pinned, to its hash, in every layer that pins. */
  pins: { file: string; pins: Record<string, string> }[];
  min_age_ms: number;
  /** The file whose min_age is the effective one. */
  min_age_file?: string;
  require_in_crate_binary: boolean;
  /** Builds from source allowed (with the run's consent); false when any file forbids them. */
  build_from_source: boolean;
  /** The first file that forbids them. */
  build_from_source_file?: string;
  max_grant: MaxGrant;
}

const EMPTY_POLICY: Policy = {
  files: [],
  allow: [],
  deny: [],
  pins: [],
  min_age_ms: 0,
  require_in_crate_binary: false,
  build_from_source: true,
  max_grant: { hooks: 'any', switches: Object.fromEntries(GRANT_SWITCHES.map((k) => [k, true])) as Record<GrantSwitch, boolean> },
};

const SCHEMA: Record<string, readonly string[]> = {
  sources: ['kinds', 'index_urls', 'git_hosts'],
  names: ['allow', 'deny'],
  cooldown: ['min_age'],
  binaries: ['require_in_crate', 'build_from_source'],
  grant: ['hooks', ...GRANT_SWITCHES],
  pins: [],
};
const NAME_GLOB_RE = /^[A-Za-z0-9_*?-]+$/;
const HASH_RE = /^sha256:[0-9a-f]{64}$/;

/** The 1-based line of `key` in `[section]` (or of the section header), for messages. */
function lineOf(text: string, section: string, key?: string): number {
  const lines = text.split('\n');
  let current = '';
  let header = 1;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    const h = /^\[\s*([A-Za-z0-9_.-]+)\s*\]/.exec(line);
    if (h) {
      current = h[1]!;
      if (current === section) header = i + 1;
      continue;
    }
    if (key === undefined || current !== section) continue;
    const k = /^("?)([A-Za-z0-9_-]+)\1\s*=/.exec(line);
    if (k && k[2] === key) return i + 1;
  }
  return header;
}

function malformed(file: string, line: number, why: string): YepError {
  return new YepError('E_STATE', `The policy file ${file} is malformed (line ${line}): ${why}.`, {
    hint: `Fix ${file} (docs/policy.md lists every rule). yep-ext never ignores a policy it cannot read.`,
    details: { file, line },
  });
}

/** Parse one policy file's text. Throws E_STATE naming the file and line. */
export function parsePolicy(text: string, file: string): PolicyLayer {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const line = typeof (e as { line?: unknown }).line === 'number' ? (e as { line: number }).line : 1;
    throw malformed(file, line, `invalid TOML (${((e as Error).message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '')})`);
  }
  const layer: PolicyLayer = { file };
  for (const [section, body] of Object.entries(doc)) {
    const keys = SCHEMA[section];
    if (!keys)
      throw malformed(
        file,
        lineOf(text, section),
        `unknown section or key "${section}" (known: ${Object.keys(SCHEMA)
          .map((s) => `[${s}]`)
          .join(', ')})`,
      );
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw malformed(file, lineOf(text, section), `"${section}" must be a table ([${section}])`);
    const at = (key?: string) => lineOf(text, section, key);
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      const bad = (why: string) => malformed(file, at(key), `${section}.${key} ${why}`);
      const strings = (): string[] => {
        if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw bad('must be an array of strings');
        return value as string[];
      };
      const bool = (): boolean => {
        if (typeof value !== 'boolean') throw bad('must be true or false');
        return value;
      };
      if (section === 'pins') {
        if (typeof value !== 'string' || !HASH_RE.test(value)) throw bad('must be a content hash "sha256:<64 hex>"');
        layer.pins = { ...(layer.pins ?? {}), [key]: value };
        continue;
      }
      if (!keys.includes(key)) throw malformed(file, at(key), `unknown key "${key}" in [${section}] (known: ${keys.join(', ')})`);
      const id = `${section}.${key}`;
      if (id === 'sources.kinds') {
        const kinds = strings();
        const unknown = kinds.find((k) => !(KINDS as string[]).includes(k));
        if (unknown !== undefined) throw bad(`names an unknown source kind ${JSON.stringify(unknown)} (kinds: ${KINDS.join(', ')})`);
        layer.kinds = kinds;
      } else if (id === 'sources.index_urls') {
        layer.index_urls = strings().map((u) => normalizeIndexUrl(u));
      } else if (id === 'sources.git_hosts') {
        layer.git_hosts = strings().map((h) => h.trim().toLowerCase());
      } else if (section === 'names') {
        const globs = strings();
        const wrong = globs.find((g) => !NAME_GLOB_RE.test(g));
        if (wrong !== undefined) throw bad(`has ${JSON.stringify(wrong)}, which is not a name glob (letters, digits, _ and -, with * and ?)`);
        layer[key as 'allow' | 'deny'] = globs;
      } else if (id === 'cooldown.min_age') {
        const ms = typeof value === 'string' ? durationMs(value) : undefined;
        if (ms === undefined) throw bad('must be a duration such as "90m", "36h", "3d" or "1w"');
        layer.min_age_ms = ms;
        layer.min_age = value as string;
      } else if (id === 'binaries.require_in_crate') {
        layer.require_in_crate_binary = bool();
      } else if (id === 'binaries.build_from_source') {
        layer.build_from_source = bool();
      } else if (id === 'grant.hooks') {
        if (typeof value !== 'string' || !(HOOK_LEVELS as string[]).includes(value)) throw bad(`must be one of ${HOOK_LEVELS.map((l) => `"${l}"`).join(', ')}`);
        layer.hooks = value as HookLevel;
      } else {
        layer.grant = { ...(layer.grant ?? {}), [key as GrantSwitch]: bool() };
      }
    }
  }
  return layer;
}

const intersect = (a: string[] | undefined, b: string[] | undefined): string[] | undefined =>
  a === undefined ? b : b === undefined ? a : a.filter((x) => b.includes(x));

/** Merge layers, first = system. Each later layer can only tighten. */
export function mergePolicy(layers: PolicyLayer[]): Policy {
  const p: Policy = structuredClone(EMPTY_POLICY);
  for (const l of layers) {
    p.files.push(l.file);
    const kinds = intersect(p.kinds, l.kinds);
    const index_urls = intersect(p.index_urls, l.index_urls);
    const git_hosts = intersect(p.git_hosts, l.git_hosts);
    if (kinds) p.kinds = kinds;
    if (index_urls) p.index_urls = index_urls;
    if (git_hosts) p.git_hosts = git_hosts;
    if (l.allow) p.allow.push({ file: l.file, globs: l.allow });
    for (const glob of l.deny ?? []) p.deny.push({ file: l.file, glob });
    if (l.pins) p.pins.push({ file: l.file, pins: l.pins });
    if (l.min_age_ms !== undefined && l.min_age_ms > p.min_age_ms) {
      p.min_age_ms = l.min_age_ms;
      p.min_age_file = l.file;
    }
    p.require_in_crate_binary ||= l.require_in_crate_binary === true;
    if (l.build_from_source === false && p.build_from_source) {
      p.build_from_source = false;
      p.build_from_source_file = l.file;
    }
    if (l.hooks && HOOK_LEVELS.indexOf(l.hooks) < HOOK_LEVELS.indexOf(p.max_grant.hooks)) p.max_grant.hooks = l.hooks;
    for (const k of GRANT_SWITCHES) if (l.grant?.[k] === false) p.max_grant.switches[k] = false;
  }
  return p;
}

/** True when `name` matches the glob (`*` any run, `?` one character; names have no other specials). */
export function nameMatches(glob: string, name: string): boolean {
  const re = new RegExp(`^${glob.replace(/[*?]/g, (c) => (c === '*' ? '.*' : '.'))}$`);
  return re.test(name);
}
