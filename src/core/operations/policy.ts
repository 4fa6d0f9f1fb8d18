/**
 * `policy check` and `policy init --from-lock` (docs/policy.md). check: every
 * installed package against the effective policy, each violation with its rule
 * and item. init: a policy admitting exactly the locked set (its kinds, index
 * roots, git hosts, names, and each name pinned to its content hash), written
 * through fs-atomic; anything else is then refused.
 */
import { lstatSync } from 'node:fs';
import { stringify as stringifyToml } from 'smol-toml';
import type { Context } from '../context.js';
import { loadLockAsRecorded } from '../store/custody.js';
import { YepError } from '../errors.js';
import { policyError, type PolicyViolation } from '../policy/evaluate.js';
import { parsePolicy } from '../policy/policy-file.js';
import { policyPaths } from '../policy/load-policy.js';
import { originFacts } from '../sources/index.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { makeDirs } from '../fs/custody.js';
import { checkOutputFile } from '../fs/output-file.js';
import { dirname } from 'node:path';
import { loadLock, type Lockfile } from '../store/lockfile.js';
import { loadGivenLockfile, requireStoreLock } from './frozen.js';
import { installedViolations, pinnedAsOnDisk, unlockedViolations, withPolicy } from './policy-gate.js';
import { unlockedSince } from '../store/unlocked-packages.js';

export interface PolicyCheckResult {
  /** The policy files in force, system first (empty: no policy). */
  files: string[];
  checked: number;
  violations: PolicyViolation[];
}

/** Evaluate the store. Throws E_POLICY (details: the whole result) when anything breaks the policy. */
export async function checkPolicy(ctx: Context): Promise<PolicyCheckResult> {
  const { policy } = withPolicy(ctx);
  const lock = await loadLockAsRecorded(ctx);
  const violations: PolicyViolation[] = [];
  for (const entry of lock.entries) violations.push(...(await installedViolations(ctx, policy, await pinnedAsOnDisk(ctx, policy, entry))));
  // The host loads every <store>/<name>/plugin.json, pinned or not: those no lock entry pins are checked too.
  const unlocked = await unlockedSince(ctx.paths, lock);
  for (const name of unlocked) violations.push(...(await unlockedViolations(ctx, policy, name)));
  const result = { files: policy.files, checked: lock.entries.length + unlocked.length, violations };
  if (violations.length > 0) {
    const e = policyError(violations);
    throw new YepError(
      'E_POLICY',
      `${violations.length} policy violation${violations.length === 1 ? '' : 's'} in the store (${[...new Set(violations.map((v) => v.rule))].join(', ')}); first: ${violations[0]!.message}.`,
      {
        hint: 'Remove or replace what the policy refuses (`yep-ext remove <name>`), or ask your administrator. Nothing was changed.',
        details: { ...result, rule: e.details?.rule, item: e.details?.item },
      },
    );
  }
  return result;
}

export interface PolicyInitResult {
  path: string;
  entries: number;
  text: string;
}

/** The policy text admitting exactly what `lockFile` pins (`lock`: that file, already read). */
export async function policyFromLock(lockFile: string, lock?: Lockfile): Promise<{ text: string; entries: number }> {
  lock ??= await loadLock(lockFile);
  const sorted = [...lock.entries].sort((a, b) => (a.name < b.name ? -1 : 1));
  const uniq = (xs: (string | undefined)[]) => [...new Set(xs.filter((x): x is string => x !== undefined))].sort();
  const doc = {
    sources: {
      kinds: uniq(sorted.map((e) => e.source.type)),
      index_urls: uniq(sorted.map((e) => originFacts(e.source).index_url)),
      git_hosts: uniq(sorted.map((e) => originFacts(e.source).git_host)),
    },
    names: { allow: sorted.map((e) => e.name) },
    pins: Object.fromEntries(sorted.map((e) => [e.name, e.content_hash])),
  };
  const header = `# yep-ext policy written by \`yep-ext policy init --from-lock\` from ${lockFile}:\n# it admits exactly the ${sorted.length} locked package${sorted.length === 1 ? '' : 's'} (each pinned to its content hash). See docs/policy.md.\n\n`;
  return { text: `${header + stringifyToml(doc)}\n`, entries: sorted.length };
}

/** Write the policy for the store's lock (or `lockfile`) to `output` (default: the user's policy file). */
export async function initPolicyFromLock(ctx: Context, options: { output?: string; lockfile?: string; force?: boolean } = {}): Promise<PolicyInitResult> {
  const path = options.output ?? policyPaths(ctx).user;
  if (options.output !== undefined) checkOutputFile(options.output, 'yep-ext-policy.toml', (file) => `yep-ext policy init --from-lock --output ${file}`);
  const exists = (() => {
    try {
      lstatSync(path);
      return true;
    } catch {
      return false;
    }
  })();
  if (exists && !options.force) {
    throw new YepError('E_CONFLICT', `${path} already exists.`, { hint: 'Pass --force to replace it, or --output <file> to write elsewhere.' });
  }
  // No lock at all is not an empty lock (as for lock export, mirror and install --frozen): a
  // mistyped --lockfile or a home where nothing was installed would write a policy admitting
  // nothing and say "wrote" (exit 3 instead). A lock that exists and pins nothing: a warning.
  const lockFile = options.lockfile ?? ctx.paths.lockFile;
  const lock = options.lockfile
    ? await loadGivenLockfile(options.lockfile)
    : await requireStoreLock(
        ctx,
        '`policy init --from-lock` admits what a lock pins',
        'Name the lock to admit with --lockfile <path> (write one with `yep-ext lock export <path>` where the extensions are installed), or run it where they are installed.',
      );
  if (lock.entries.length === 0) ctx.log.warn(`${lockFile} pins no extensions: the policy admits none, so every install will be refused.`);
  const { text, entries } = await policyFromLock(lockFile, lock);
  parsePolicy(text, path); // what we write must read back
  // The default place is in the config dir, which a store moved by YOLOP_EXTENSIONS_DIR does not create.
  if (options.output === undefined) await makeDirs(dirname(path));
  await writeFileAtomic(path, text, { what: 'The policy file' });
  return { path, entries, text };
}
