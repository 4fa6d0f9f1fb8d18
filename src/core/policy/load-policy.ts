/**
 * Where the policy files live and reading them: the system file
 * (YEP_EXT_POLICY, default /etc/yolop/yep-ext-policy.toml) then the user's
 * `<config>/yep-ext-policy.toml`, merged tighten-only (policy-file.ts). A missing
 * file is no rule; anything else unreadable (a directory, a FIFO, bad TOML) is
 * an error naming the file: a policy is never silently ignored.
 */
import { join } from 'node:path';
import type { Context } from '../context.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { mergePolicy, parsePolicy, type Policy, type PolicyLayer } from './policy-file.js';

const DEFAULT_SYSTEM_POLICY = '/etc/yolop/yep-ext-policy.toml';
const USER_POLICY_NAME = 'yep-ext-policy.toml';
/** Policy files are small; a larger one is a mistake. */
const MAX_POLICY_BYTES = 1024 * 1024;

/** The two policy paths for this context: system first. */
export function policyPaths(ctx: Pick<Context, 'env' | 'paths'>): { system: string; user: string } {
  const env = ctx.env.YEP_EXT_POLICY;
  return { system: env !== undefined && env !== '' ? env : DEFAULT_SYSTEM_POLICY, user: join(ctx.paths.configDir, USER_POLICY_NAME) };
}

function readLayer(file: string): PolicyLayer | undefined {
  const text = readRegularTextSync(file, 'The policy file', {
    maxBytes: MAX_POLICY_BYTES,
    hint: `Make ${file} a regular TOML file (docs/policy.md), or remove it.`,
  });
  return text === undefined ? undefined : parsePolicy(text, file);
}

/** The effective policy (EMPTY_POLICY-like when neither file exists). */
export function loadPolicy(ctx: Pick<Context, 'env' | 'paths'>): Policy {
  const { system, user } = policyPaths(ctx);
  const own = readLayer(user);
  const policy = mergePolicy([readLayer(system), own].filter((l): l is PolicyLayer => l !== undefined));
  return own && user !== system ? { ...policy, user_file: user } : policy;
}
