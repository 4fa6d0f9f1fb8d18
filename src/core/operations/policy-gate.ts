/**
 * The policy file at the doors of install, update, install --frozen, install
 * --force, mirror, enable and `policy check` (docs/policy.md): load it once per
 * operation, hand its `min_age` to resolution through the Context, and apply it,
 * through the one function `applyPolicy`, to a spec before anything is fetched, a
 * record before it is fetched again, a fetched package before it is placed, and
 * an installed one before it is switched on. When the run fetches, every place
 * the bytes come from (the origin the lock records, and a git mirror or an index
 * chosen for the run) must be admitted. The rules themselves live in core/policy.
 */
import type { Context } from '../context.js';
import { inspectServerCommand, type CommandInspection } from '../package/inspect-command.js';
import { grantOf } from '../package/grants.js';
import { contentHash } from '../package/content-hash.js';
import type { Manifest } from '../package/manifest.js';
import { packageDir } from '../paths.js';
import { planMcpLaunch } from '../mcp/mcp-launch.js';
import { policyError, policyViolations, type PolicySubject, type PolicyViolation, type ServerOutside } from '../policy/evaluate.js';
import { loadPolicy } from '../policy/load-policy.js';
import type { Policy } from '../policy/policy-file.js';
import { loadInstalledManifest } from '../store/installed-manifest.js';
import type { LockEntry } from '../store/lockfile.js';
import { fetchPlaces, specPlaces, type ValidSpec } from '../sources/index.js';
import type { PreparedPackage } from './prepare.js';
import { checkEntry } from '../store/entry-check.js';

/** The effective policy, and `ctx` with the policy's min_age as the cooldown floor. */
export function withPolicy(ctx: Context): { ctx: Context; policy: Policy } {
  const policy = loadPolicy(ctx);
  if (policy.min_age_ms === 0) return { ctx, policy };
  return {
    ctx: { ...ctx, cooldown: { ...ctx.cooldown, policy: { minAgeMs: policy.min_age_ms, file: policy.min_age_file ?? policy.files.join(' + ') } } },
    policy,
  };
}

/**
 * Whether the run takes the package's bytes from somewhere (`fetch`: every place they
 * come from is ruled, not only the origin the lock records) or rules what is on disk
 * (`installed`: enable, policy check, "already installed").
 */
export type PolicyScope = 'fetch' | 'installed';

/**
 * The one application of the policy: every rule `subject` breaks, with the places
 * this run takes its bytes from added when it fetches. Every caller goes through here
 * (or `admit`, which throws): install, update, install --frozen, install --force,
 * mirror, enable, policy check, install's "already installed".
 */
export function applyPolicy(ctx: Context, policy: Policy, subject: PolicySubject, scope: PolicyScope): PolicyViolation[] {
  if (policy.files.length === 0) return [];
  const via = scope === 'fetch' && subject.source ? fetchPlaces(ctx, subject.source) : [];
  return policyViolations(policy, via.length > 0 ? { ...subject, via: [...(subject.via ?? []), ...via] } : subject);
}

/** `applyPolicy`, throwing E_POLICY naming every violation. */
export function admit(ctx: Context, policy: Policy, subject: PolicySubject, scope: PolicyScope): void {
  const v = applyPolicy(ctx, policy, subject, scope);
  if (v.length > 0) throw policyError(v, policy);
}

/** `admit` for several subjects at once: every violation of every one in one E_POLICY. */
export function admitAll(ctx: Context, policy: Policy, subjects: PolicySubject[]): void {
  const v = subjects.flatMap((s) => applyPolicy(ctx, policy, s, 'fetch'));
  if (v.length > 0) throw policyError(v, policy);
}

/** A spec before anything is fetched: its kind, its origin and every other place this run would take its bytes from. */
export function specSubject(ctx: Context, spec: ValidSpec): PolicySubject {
  const { origin, via } = specPlaces(ctx, spec);
  return { name: spec.raw.trim(), spec: { kind: spec.kind, origin }, via };
}

/**
 * Every server command of `manifest` (the capability server's, then each stdio MCP
 * server's) whose program is outside the package at `dir`, as the host resolves it: the
 * one resolver (package/inspect-command.ts) with each server's launch rule. `capability`:
 * the capability server's inspection when the caller has it. `buildPending`: a build from
 * source is planned that places `bin/<command>`, so a bare command missing now is not outside.
 */
