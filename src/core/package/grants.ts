/**
 * Manifest -> Grant: the normalised, order-free statement of what an extension may
 * contribute to the host, the words its manifest gives the model included; its
 * fingerprint; and the classified diff between two grants. Spec D4: the manifest is
 * the approval boundary, so consent is decided on this data (never on rendered text).
 * Pure: no I/O, no printing. Rules: docs/grants.md.
 */
import { configFields, type HookEvent, type Manifest } from './manifest.js';
import type { SkillFile } from './skill-files.js';
import { sha256Hex } from '../fs/hash.js';

/** Bumped when the grant shape changes, so an old fingerprint can never match a new shape. */
const GRANT_FORMAT = 2 as const;
/** The shape before the grant held the model-facing text (tool descriptions, schemas, command text). */
const LEGACY_FORMAT = 1 as const;
/** The host honours at most this many `never_defer` tools per extension and silently defers the rest. */
const NEVER_DEFER_LIMIT = 8;
/** Above this glob-length product the coverage check gives up and answers "not provably narrower". */
const GLOB_WORK_LIMIT = 1_000_000;

/** The capability server as the host spawns it (argv, no shell). */
interface GrantServer {
  command: string;
  args: string[];
  /** URL template of a prebuilt server binary, when the manifest names one. */
  binaries?: string;
}

/** A JSON object as written in the manifest (a tool's argument schema). */
type JsonObject = Record<string, unknown>;

/**
 * A declared tool, with the words the model reads to choose it and fill its arguments:
 * its description and its argument schema (property names and descriptions included).
 */
export interface GrantTool {
  name: string;
  never_defer: boolean;
  /** Omitted when the manifest gives none (or an empty one): the model then reads no text. */
  description?: string;
  /** The argument schema as written (default `{"type":"object"}`). */
  schema: JsonObject;
}

/** A hook subscription. `match_all` is true when the glob is made only of `*` (it sees every tool call). */
export interface GrantHook {
  event: HookEvent;
  glob: string;
  timeout_ms: number;
  on_error: 'warn' | 'block';
  match_all: boolean;
}

/**
 * An MCP env entry or HTTP header. The literal value is not part of the grant (a package
 * may embed a publisher token, and the grant is printed and logged); its digest is, so a
 * changed value still changes the grant, and `refs` names the `${VAR}` references: which
 * of the user's environment variables the value forwards to the server.
 */
interface GrantOpaqueValue {
  name: string;
  /** `sha256:` of the literal value as written in the manifest. */
  value_digest: string;
  /** Environment variables referenced as `${NAME}` or `${NAME:-default}`, sorted, unique. */
  refs: string[];
}

/** A local MCP server the extension provides (spawned by the host). */
interface GrantStdioMcpServer {
  name: string;
  transport: 'stdio';
  command: string;
  args: string[];
  env: GrantOpaqueValue[];
}

/** A remote MCP server the extension provides (the host connects to it). */
interface GrantHttpMcpServer {
  name: string;
  transport: 'http';
  url: string;
  headers: GrantOpaqueValue[];
}

/** A provided MCP server, by transport shape; fields the transport does not use are not granted. */
export type GrantMcpServer = GrantStdioMcpServer | GrantHttpMcpServer;

/** A command argument; `description` is omitted when the manifest gives none. */
interface GrantCommandArg {
  name: string;
  required: boolean;
  description?: string;
}

/** A slash command (`<ext>:<name>`); args keep their order because they are positional. */
export interface GrantCommand {
  name: string;
  /** Omitted when the manifest gives none (or an empty one). */
  description?: string;
  args: GrantCommandArg[];
}

/** A config field. `secret` asks for a credential; `env` injects the value into the server's environment. */
export interface GrantConfigField {
  key: string;
  secret: boolean;
  env?: string;
  required: boolean;
}

/** What the server may add to the system prompt; the static text itself arrives at start, not in the manifest. */
interface GrantPrompt {
  static: boolean;
  dynamic: boolean;
}

/** The opt-in facets (spec D4). */
interface GrantOptIns {
  status: boolean;
  ui_ask: boolean;
  trace: boolean;
  skills: boolean;
}

/**
 * A file of the package's `skills/` directory (the host mounts it for the model): a regular
 * file by digest, with its text when it is small UTF-8; a symlink by target, and by the
 * digest and text of the file it reaches inside the package.
 */
type GrantSkillFile = SkillFile;

/** The normalised grant of one extension: plain JSON, every order-free list sorted. */
export interface Grant {
  format: typeof GRANT_FORMAT;
  name: string;
  server: GrantServer;
  tools: GrantTool[];
  hooks: GrantHook[];
  mcp_servers: GrantMcpServer[];
  prompt: GrantPrompt;
  commands: GrantCommand[];
  opt_ins: GrantOptIns;
  config: GrantConfigField[];
  /**
   * Present when `opt_ins.skills` is on and the package tree was read: every file of its
   * `skills/`, sorted by path. Absent in a grant approved before the skills were recorded
   * (its fingerprint is the one this grant has without them: `approvalOf`), and in one
   * derived from a manifest parsed from text alone.
   */
  skills?: GrantSkillFile[];
  /**
   * The package's own words: its `description` (shown beside it wherever the agent's model
   * lists extensions, `yolop extensions list --json`). Always present in a grant derived
   * now (`{}` when the manifest gives none); absent in one approved before it was recorded
   * (and so were `skills`): `approvalOf` knows that fingerprint.
   */
  package?: { description?: string };
}

