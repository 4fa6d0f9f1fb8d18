/**
 * The policy file at the doors of install, update, install --frozen and enable
 * (docs/policy.md): load it once per operation, hand its `min_age` to resolution
 * through the Context, and check a package (fetched or installed) before it is
 * placed or switched on. The rules themselves live in core/policy.
 */
import type { Context } from '../context.js';
import { inspectServerCommand, type CommandInspection } from '../package/inspect-command.js';
import { grantOf } from '../package/grants.js';
import { contentHash } from '../package/content-hash.js';
import type { Manifest } from '../package/manifest.js';
import { packageDir } from '../paths.js';
import { assertAdmitted, policyViolations, type PolicySubject, type PolicyViolation } from '../policy/evaluate.js';
import { loadPolicy } from '../policy/load-policy.js';
import type { Policy } from '../policy/policy-file.js';
import { loadInstalledManifest } from '../store/installed-manifest.js';
import type { LockEntry } from '../store/lockfile.js';
import type { PreparedPackage } from './prepare.js';
import { checkEntry } from './verify.js';

/** The effective policy, and `ctx` with the policy's min_age as the cooldown floor. */
export function withPolicy(ctx: Context): { ctx: Context; policy: Policy } {
  const policy = loadPolicy(ctx);
  if (policy.min_age_ms === 0) return { ctx, policy };
  return {
    ctx: { ...ctx, cooldown: { ...ctx.cooldown, policy: { minAgeMs: policy.min_age_ms, file: policy.min_age_file ?? policy.files.join(' + ') } } },
    policy,
  };
}

function outside(command: CommandInspection, manifest: Manifest): PolicySubject['serverOutside'] {
  if (!command.ok || command.where !== 'path') return undefined;
  // Through a symlink in the package that leads out, or found on PATH.
  return { command: manifest.yolop.capabilityServer.command, ...(command.link ? { how: `it runs ${command.link}, a symlink out of the package` } : {}) };
}

/** What the policy sees of a fetched, verified package. */
export function preparedSubject(p: PreparedPackage): PolicySubject {
  const serverOutside = outside(p.command, p.manifest);
  return { name: p.name, source: p.fetched.source, content_hash: p.content_hash, grant: p.grant.grant, ...(serverOutside ? { serverOutside } : {}) };
}

/** Refuse (E_POLICY) a fetched package the policy does not admit. */
export function admitPrepared(policy: Policy, p: PreparedPackage): void {
  assertAdmitted(policy, preparedSubject(p));
}

/** What the policy sees of an installed package: its lock entry, manifest and where its command resolves. */
async function installedSubject(ctx: Context, entry: LockEntry, manifest?: Manifest): Promise<PolicySubject> {
  const m = manifest ?? (await loadInstalledManifest(ctx.paths, entry.name).catch(() => undefined));
  if (!m) return { name: entry.name, source: entry.source, content_hash: entry.content_hash };
  const command = await inspectServerCommand(packageDir(ctx.paths, entry.name), m.yolop.capabilityServer.command, ctx.env.PATH ?? '');
  const serverOutside = outside(command, m);
  return { name: entry.name, source: entry.source, content_hash: entry.content_hash, grant: grantOf(m), ...(serverOutside ? { serverOutside } : {}) };
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
    const command = await inspectServerCommand(dir, m.yolop.capabilityServer.command, ctx.env.PATH ?? '');
    const serverOutside = outside(command, m);
    Object.assign(subject, { grant: grantOf(m), ...(serverOutside ? { serverOutside } : {}) });
  }
  return policyViolations(policy, subject);
}

/** Every violation of an installed package. */
export async function installedViolations(ctx: Context, policy: Policy, entry: LockEntry, manifest?: Manifest): Promise<PolicyViolation[]> {
  if (policy.files.length === 0) return [];
  return policyViolations(policy, await installedSubject(ctx, entry, manifest));
}
