/**
 * A package against the effective policy (docs/policy.md): every rule whose
 * inputs the caller has is checked, and each breach is a PolicyViolation naming
 * the rule and the offending item. Every caller reaches it through
 * operations/policy-gate.ts (`applyPolicy`), which adds where the run takes the
 * bytes from; `policy check` lists every violation in the store. Pure: the
 * caller gathers the facts.
 */
import { YepError } from '../errors.js';
import { binaryTrust } from '../binary/binary-record.js';
import type { Grant } from '../package/grants.js';
import { describeSource, originFacts, type FetchPlace, type LockSource, type OriginFacts } from '../sources/index.js';
import { nameMatches, type Policy } from './policy-file.js';

export interface PolicySubject {
  name: string;
  /**
   * Where it came from; undefined for a store package no lock entry pins (the host loads it
   * anyway): its origin is unknown, so a policy that restricts sources cannot admit it.
   */
  source?: LockSource;
  /**
   * Before anything is fetched, when there is no record yet: the spec's kind and origin.
   * Only the source rules apply (`name` is then the spec's text, not an extension name).
   */
  spec?: { kind: string; origin: OriginFacts };
  /**
   * Where this run takes the bytes from besides the origin (a git mirror, the index
   * chosen for the run): each must be admitted too, or the origin in the lock would
   * stand for bytes the policy never saw.
   */
  via?: FetchPlace[];
  /** Checked against `[pins]` when known. */
  content_hash?: string;
  /**
   * Why the tree could not be hashed (a file or directory it cannot read, a file that changed size while hashed):
   * `[pins]` then refuses it rather than skipping the check (fail closed).
   */
  unhashable?: string;
  /** Checked against `[grant]` when known. */
  grant?: Grant;
  /**
   * Each server command (the capability server's, each stdio MCP server's) that resolves
   * outside the package, as the host resolves it (package/inspect-command.ts): an absolute
   * path, a relative one climbing out (or, for an MCP server, any relative one: the host
   * runs it from the workspace), a symlink in the package leading out, or a bare name the
   * package's bin/ lacks (looked up on PATH); `how` says which.
   */
  serversOutside?: ServerOutside[];
}

/** One server command of a package whose program is outside the package. */
export interface ServerOutside {
  command: string;
  how: string;
  /** The key in `mcpServers` for an MCP server; absent for the capability server. */
  mcpServer?: string;
}

export interface PolicyViolation {
  /** `sources.kinds`, `names.deny`, `grant.hooks`, ... (the key in the policy file). */
  rule: string;
  /** The offending thing: a kind, an index URL, a host, a name, a hook glob, a tool... */
  item: string;
  message: string;
  /** The policy file(s) that set the rule. */
  file: string;
}

const ADMITTED_TRUST = new Set(['crate-digest', 'crate-key', 'local-build']);

/** Only the source kind (before anything is fetched). */
function kindViolation(policy: Policy, kind: string, what: string): PolicyViolation | undefined {
  if (!policy.kinds || policy.kinds.includes(kind)) return undefined;
  return {
    rule: 'sources.kinds',
    item: kind,
    message: `${what} is a ${kind} source; the policy admits only ${policy.kinds.length > 0 ? policy.kinds.join(', ') : 'no'} sources`,
    file: policy.files.join(' + '),
  };
}