/**
 * A grant approved before it held the model-facing text (format 1, still in older locks
 * and `.yep-grants` files): tools carry only a digest of their schema, commands no text.
 * Everything else is as in Grant.
 */
export interface LegacyGrant extends Omit<Grant, 'format' | 'tools' | 'commands' | 'skills' | 'package'> {
  format: typeof LEGACY_FORMAT;
  tools: { name: string; never_defer: boolean; schema_digest: string }[];
  commands: { name: string; args: { name: string; required: boolean }[] }[];
}

/**
 * The facets of a grant, in the order diffs list them. `text` is not a field of the grant
 * but the facet of its changes to the words the model reads (tool and command text).
 */
const GRANT_FACETS = ['server', 'tools', 'text', 'hooks', 'mcp_servers', 'prompt', 'commands', 'opt_ins', 'config'] as const;
type GrantFacet = (typeof GRANT_FACETS)[number];

/** Whether a change gives the extension more reach (consent needed), less, or neither. */
type GrantEffect = 'widening' | 'narrowing' | 'neutral';

/** A value on either side of a change: a whole item, a scalar, or an argv. */
export type GrantChangeValue = boolean | string | string[] | GrantTool | GrantHook | GrantMcpServer | GrantOpaqueValue | GrantCommand | GrantConfigField;

/**
 * One classified difference between two grants. For the `text` facet, `before` and
 * `after` are the whole texts (a schema as indented canonical JSON); `before` is absent
 * when the approved grant predates recording text (`reason` says so).
 */
export interface GrantChange {
  facet: GrantFacet;
  kind: 'added' | 'removed' | 'changed';
  /**
   * The item within the facet: a tool name, `event glob`, `server.field`, `server.env.NAME`,
   * and for text `tool <name> description`, `tool <name> schema`, `command <name> description`,
   * `command <name> args`.
   */
  key: string;
  before?: GrantChangeValue;
  after?: GrantChangeValue;
  effect: GrantEffect;
  /** Why this effect, in words a user can check against the before/after values. */
  reason: string;
}

/** The diff between an approved grant and a candidate; `widens` decides whether consent is needed. */
export interface GrantDiff {
  name: string;
  /** Fingerprint of the approved (old) grant. */
  from: string;
  /** Fingerprint of the candidate (new) grant: what `--accept` must name. */
  to: string;
  widens: boolean;
  changes: GrantChange[];
}

/** The host would silently defer some `never_defer` tools. */
export interface NeverDeferOverflow {
  limit: number;
  count: number;
  /** Every tool that asks for never_defer, sorted; the host honours only `limit` of them. */
  tools: string[];
}

/** Data-only warnings about a grant, for the summary and `--json`. */
export type GrantWarning = ({ code: 'never_defer_overflow' } & NeverDeferOverflow) | { code: 'match_all_hook'; event: HookEvent; glob: string };

/** What `install --json` prints about a grant: the grant, its fingerprint and its warnings. */
export interface GrantSummary {
  fingerprint: string;
  grant: Grant;
  warnings: GrantWarning[];
}