async function serversOutside(ctx: Context, dir: string, manifest: Manifest, capability?: CommandInspection, buildPending = false): Promise<ServerOutside[]> {
  const out: ServerOutside[] = [];
  const command = manifest.yolop.capabilityServer.command;
  const cap = capability ?? (await inspectServerCommand(dir, command, ctx.env.PATH ?? ''));
  if (cap.outside && !(buildPending && !cap.ok && cap.outside.target === '')) out.push({ command, how: cap.outside.how });
  for (const [server, decl] of Object.entries(manifest.yolop.mcpServers)) {
    if (decl.type !== 'stdio') continue;
    const launch = planMcpLaunch(manifest.name, server, decl, ctx.env);
    const found = await inspectServerCommand(dir, launch.command ?? '', launch.env.PATH ?? ctx.env.PATH ?? '', { kind: 'mcp', server });
    if (found.outside) out.push({ command: decl.command ?? '', how: found.outside.how, mcpServer: server });
  }
  return out;
}

/** What the policy sees of a fetched, verified package. */
export async function preparedSubject(ctx: Context, p: PreparedPackage): Promise<PolicySubject> {
  const outside = await serversOutside(ctx, p.fetched.dir, p.manifest, p.command, p.binary?.build !== undefined);
  return { name: p.name, source: p.fetched.source, content_hash: p.content_hash, grant: p.grant.grant, ...(outside.length ? { serversOutside: outside } : {}) };
}

/** Refuse (E_POLICY) a fetched package the policy does not admit, or whose bytes came from a place it does not. */
export async function admitPrepared(ctx: Context, policy: Policy, p: PreparedPackage): Promise<void> {
  if (policy.files.length === 0) return;
  admit(ctx, policy, await preparedSubject(ctx, p), 'fetch');
}

/** What the policy sees of an installed package: its lock entry, manifest and where its command resolves. */
async function installedSubject(ctx: Context, entry: LockEntry, manifest?: Manifest): Promise<PolicySubject> {
  const m = manifest ?? (await loadInstalledManifest(ctx.paths, entry.name).catch(() => undefined));
  if (!m) return { name: entry.name, source: entry.source, content_hash: entry.content_hash };
  const outside = await serversOutside(ctx, packageDir(ctx.paths, entry.name), m);
  return {
    name: entry.name,
    source: entry.source,
    content_hash: entry.content_hash,
    grant: grantOf(m),
    ...(outside.length ? { serversOutside: outside } : {}),
  };
}

/**
 * The entry with the content hash of the tree the host would load, when the policy pins
 * anything. `[pins]` admit bytes, and the lock's record is only a claim about them: a path
 * install edited in place, or a store tree changed by hand, runs content no pin admits. The cheap check trusts
 * an unchanged stat signature and re-hashes otherwise (as `list` does); a tree that cannot
 * be read keeps the lock's hash (`verify` reports it missing).
 */
export async function pinnedAsOnDisk(ctx: Context, policy: Policy, entry: LockEntry): Promise<LockEntry> {
  if (policy.pins.length === 0) return entry;
  const { result } = await checkEntry(ctx, entry, { mode: 'cheap' });
  const actual = result.content_hash.actual;
  return actual && actual !== entry.content_hash ? { ...entry, content_hash: actual } : entry;
}

/**
 * Every violation of a store package no lock entry pins (`<store>/<name>/plugin.json`, which
 * the host loads anyway): its name, the hash of its tree on disk (when the policy pins
 * anything), its grant and server command; its source is unknown (policy/evaluate.ts).
 */
export async function unlockedViolations(ctx: Context, policy: Policy, name: string, manifest?: Manifest): Promise<PolicyViolation[]> {
  if (policy.files.length === 0) return [];
  const dir = packageDir(ctx.paths, name);
  // A tree that cannot be hashed is not admitted by a policy that pins (evaluate.ts: unhashable).
  const hashed =
    policy.pins.length > 0
      ? await contentHash(dir).then(
          (content_hash) => ({ content_hash }),
          (e: unknown) => ({ unhashable: e instanceof Error ? e.message : String(e) }),
        )
      : {};
  const m = manifest ?? (await loadInstalledManifest(ctx.paths, name).catch(() => undefined));
  const subject: PolicySubject = { name, ...hashed };
  if (m) {
    const outside = await serversOutside(ctx, dir, m);
    Object.assign(subject, { grant: grantOf(m), ...(outside.length ? { serversOutside: outside } : {}) });
  }
  return applyPolicy(ctx, policy, subject, 'installed');
}

/** Every violation of an installed package. */
export async function installedViolations(ctx: Context, policy: Policy, entry: LockEntry, manifest?: Manifest): Promise<PolicyViolation[]> {
  if (policy.files.length === 0) return [];
  return applyPolicy(ctx, policy, await installedSubject(ctx, entry, manifest), 'installed');
}
