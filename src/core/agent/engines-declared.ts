/**
 * Whether a manifest states `engines.yolop` at all, without loading semver: `list`
 * asks this of every package and loads the check (and asks the agent) only when
 * one does, so a store without ranges pays nothing at start-up.
 */

/** True when the manifest's raw `engines` value says anything about yolop (valid or not). */
export function declaresEngines(engines: unknown): boolean {
  if (engines === undefined || engines === null) return false;
  if (typeof engines !== 'object' || Array.isArray(engines)) return true; // malformed, which is worth a warning
  const range = Object.hasOwn(engines, 'yolop') ? (engines as Record<string, unknown>).yolop : undefined;
  return range !== undefined && range !== null;
}

/** The verdict for a manifest without `engines.yolop` (no agent, no semver needed to say it). */
export const NO_ENGINES = Object.freeze({ status: 'none', requires: null, agent: null, detail: 'declares no engines.yolop' } as const);