// ---------------------------------------------------------------------------
// Canonical JSON and fingerprints

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (as RFC 8785), no whitespace,
 * `undefined` properties omitted. Throws TypeError on values JSON cannot hold.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} is not a JSON number`);
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
  }
}

const digestOf = (text: string): string => `sha256:${sha256Hex(text)}`;

/**
 * `sha256:<hex>` of the canonical JSON of the normalised grant: equal exactly when the grants
 * are. A format-1 grant (a `.yep-grants` file written before the text was recorded) keeps
 * the fingerprint it was approved under.
 */
export function grantFingerprint(grant: Grant | LegacyGrant): string {
  return digestOf(canonicalJson(grant.format === LEGACY_FORMAT ? normalizeLegacyGrant(grant) : normalizeGrant(grant)));
}

/** The fingerprint `grant` had before the grant held the model-facing text (a format-1 lock entry's). */
export function legacyFingerprint(grant: Grant): string {
  return grantFingerprint(legacyGrantOf(grant));
}

/**
 * How a recorded fingerprint (a lock entry's `grant`) approves `grant`: `exact` when it is
 * that grant's fingerprint; `before-text` when it is the fingerprint of the same grant in
 * format 1, which held no text, or in format 2 before the package's description and skill
 * files were recorded, so those words were never part of it (the caller decides whether
 * the content proves them: same bytes, same words); otherwise undefined.
 */
export function approvalOf(fingerprint: string | undefined, grant: Grant): 'exact' | 'before-text' | undefined {
  if (fingerprint === undefined) return undefined;
  if (fingerprint === grantFingerprint(grant)) return 'exact';
  if (fingerprint === grantFingerprint(withoutLaterText(grant))) return 'before-text';
  return fingerprint === legacyFingerprint(grant) ? 'before-text' : undefined;
}

/**
 * `grant` as it was approved before the package's description and the files of `skills/`
 * were recorded (the same format, neither `package` nor `skills`): what a lock entry's
 * fingerprint names for a package approved then.
 */
export function withoutLaterText(grant: Grant): Grant {
  const { skills: _files, package: _words, ...rest } = normalizeGrant(grant);
  return rest;
}

/** Whether `grant` recorded the package's description and its skill files (approved since they were). */
export function recordsLaterText(grant: Grant | LegacyGrant): grant is Grant {
  return grant.format === GRANT_FORMAT && grant.package !== undefined;
}

/**
 * A stored grant (`.yep-grants/<name>.json`) read back: format 2, or format 1 from before
 * the text was recorded; undefined for anything else (the caller ignores the file). Only
 * its shape is checked here: the caller trusts it once its fingerprint is the lock's.
 */
export function readStoredGrant(value: unknown): Grant | LegacyGrant | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const format = (value as { format?: unknown }).format;
  if (format !== GRANT_FORMAT && format !== LEGACY_FORMAT) return undefined;
  try {
    const g = value as Grant | LegacyGrant;
    // A file the fingerprint cannot even be computed over (a facet missing) is no grant.
    grantFingerprint(g);
    return g;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Manifest -> Grant

const ENV_REF_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}/g;

/** The environment variables a string references as `${NAME}` / `${NAME:-default}` (sorted, unique). */
export function envReferences(text: string): string[] {
  return [...new Set([...text.matchAll(ENV_REF_RE)].map((m) => m[1] as string))].sort(byCodeUnits);
}

/** True when a hook glob matches every tool name (only `*` characters). */
function isMatchAllGlob(glob: string): boolean {
  return /^\*+$/.test(glob);
}

/** A description as the grant keeps it: none for absent or empty text (the model reads nothing either way). */
const textOf = (text: string | undefined): { description?: string } => (text === undefined || text === '' ? {} : { description: text });

/** A JSON value with every object's keys sorted (a stable form to fingerprint, store and diff). */
function sortedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort(byCodeUnits)
        .map((k) => [k, sortedJson(obj[k])]),
    );
  }
  return value;
}

function opaqueValues(map: Record<string, string>): GrantOpaqueValue[] {
  return Object.entries(map).map(([name, value]) => ({ name, value_digest: digestOf(value), refs: envReferences(value) }));
}

/** Derive the grant a manifest asks for. The manifest must already be validated (parseManifest). */
export function grantOf(manifest: Manifest): Grant {
  const y = manifest.yolop;
  const cs = y.capabilityServer;
  return normalizeGrant({
    format: GRANT_FORMAT,
    name: manifest.name,
    server: { command: cs.command, args: cs.args, ...(cs.binaries !== undefined ? { binaries: cs.binaries } : {}) },
    tools: y.tools.map((t) => ({ name: t.name, never_defer: t.never_defer, ...textOf(t.description), schema: t.schema })),
    hooks: y.hooks.map((h) => ({
      event: h.event,
      glob: h.tool_name_glob,
      timeout_ms: h.timeout_ms,
      on_error: h.on_error,
      match_all: isMatchAllGlob(h.tool_name_glob),
    })),
    mcp_servers: Object.entries(y.mcpServers).map(
      ([name, s]): GrantMcpServer =>
        s.type === 'http'
          ? { name, transport: 'http', url: s.url ?? '', headers: opaqueValues(s.headers) }
          : { name, transport: 'stdio', command: s.command ?? '', args: s.args, env: opaqueValues(s.env) },
    ),
    prompt: { static: y.prompt, dynamic: y.dynamic_prompt },
    commands: y.commands.map((c) => ({
      name: c.name,
      ...textOf(c.description),
      args: c.args.map((a) => ({ name: a.name, required: a.required, ...textOf(a.description) })),
    })),
    opt_ins: { status: y.status, ui_ask: y.ui_ask, trace: y.trace, skills: y.skills },
    config: configFields(manifest).map((f) => ({ key: f.key, secret: f.secret, ...(f.env !== undefined ? { env: f.env } : {}), required: f.required })),
    ...(y.skills && manifest.skill_files !== undefined ? { skills: manifest.skill_files } : {}),
    package: textOf(manifest.description),
  });
}

// Locale-free ordering: localeCompare would make the fingerprint depend on the machine.
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const sortBy = <T>(items: readonly T[], key: (t: T) => string): T[] => [...items].sort((a, b) => byCodeUnits(key(a), key(b)));

/**
 * A fresh copy of `grant` holding only grant fields, with every order-free list sorted
 * (tools, hooks, MCP servers and their env/headers, commands, config). Argv lists and
 * command args keep their order: it is meaningful.
 */
export function normalizeGrant(grant: Grant): Grant {
  const opaque = (vs: readonly GrantOpaqueValue[]) =>
    sortBy(vs, (v) => v.name).map((v) => ({ name: v.name, value_digest: v.value_digest, refs: [...new Set(v.refs)].sort(byCodeUnits) }));
  return {
    format: grant.format,
    name: grant.name,
    server: {
      command: grant.server.command,
      args: [...grant.server.args],
      ...(grant.server.binaries !== undefined ? { binaries: grant.server.binaries } : {}),
    },
    tools: sortBy(grant.tools, (t) => t.name).map((t) => ({
      name: t.name,
      never_defer: t.never_defer,
      ...textOf(t.description),
      schema: sortedJson(t.schema) as JsonObject,
    })),
    hooks: sortBy(grant.hooks, hookSortKey).map((h) => ({
      event: h.event,
      glob: h.glob,
      timeout_ms: h.timeout_ms,
      on_error: h.on_error,
      match_all: isMatchAllGlob(h.glob),
    })),
    mcp_servers: sortBy(grant.mcp_servers, (s) => s.name).map(
      (s): GrantMcpServer =>
        s.transport === 'http'
          ? { name: s.name, transport: 'http', url: s.url, headers: opaque(s.headers) }
          : { name: s.name, transport: 'stdio', command: s.command, args: [...s.args], env: opaque(s.env) },
    ),
    prompt: { static: grant.prompt.static, dynamic: grant.prompt.dynamic },
    commands: sortBy(grant.commands, (c) => c.name).map((c) => ({
      name: c.name,
      ...textOf(c.description),
      args: c.args.map((a) => ({ name: a.name, required: a.required, ...textOf(a.description) })),
    })),
    opt_ins: { status: grant.opt_ins.status, ui_ask: grant.opt_ins.ui_ask, trace: grant.opt_ins.trace, skills: grant.opt_ins.skills },
    config: sortBy(grant.config, (f) => f.key).map((f) => ({
      key: f.key,
      secret: f.secret,
      ...(f.env !== undefined ? { env: f.env } : {}),
      required: f.required,
    })),
    ...(grant.skills !== undefined ? { skills: sortBy(grant.skills, (f) => f.path).map(skillFileOf) } : {}),
    ...(grant.package !== undefined ? { package: textOf(grant.package.description) } : {}),
  };
}

/** A skill file with only its fields (a stored grant read back may carry others). */
function skillFileOf(f: GrantSkillFile): GrantSkillFile {
  const content = { ...(f.digest !== undefined ? { digest: f.digest } : {}), ...(f.text !== undefined ? { text: f.text } : {}) };
  if ('link' in f) return { path: f.path, link: f.link, ...content };
  return { path: f.path, digest: f.digest, ...content };
}

/** The format-1 form of a grant: tools by schema digest, commands without text. */
export function legacyGrantOf(grant: Grant): LegacyGrant {
  const g = withoutLaterText(grant);
  return {
    ...g,
    format: LEGACY_FORMAT,
    tools: g.tools.map((t) => ({ name: t.name, never_defer: t.never_defer, schema_digest: digestOf(canonicalJson(t.schema)) })),
    commands: g.commands.map((c) => ({ name: c.name, args: c.args.map((a) => ({ name: a.name, required: a.required })) })),
  };
}

/** normalizeGrant for a format-1 grant: the fields it had, sorted as they were. */
function normalizeLegacyGrant(grant: LegacyGrant): LegacyGrant {
  // The facets both formats share are normalised by the one function; tools and commands by their old shape.
  const shared = withoutLaterText({ ...grant, format: GRANT_FORMAT, tools: [], commands: [] });
  return {
    ...shared,
    format: LEGACY_FORMAT,
    tools: sortBy(grant.tools, (t) => t.name).map((t) => ({ name: t.name, never_defer: t.never_defer, schema_digest: t.schema_digest })),
    commands: sortBy(grant.commands, (c) => c.name).map((c) => ({ name: c.name, args: c.args.map((a) => ({ name: a.name, required: a.required })) })),
  };
}

// NUL separates fields so `a` + `b c` and `a b` + `c` cannot collide; the timeout is zero-padded to sort numerically.
function hookSortKey(h: GrantHook): string {
  return `${h.event}\u0000${h.glob}\u0000${String(h.timeout_ms).padStart(16, '0')}\u0000${h.on_error}`;
}

// ---------------------------------------------------------------------------
// Warnings

/** The never_defer overflow, when more than NEVER_DEFER_LIMIT tools ask for it; undefined otherwise. */
export function neverDeferOverflow(grant: Grant): NeverDeferOverflow | undefined {
  const tools = grant.tools
    .filter((t) => t.never_defer)
    .map((t) => t.name)
    .sort(byCodeUnits);
  return tools.length > NEVER_DEFER_LIMIT ? { limit: NEVER_DEFER_LIMIT, count: tools.length, tools } : undefined;
}

/** Warnings worth showing beside a grant: never_defer overflow, match-all hooks. */
export function grantWarnings(grant: Grant): GrantWarning[] {
  const out: GrantWarning[] = [];
  const overflow = neverDeferOverflow(grant);
  if (overflow) out.push({ code: 'never_defer_overflow', ...overflow });
  for (const h of normalizeGrant(grant).hooks) if (h.match_all) out.push({ code: 'match_all_hook', event: h.event, glob: h.glob });
  return out;
}

/** The grant as `--json` reports it at install time. */
export function summarizeGrant(grant: Grant): GrantSummary {
  const g = normalizeGrant(grant);
  return { fingerprint: grantFingerprint(g), grant: g, warnings: grantWarnings(g) };
}

// ---------------------------------------------------------------------------
// Globs

/**
 * True when every tool name `inner` matches is also matched by `outer` (L(inner) ⊆ L(outer)),
 * for the host's anchored, case-sensitive, `*`-only globs. `inner`'s `*` is treated as a
 * fresh symbol that only `outer`'s `*` can absorb, which is sound: a match then survives any
 * substitution of inner's stars. Very long globs answer false (conservative: "not narrower").
 */
export function globCovers(outer: string, inner: string): boolean {
  const o = [...outer];
  const i = [...inner];
  if (o.length * (i.length + 1) > GLOB_WORK_LIMIT) return outer === inner || isMatchAllGlob(outer);
  let prev: boolean[] = Array.from({ length: i.length + 1 }, (_, j) => j === 0);
  for (const oc of o) {
    const cur: boolean[] = new Array<boolean>(i.length + 1).fill(false);
    if (oc === '*') {
      let reached = false;
      for (let j = 0; j <= i.length; j++) {
        reached ||= prev[j] === true;
        cur[j] = reached;
      }
    } else {
      for (let j = 1; j <= i.length; j++) cur[j] = prev[j - 1] === true && i[j - 1] === oc;
    }
    prev = cur;
  }
  return prev[i.length] === true;
}

// ---------------------------------------------------------------------------
// Diff

type Verdict = { effect: GrantEffect; reason: string };

const RANK: Record<GrantEffect, number> = { neutral: 0, narrowing: 1, widening: 2 };

// One change can have several aspects (a hook's glob and its timeout): the strongest effect wins, every reason is kept.
function combine(verdicts: Verdict[]): Verdict | undefined {
  if (verdicts.length === 0) return undefined;
  const effect = verdicts.reduce<GrantEffect>((e, v) => (RANK[v.effect] > RANK[e] ? v.effect : e), 'neutral');
  return { effect, reason: verdicts.map((v) => v.reason).join('; ') };
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

function diffKeyed<T extends GrantChangeValue>(
  facet: GrantFacet,
  before: readonly T[],
  after: readonly T[],
  keyOf: (t: T) => string,
  rules: { added: (t: T) => Verdict; removed: (t: T) => Verdict; changed: (a: T, b: T) => Verdict[] },
): GrantChange[] {
  const old = new Map(before.map((t) => [keyOf(t), t]));
  const next = new Map(after.map((t) => [keyOf(t), t]));
  const keys = [...new Set([...old.keys(), ...next.keys()])].sort(byCodeUnits);
  return keys.flatMap((key): GrantChange[] => {
    const a = old.get(key);
    const b = next.get(key);
    if (a === undefined && b !== undefined) return [{ facet, kind: 'added', key, after: b, ...rules.added(b) }];
    if (a !== undefined && b === undefined) return [{ facet, kind: 'removed', key, before: a, ...rules.removed(a) }];
    if (a === undefined || b === undefined || same(a, b)) return [];
    const v = combine(rules.changed(a, b)) ?? { effect: 'neutral' as const, reason: 'changed' };
    return [{ facet, kind: 'changed', key, before: a, after: b, ...v }];
  });
}

const widening = (reason: string): Verdict => ({ effect: 'widening', reason });
const narrowing = (reason: string): Verdict => ({ effect: 'narrowing', reason });
const neutral = (reason: string): Verdict => ({ effect: 'neutral', reason });

function diffServer(a: GrantServer, b: GrantServer): GrantChange[] {
  const out: GrantChange[] = [];
  if (a.command !== b.command) {
    out.push({
      facet: 'server',
      kind: 'changed',
      key: 'command',
      before: a.command,
      after: b.command,
      ...widening('the server command changed: a different program runs'),
    });
  }
  if (!same(a.args, b.args)) {
    out.push({ facet: 'server', kind: 'changed', key: 'args', before: a.args, after: b.args, ...widening('the server runs with different arguments') });
  }
  if (a.binaries !== b.binaries) {
    const kind = a.binaries === undefined ? 'added' : b.binaries === undefined ? 'removed' : 'changed';
    // Any change to where the binary comes from changes what runs; none of them is provably narrower.
    const reason =
      kind === 'added'
        ? 'the server binary will be downloaded from a prebuilt template'
        : kind === 'removed'
          ? 'the server binary no longer comes from the approved prebuilt template'
          : 'the server binary will be downloaded from a different template';
    out.push({
      facet: 'server',
      kind,
      key: 'binaries',
      ...(a.binaries !== undefined ? { before: a.binaries } : {}),
      ...(b.binaries !== undefined ? { after: b.binaries } : {}),
      ...widening(reason),
    });
  }
  return out;
}

type AnyTool = GrantTool | LegacyGrant['tools'][number];

/** Tools by name: added, removed, never_defer switched. Their words are the `text` facet's. */
function diffTools(a: readonly AnyTool[], b: readonly GrantTool[]): GrantChange[] {
  const old = new Map(a.map((t) => [t.name, t]));
  const next = new Map(b.map((t) => [t.name, t]));
  return [...new Set([...old.keys(), ...next.keys()])].sort(byCodeUnits).flatMap((key): GrantChange[] => {
    const x = old.get(key);
    const y = next.get(key);
    if (!x && y)
      return [
        {
          facet: 'tools',
          kind: 'added',
          key,
          after: y,
          ...widening(y.never_defer ? 'new tool, never deferred (its schema is always in context)' : 'new tool'),
        },
      ];
    if (x && !y) return [{ facet: 'tools', kind: 'removed', key, ...('schema' in x ? { before: x } : {}), ...narrowing('tool removed') }];
    if (!x || !y || x.never_defer === y.never_defer) return [];
    const verdict = y.never_defer ? widening('now never_defer: its schema is always in context') : narrowing('no longer never_defer');
    return [{ facet: 'tools', kind: 'changed', key, before: x.never_defer, after: y.never_defer, ...verdict }];
  });
}

/** A tool's schema as text: canonical key order, indented, so a diff shows the lines that changed. */
function schemaText(schema: JsonObject): string {
  return JSON.stringify(sortedJson(schema), null, 2);
}

/** A command's arguments as text: one line each, `<name>` required or `[name]` optional, then its description. */
function commandArgsText(args: readonly GrantCommandArg[]): string {
  return args.map((a) => `${a.required ? `<${a.name}>` : `[${a.name}]`}${a.description !== undefined ? `: ${a.description}` : ''}`).join('\n');
}

const NOT_ON_RECORD = 'approved before yep-ext recorded the words the model reads, so this text was never shown to you';

/**
 * One text the model reads, compared: any change widens (a reworded description steers the
 * model as surely as a new tool). `before` undefined with `known` false: the approved grant
 * predates recording text, so the new text is shown whole and asked about.
 */
function textChange(key: string, before: string | undefined, after: string, known: boolean): GrantChange[] {
  if (!known) return after === '' ? [] : [{ facet: 'text', kind: 'changed', key, after, ...widening(NOT_ON_RECORD) }];
  const was = before ?? '';
  if (was === after) return [];
  if (was === '') return [{ facet: 'text', kind: 'added', key, after, ...widening('new text the model reads') }];
  if (after === '') return [{ facet: 'text', kind: 'removed', key, before: was, ...widening('text the model read is gone (not provably narrower)') }];
  return [{ facet: 'text', kind: 'changed', key, before: was, after, ...widening('reworded: the model reads this text, and a changed word can steer it') }];
}

/**
 * The words the model reads, for each tool and command on both sides (a new one's text is
 * part of its addition): descriptions, argument schemas, command arguments. Against a
 * format-1 grant only a schema's digest is known: an unchanged digest is no change.
 */
function diffText(a: Grant | LegacyGrant, b: Grant): GrantChange[] {
  const out: GrantChange[] = [];
  const oldTools = new Map<string, AnyTool>(a.tools.map((t) => [t.name, t]));
  for (const y of b.tools) {
    const x = oldTools.get(y.name);
    if (!x) continue;
    const known = 'schema' in x;
    out.push(...textChange(`tool ${y.name} description`, known ? x.description : undefined, y.description ?? '', known));
    const after = schemaText(y.schema);
    if (known) out.push(...textChange(`tool ${y.name} schema`, schemaText(x.schema), after, true));
    else if (x.schema_digest !== digestOf(canonicalJson(y.schema))) out.push(...textChange(`tool ${y.name} schema`, undefined, after, false));
  }
  const oldCommands = new Map<string, Grant['commands'][number] | LegacyGrant['commands'][number]>(a.commands.map((c) => [c.name, c]));
  for (const y of b.commands) {
    const x = oldCommands.get(y.name);
    if (!x) continue;
    const known = a.format === GRANT_FORMAT;
    out.push(...textChange(`command ${y.name} description`, known ? (x as GrantCommand).description : undefined, y.description ?? '', known));
    const after = commandArgsText(y.args);
    // A format-1 grant knows the argument names and whether each is required, not their descriptions.
    const sameShape = canonicalJson(x.args.map((p) => [p.name, p.required])) === canonicalJson(y.args.map((p) => [p.name, p.required]));
    if (known) out.push(...textChange(`command ${y.name} args`, commandArgsText((x as GrantCommand).args), after, true));
    else if (!sameShape || y.args.some((p) => p.description !== undefined)) out.push(...textChange(`command ${y.name} args`, undefined, after, false));
  }
  if (b.package !== undefined) {
    const known = recordsLaterText(a);
    out.push(...textChange('package description', known ? a.package?.description : undefined, b.package.description ?? '', known));
  }
  return [...out, ...diffSkillFiles(a, b)];
}

/** What a skill file shows in a diff: its text; a file that is not text by its digest; a link by its target. */
function skillFileText(f: GrantSkillFile): string {
  const content = f.text ?? (f.digest !== undefined ? `(not text: ${f.digest})` : undefined);
  if ('link' in f) return content === undefined ? `(symlink to ${f.link})` : `(symlink to ${f.link})\n${content}`;
  return content as string;
}

/**
 * The files of `skills/` (the host mounts them for the model), by path: a new, changed or
 * removed file is a text change (`skill <path>`). Known on the approved side when it
 * recorded them, or when it did not declare skills (nothing was mounted); otherwise (a
 * grant approved before the files were recorded) each new file is shown whole.
 */
function diffSkillFiles(a: Grant | LegacyGrant, b: Grant): GrantChange[] {
  if (b.skills === undefined) return [];
  const recorded = recordsLaterText(a) ? (a.skills ?? []) : undefined;
  const known = recorded !== undefined || !a.opt_ins.skills;
  const old = new Map((recorded ?? []).map((f) => [f.path, f]));
  const out: GrantChange[] = [];
  for (const y of b.skills) {
    const x = old.get(y.path);
    old.delete(y.path);
    if (x !== undefined && same(x, y)) continue;
    const key = `skill ${y.path}`;
    const change = textChange(key, x === undefined ? undefined : skillFileText(x), skillFileText(y), known);
    // Other bytes that read the same (an empty new file) are still a change: the digests decide, the text only shows it.
    const kind: GrantChange['kind'] = x === undefined ? 'added' : 'changed';
    out.push(
      ...(change.length > 0 || !known
        ? change
        : [
            {
              facet: 'text' as const,
              kind,
              key,
              ...(x !== undefined ? { before: skillFileText(x) } : {}),
              after: skillFileText(y),
              ...widening('new or changed file the model can read'),
            },
          ]),
    );
  }
  for (const x of old.values()) out.push(...textChange(`skill ${x.path}`, skillFileText(x), '', true));
  return out.sort((p, q) => byCodeUnits(p.key, q.key));
}

function hookVerdicts(a: GrantHook, b: GrantHook): Verdict[] {
  const out: Verdict[] = [];
  if (a.glob !== b.glob) {
    const narrower = globCovers(a.glob, b.glob);
    const wider = globCovers(b.glob, a.glob);
    if (narrower && wider) out.push(neutral('glob respelled, matches the same tools'));
    else if (narrower) out.push(narrowing('glob narrowed: matches fewer tools'));
    else if (b.match_all) out.push(widening('glob now matches EVERY tool: the hook sees every tool call'));
    else out.push(widening('glob broadened (not provably narrower): the hook may see more tool calls'));
  }
  if (a.timeout_ms !== b.timeout_ms) {
    out.push(
      b.timeout_ms > a.timeout_ms
        ? widening(`timeout raised from ${a.timeout_ms} to ${b.timeout_ms} ms: may hold each matching call longer`)
        : narrowing(`timeout lowered from ${a.timeout_ms} to ${b.timeout_ms} ms`),
    );
  }
  if (a.on_error !== b.on_error) {
    out.push(
      b.on_error === 'block'
        ? widening('on_error now block: a failing or slow hook blocks the tool call')
        : narrowing('on_error now warn: a failing hook no longer blocks the tool call'),
    );
  }
  return out;
}

const hookKey = (h: GrantHook): string => `${h.event} ${h.glob}`;

/**
 * Hooks have no names, so old and new subscriptions are paired: identical ones first
 * (unchanged), then same event and glob, then a new glob an old one provably covers
 * (a narrowing), then any leftover on the same event (a change, judged by its glob).
 * Whatever is left is added (widening) or removed (narrowing).
 */
function diffHooks(a: GrantHook[], b: GrantHook[]): GrantChange[] {
  const oldLeft = [...a];
  const newLeft = [...b];
  const pairs: [GrantHook, GrantHook][] = [];
  const pairOff = (match: (o: GrantHook, n: GrantHook) => boolean, keep: boolean): void => {
    for (let ni = 0; ni < newLeft.length; ) {
      const n = newLeft[ni] as GrantHook;
      const oi = oldLeft.findIndex((o) => match(o, n));
      if (oi < 0) {
        ni++;
        continue;
      }
      const [o] = oldLeft.splice(oi, 1);
      newLeft.splice(ni, 1);
      if (keep) pairs.push([o as GrantHook, n]);
    }
  };
  pairOff(same, false);
  pairOff((o, n) => o.event === n.event && o.glob === n.glob, true);
  pairOff((o, n) => o.event === n.event && globCovers(o.glob, n.glob), true);
  pairOff((o, n) => o.event === n.event, true);
  const changes: GrantChange[] = [
    ...pairs.map(([o, n]): GrantChange => {
      const v = combine(hookVerdicts(o, n)) as Verdict;
      return { facet: 'hooks', kind: 'changed', key: hookKey(n), before: o, after: n, ...v };
    }),
    ...newLeft.map(
      (n): GrantChange => ({
        facet: 'hooks',
        kind: 'added',
        key: hookKey(n),
        after: n,
        ...widening(n.match_all ? `new ${n.event} hook on EVERY tool: it sees every tool call` : `new ${n.event} hook: it sees matching tool calls`),
      }),
    ),
    ...oldLeft.map((o): GrantChange => ({ facet: 'hooks', kind: 'removed', key: hookKey(o), before: o, ...narrowing('hook removed') })),
  ];
  return changes.sort((x, y) => byCodeUnits(x.key, y.key));
}

function refsNote(refs: string[]): string {
  return refs.length > 0 ? ` (forwards your ${refs.map((r) => `$${r}`).join(', ')})` : '';
}

function diffOpaque(server: string, field: 'env' | 'headers', a: GrantOpaqueValue[], b: GrantOpaqueValue[]): GrantChange[] {
  const what = field === 'env' ? 'environment variable' : 'header';
  return diffKeyed('mcp_servers', a, b, (v) => `${server}.${field}.${v.name}`, {
    added: (v) => widening(`new ${what}${refsNote(v.refs)}`),
    // An env var or header can switch a safety mode off as easily as on: removal is not provably narrower.
    removed: () => widening(`${what} removed (not provably narrower)`),
    changed: (_x, y) => [widening(`${what} value changed${refsNote(y.refs)}`)],
  });
}

/** MCP servers are clamped by name and transport shape (D4): any change to an approved server widens. */
function diffMcpServers(a: GrantMcpServer[], b: GrantMcpServer[]): GrantChange[] {
  const old = new Map(a.map((s) => [s.name, s]));
  const next = new Map(b.map((s) => [s.name, s]));
  const names = [...new Set([...old.keys(), ...next.keys()])].sort(byCodeUnits);
  return names.flatMap((name): GrantChange[] => {
    const x = old.get(name);
    const y = next.get(name);
    if (!x && y) {
      const forwards = y.transport === 'stdio' ? y.env.flatMap((v) => v.refs) : y.headers.flatMap((v) => v.refs);
      const where = y.transport === 'stdio' ? 'new local MCP server (stdio)' : 'new remote MCP server (http)';
      return [{ facet: 'mcp_servers', kind: 'added', key: name, after: y, ...widening(`${where}${refsNote([...new Set(forwards)].sort(byCodeUnits))}`) }];
    }
    if (x && !y) return [{ facet: 'mcp_servers', kind: 'removed', key: name, before: x, ...narrowing('MCP server removed') }];
    if (!x || !y || same(x, y)) return [];
    if (x.transport !== y.transport) {
      return [
        {
          facet: 'mcp_servers',
          kind: 'changed',
          key: name,
          before: x,
          after: y,
          ...widening(`transport changed from ${x.transport} to ${y.transport}: a different kind of server`),
        },
      ];
    }
    const out: GrantChange[] = [];
    const field = (f: string, before: string | string[], after: string | string[], reason: string): void => {
      if (!same(before, after)) out.push({ facet: 'mcp_servers', kind: 'changed', key: `${name}.${f}`, before, after, ...widening(reason) });
    };
    if (x.transport === 'stdio' && y.transport === 'stdio') {
      field('command', x.command, y.command, 'the MCP server command changed: a different program runs');
      field('args', x.args, y.args, 'the MCP server runs with different arguments');
      out.push(...diffOpaque(name, 'env', x.env, y.env));
    } else if (x.transport === 'http' && y.transport === 'http') {
      field('url', x.url, y.url, 'the MCP server URL changed: a different destination');
      out.push(...diffOpaque(name, 'headers', x.headers, y.headers));
    }
    return out;
  });
}

const SWITCH_REASONS: Record<string, [on: string, off: string]> = {
  static: ['the server may add static text to the system prompt', 'no static prompt'],
  dynamic: ['the server may add text to the system prompt every turn', 'no dynamic prompt'],
  status: ['may show text in the status bar', 'no status bar text'],
  ui_ask: ['may ask you questions', 'no longer asks questions'],
  trace: ['may emit trace events', 'no trace events'],
  skills: ['may provide skills', 'no skills'],
};

function diffSwitches(facet: 'prompt' | 'opt_ins', a: object, b: object): GrantChange[] {
  const x = a as Record<string, boolean>;
  const y = b as Record<string, boolean>;
  return Object.keys(y)
    .sort(byCodeUnits)
    .flatMap((key): GrantChange[] => {
      const before = x[key] === true;
      const after = y[key] === true;
      if (before === after) return [];
      const [on, off] = SWITCH_REASONS[key] ?? [`${key} turned on`, `${key} turned off`];
      return [{ facet, kind: 'changed', key, before, after, ...(after ? widening(on) : narrowing(off)) }];
    });
}

/** Commands by name: added or removed. Their description and arguments are the `text` facet's. */
function diffCommands(a: readonly { name: string }[], b: readonly GrantCommand[]): GrantChange[] {
  const old = new Set(a.map((c) => c.name));
  const next = new Map(b.map((c) => [c.name, c]));
  return [...new Set([...old, ...next.keys()])].sort(byCodeUnits).flatMap((key): GrantChange[] => {
    const y = next.get(key);
    if (!old.has(key) && y) return [{ facet: 'commands', kind: 'added', key, after: y, ...widening('new command') }];
    if (old.has(key) && !y) return [{ facet: 'commands', kind: 'removed', key, ...narrowing('command removed') }];
    return [];
  });
}

function diffConfig(a: GrantConfigField[], b: GrantConfigField[]): GrantChange[] {
  return diffKeyed('config', a, b, (f) => f.key, {
    added: (f) =>
      f.secret || f.env !== undefined
        ? widening(`new ${f.secret ? 'secret field (asks for a credential)' : 'field'}${f.env !== undefined ? `, injected as env ${f.env}` : ''}`)
        : neutral('new config field'),
    removed: () => narrowing('config field removed'),
    changed: (x, y) => [
      ...(x.secret !== y.secret
        ? [y.secret ? widening('now secret: asks for a credential') : widening('no longer secret: its value would be kept in settings.toml in clear')]
        : []),
      ...(x.env !== y.env
        ? [
            y.env === undefined
              ? narrowing(`no longer injected as env ${x.env}`)
              : widening(x.env === undefined ? `now injected as env ${y.env}` : `now injected as env ${y.env} instead of ${x.env}`),
          ]
        : []),
      ...(x.required !== y.required ? [neutral(y.required ? 'now required' : 'now optional')] : []),
    ],
  });
}

/**
 * Classify every difference between the approved grant `old` and the candidate `next`.
 * Identical grants give no changes. `widens` is true when any change is widening: that,
 * and only that, is what asks for consent. `old` may be a format-1 grant (approved before
 * the text was recorded): its text then counts as unknown. Rules: docs/grants.md.
 */
export function diffGrants(old: Grant | LegacyGrant, next: Grant): GrantDiff {
  const a = old.format === LEGACY_FORMAT ? normalizeLegacyGrant(old) : normalizeGrant(old);
  const b = normalizeGrant(next);
  const changes = [
    ...diffServer(a.server, b.server),
    ...diffTools(a.tools, b.tools),
    ...diffText(a, b),
    ...diffHooks(a.hooks, b.hooks),
    ...diffMcpServers(a.mcp_servers, b.mcp_servers),
    ...diffSwitches('prompt', a.prompt, b.prompt),
    ...diffCommands(a.commands, b.commands),
    ...diffSwitches('opt_ins', a.opt_ins, b.opt_ins),
    ...diffConfig(a.config, b.config),
  ];
  return { name: b.name, from: grantFingerprint(a), to: grantFingerprint(b), widens: changes.some((c) => c.effect === 'widening'), changes };
}