/** Every rule `subject` breaks. */
export function policyViolations(policy: Policy, s: PolicySubject): PolicyViolation[] {
  if (policy.files.length === 0) return [];
  const out: PolicyViolation[] = [];
  const all = policy.files.join(' + ');
  const add = (rule: string, item: string, message: string, file = all) => out.push({ rule, item, message: `${s.name}: ${message}`, file });

  const origin = s.source
    ? { kind: s.source.type, facts: originFacts(s.source), what: `it comes from ${describeSource(s.source)}, which` }
    : s.spec
      ? { kind: s.spec.kind, facts: s.spec.origin, what: 'it' }
      : undefined;
  if (origin) {
    const kind = kindViolation(policy, origin.kind, origin.what);
    if (kind) add(kind.rule, kind.item, kind.message);
    sourcePlaceViolations(policy, origin.facts, s.via ?? [], add);
  } else {
    // No lock entry records its origin: a rule on sources cannot be met by what nobody recorded.
    const rule = policy.kinds ? 'sources.kinds' : policy.index_urls ? 'sources.index_urls' : policy.git_hosts ? 'sources.git_hosts' : undefined;
    if (rule) add(rule, 'unlocked', 'no lock entry records where it came from (placed in the store by hand?), so the policy cannot admit its source');
  }
  // Before anything is fetched only where it comes from is known.
  if (s.spec && !s.source) return out;
  for (const a of policy.allow) {
    if (!a.globs.some((g) => nameMatches(g, s.name)))
      add('names.allow', s.name, `the name is not in the allow-list (${a.globs.join(', ') || 'empty'})`, a.file);
  }
  for (const d of policy.deny) {
    if (nameMatches(d.glob, s.name)) add('names.deny', s.name, `the name matches the deny-list entry ${JSON.stringify(d.glob)}`, d.file);
  }
  if (s.content_hash !== undefined || s.unhashable !== undefined) {
    for (const p of policy.pins) {
      const want = p.pins[s.name];
      if (want === undefined) add('pins', s.name, 'the policy pins a fixed set of packages and this is not one of them', p.file);
      else if (s.content_hash === undefined)
        add('pins', s.name, `its content could not be hashed (${s.unhashable}), so it cannot be shown to be the pinned ${want}`, p.file);
      else if (want !== s.content_hash) add('pins', `${s.name}@${s.content_hash}`, `content ${s.content_hash} is not the pinned ${want}`, p.file);
    }
  }
  if (policy.require_in_crate_binary && s.source) {
    const trust = binaryTrust(s.source);
    if (trust !== undefined && !ADMITTED_TRUST.has(trust)) {
      add(
        'binaries.require_in_crate',
        trust,
        `its server binary was verified only by a digest from the release host (${trust}); the policy requires a digest or signature key inside the checksummed crate`,
      );
    }
  }
  if (s.grant) grantViolations(policy, s.grant, add);
  for (const server of s.serversOutside ?? []) {
    const outside = serverOutsideViolation(policy, server);
    if (outside) add(outside.rule, outside.item, outside.message);
  }
  return out;
}

/** The origin's index root and git host, then each other place the bytes come from, against the allow-lists. */
function sourcePlaceViolations(policy: Policy, origin: OriginFacts, via: FetchPlace[], add: (rule: string, item: string, message: string) => void): void {
  const seen = new Set<string>();
  for (const place of [origin, ...via]) {
    const through = 'through' in place ? (place as FetchPlace).through : undefined;
    const whose = through ? `this run takes its bytes from ${through}, whose` : 'its';
    if (policy.index_urls && place.index_url !== undefined && !policy.index_urls.includes(place.index_url) && !seen.has(`i ${place.index_url}`)) {
      seen.add(`i ${place.index_url}`);
      add(
        'sources.index_urls',
        place.index_url,
        `${whose} registry index ${place.index_url} is not one the policy admits (${policy.index_urls.join(', ') || 'none'})`,
      );
    }
    if (policy.git_hosts && place.git_host !== undefined && !policy.git_hosts.includes(place.git_host) && !seen.has(`g ${place.git_host}`)) {
      seen.add(`g ${place.git_host}`);
      add('sources.git_hosts', place.git_host, `${whose} git host ${place.git_host} is not one the policy admits (${policy.git_hosts.join(', ') || 'none'})`);
    }
  }
}

/**
 * `grant.server_outside_package`: a server command (the capability server's, or a stdio
 * MCP server's) resolves to a program outside the package (host's resolution,
 * package/inspect-command.ts). The one statement of the rule: install, update, --frozen,
 * enable and policy check reach it through policyViolations, doctor's spawns through
 * policy/package-code.ts.
 */
