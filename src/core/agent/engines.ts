/**
 * `engines.yolop` against the installed agent: pure. A manifest states the agent
 * versions it needs as an npm range (as in package.json); the host ignores the
 * field (host-compat §2), so yep-ext is the only one who can keep a package away
 * from an agent that cannot run it. One verdict type serves install, update,
 * enable, list, doctor and, later, info and outdated.
 *
 * npm's own rules: `semver.satisfies` with `includePrerelease` (as npm-install-checks
 * checks `engines.node`), so a development build of the agent (0.14.0-dev.3) counts
 * as the version it leads to. A range semver cannot parse, or an `engines.yolop` that
 * is not a string, is a manifest warning and constrains nothing.
 */
import satisfies from 'semver/functions/satisfies.js';
import validRange from 'semver/ranges/valid.js';
import { sanitize } from '../text/sanitize.js';
import { NO_ENGINES, declaresEngines } from './engines-declared.js';

/** What is known of the installed agent (agent-version.ts finds it). */
export type AgentVersion = { known: true; version: string; path: string } | { known: false; reason: string; path?: string };

/**
 * none: the manifest states no `engines.yolop`; admits / excludes: the agent's
 * version is / is not in the range; unknown-agent: a range, but no agent version to
 * check it against (never an error); malformed: not a range (a warning; ignored).
 */
export type EnginesStatus = 'none' | 'admits' | 'excludes' | 'unknown-agent' | 'malformed';

/** The check's answer, as `--json` prints it. */
export interface EnginesVerdict {
  status: EnginesStatus;
  /** `engines.yolop` as declared (a non-string is shown JSON-encoded); null when none. */
  requires: string | null;
  /** The agent version checked against; null when unknown. */
  agent: string | null;
  /** One line for people: "needs yolop >=0.13; you have 0.12.1". Package text sanitised. */
  detail: string;
}

/** `engines.yolop` read out of a manifest's raw `engines` value. */
export type EnginesRequirement = { declared: false } | { declared: true; range: string } | { declared: true; malformed: string };

/**
 * semver parses a range anew on every call; a store repeats a few ranges many
 * times (`list` checks every package). Answers are remembered per string, bounded.
 */
const memo = new Map<string, boolean>();
function remembered(key: string, compute: () => boolean): boolean {
  let v = memo.get(key);
  if (v === undefined) {
    if (memo.size >= 512) memo.clear();
    v = compute();
    memo.set(key, v);
  }
  return v;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Package text in a message: control characters shown, length capped. */
const shown = (text: string): string => sanitize(text, { max: 120 });

/** What the manifest's `engines` says about yolop. */
export function enginesRequirement(engines: unknown): EnginesRequirement {
  if (!declaresEngines(engines)) return { declared: false };
  if (!isObj(engines)) return { declared: true, malformed: `"engines" is ${JSON.stringify(engines)?.slice(0, 80) ?? typeof engines}, not an object` };
  const range = engines.yolop;
  if (typeof range !== 'string')
    return { declared: true, malformed: `"engines.yolop" is ${JSON.stringify(range)?.slice(0, 80) ?? typeof range}, not a string` };
  if (!remembered(`valid\0${range}`, () => validRange(range) !== null))
    return { declared: true, malformed: `"engines.yolop" ${JSON.stringify(range.slice(0, 80))} is not a version range` };
  return { declared: true, range };
}

/**
 * The verdict for a manifest (anything with its raw `engines`) and an agent.
 * Pure and total: any `engines` value, any agent.
 */
export function checkEngines(manifest: { engines?: unknown }, agent: AgentVersion): EnginesVerdict {
  const req = enginesRequirement(manifest.engines);
  const version = agent.known ? agent.version : null;
  if (!req.declared) return { ...NO_ENGINES };
  if ('malformed' in req) {
    const raw = isObj(manifest.engines) ? manifest.engines.yolop : manifest.engines;
    return {
      status: 'malformed',
      requires: typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw)),
      agent: version,
      detail: `${shown(req.malformed)} (ignored)`,
    };
  }
  const range = req.range;
  if (!agent.known)
    return {
      status: 'unknown-agent',
      requires: range,
      agent: null,
      detail: `needs yolop ${shown(range)}; the installed yolop's version is unknown (${agent.reason})`,
    };
  // Both sides are valid here; a throw would be a semver bug, and a check must never crash.
  let ok: boolean;
  try {
    ok = remembered(`satisfies\0${agent.version}\0${range}`, () => satisfies(agent.version, range, { includePrerelease: true }));
  } catch {
    return {
      status: 'malformed',
      requires: range,
      agent: agent.version,
      detail: `"engines.yolop" ${JSON.stringify(shown(range))} cannot be checked (ignored)`,
    };
  }
  return ok
    ? { status: 'admits', requires: range, agent: agent.version, detail: `needs yolop ${shown(range)}; you have ${agent.version}` }
    : { status: 'excludes', requires: range, agent: agent.version, detail: `needs yolop ${shown(range)}; you have ${agent.version}` };
}

/** "hello 0.5.0 needs yolop >=0.13; you have 0.12.1": the verdict about one package, for messages. */
export function describeVerdict(what: string, verdict: EnginesVerdict): string {
  return verdict.status === 'malformed' ? `${what}: ${verdict.detail}` : `${what} ${verdict.detail}`;
}
