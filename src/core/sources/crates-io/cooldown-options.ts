/**
 * The release-age cooldown a run resolves under: the user's own (`--min-age`,
 * else YEP_EXT_MIN_AGE), which `--allow-fresh` may waive for an exactly named
 * version, and the policy file's `min_age`, a floor nothing on the command line
 * lowers. The one version picker (sources/crates-io/pick-version.ts) applies it; it
 * reads it from the Context, where it is set when the context is built.
 */
import { parseDuration } from '../../text/duration.js';

/** What a command passes when it builds its Context (`ContextOptions.cooldown`); an operation adds the policy's floor to a derived context. */
export interface CooldownOptions {
  /** `--min-age` as typed (wins over YEP_EXT_MIN_AGE). */
  minAge?: string;
  /** `--allow-fresh`: an exactly named version younger than the user's cooldown is installed anyway. */
  allowFresh?: boolean;
  /** The policy file's `min_age`, and the file it came from. */
  policy?: { minAgeMs: number; file: string };
}

export interface Cooldown {
  /** The user's cooldown (0 = none) and where it came from. */
  userMs: number;
  userFrom: string;
  /** The policy's floor (0 = none). */
  policyMs: number;
  policyFile?: string;
  allowFresh: boolean;
}

/** The cooldown for this run, or undefined when none applies. Throws E_USAGE on a malformed duration. */
export function effectiveCooldown(options: CooldownOptions | undefined, env: Record<string, string | undefined>): Cooldown | undefined {
  const fromFlag = options?.minAge;
  const fromEnv = env.YEP_EXT_MIN_AGE;
  const text = fromFlag ?? (fromEnv !== undefined && fromEnv.trim() !== '' ? fromEnv : undefined);
  const userFrom = fromFlag !== undefined ? '--min-age' : 'YEP_EXT_MIN_AGE';
  const userMs = text === undefined ? 0 : parseDuration(text, userFrom);
  const policyMs = options?.policy?.minAgeMs ?? 0;
  if (userMs === 0 && policyMs === 0) return undefined;
  return {
    userMs,
    userFrom,
    policyMs,
    ...(options?.policy ? { policyFile: options.policy.file } : {}),
    allowFresh: options?.allowFresh === true,
  };
}