export function serverOutsideViolation(policy: Policy, outside: ServerOutside): PolicyViolation | undefined {
  if (policy.files.length === 0 || policy.max_grant.switches.server_outside_package) return undefined;
  const whose = outside.mcpServer === undefined ? 'its server command' : `its MCP server ${outside.mcpServer} (command`;
  const close = outside.mcpServer === undefined ? '' : ')';
  return {
    rule: 'grant.server_outside_package',
    item: outside.command,
    message: `${whose} ${outside.command}${close} runs ${outside.how}, which is not shipped in the package; the policy requires every server inside the package`,
    file: policy.files.join(' + '),
  };
}

/**
 * `grant.mcp_servers = false`: the extension provides an MCP server. The one statement of
 * the rule: install, update, --frozen, enable and policy check reach it through
 * policyViolations, doctor's probes (a stdio start, an http connection) through check-mcp.ts.
 */
export function mcpServerViolation(policy: Policy, server: string): PolicyViolation | undefined {
  if (policy.files.length === 0 || policy.max_grant.switches.mcp_servers) return undefined;
  return { rule: 'grant.mcp_servers', item: server, message: `it provides the MCP server ${server}; the policy admits none`, file: policy.files.join(' + ') };
}

function grantViolations(policy: Policy, g: Grant, add: (rule: string, item: string, message: string) => void): void {
  const max = policy.max_grant;
  if (max.hooks === 'none')
    for (const h of g.hooks)
      add('grant.hooks', `${h.event}:${h.glob}`, `it subscribes a hook (${h.event} on ${JSON.stringify(h.glob)}); the policy admits no hooks`);
  if (max.hooks === 'scoped')
    for (const h of g.hooks.filter((x) => x.match_all))
      add('grant.hooks', `${h.event}:${h.glob}`, `its hook ${h.event} on ${JSON.stringify(h.glob)} sees every tool call; the policy admits only scoped hooks`);
  const sw = max.switches;
  for (const m of g.mcp_servers) {
    const v = mcpServerViolation(policy, m.name);
    if (v) add(v.rule, v.item, v.message);
  }
  if (!sw.prompts && g.prompt.static) add('grant.prompts', 'prompt', 'it adds to the system prompt; the policy admits no prompts');
  if (!sw.dynamic_prompts && g.prompt.dynamic) add('grant.dynamic_prompts', 'dynamic prompt', 'it adds a dynamic prompt; the policy admits none');
  if (!sw.commands) for (const c of g.commands) add('grant.commands', c.name, `it provides the command ${c.name}; the policy admits no commands`);
  if (!sw.secrets)
    for (const c of g.config.filter((x) => x.secret)) add('grant.secrets', c.key, `it asks for the secret ${c.key}; the policy admits no secrets`);
}

/**
 * The E_POLICY error for violations (the first one is the message; all are in details).
 * A rule of the user's own file (`policy.user_file`, what `policy init` writes by default)
 * is theirs to change: the hint says so instead of sending them to an administrator.
 */
export function policyError(violations: PolicyViolation[], policy?: Pick<Policy, 'user_file'>): YepError {
  const [first] = violations;
  if (!first) throw new Error('policyError needs a violation');
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
  const whose =
    policy?.user_file !== undefined && first.file === policy.user_file
      ? 'That is your own policy file (`yep-ext policy init` writes it there): change or remove the rule in it'
      : 'Ask your administrator';
  return new YepError('E_POLICY', `Refused by policy (${first.rule}): ${first.message}${more}.`, {
    hint: `The policy in ${first.file} does not admit it (docs/policy.md). ${whose}, or choose another package or version; \`yep-ext policy check\` lists what the store breaks.`,
    details: { rule: first.rule, item: first.item, file: first.file, violations },
  });
}
