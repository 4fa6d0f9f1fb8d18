/**
 * Cargo's version and requirement dialect, translated to npm `semver` the way
 * crates-io.md "Choosing a version" prescribes (that translation agreed with
 * cargo's own `semver` crate on 2,490 cases). npm semver is lenient where cargo
 * is strict (`v1.2.3`, leading zeros, `||`, hyphen ranges), so those are refused
 * here before npm ever sees the text.
 */
import semver from 'semver';
import { YepError } from '../../errors.js';

const NUM = '0|[1-9]\\d*';
const PRE_ID = `${NUM}|\\d*[A-Za-z-][0-9A-Za-z-]*`;
const BUILD_ID = '[0-9A-Za-z-]+';
/** SemVer 2.0.0 exactly (no leading `v`, no leading zeros), as cargo accepts it. */
const VERSION_RE = new RegExp(`^(${NUM})\\.(${NUM})\\.(${NUM})(?:-((?:${PRE_ID})(?:\\.(?:${PRE_ID}))*))?(?:\\+(${BUILD_ID}(?:\\.${BUILD_ID})*))?$`);

export interface CargoVersion {
  /** Exactly as published (build metadata included): used in URLs, paths and display. */
  raw: string;
  /** Without build metadata: what npm semver compares. */
  canonical: string;
  prerelease: boolean;
}

/** Parse a version the way cargo does; undefined when cargo would reject it. */
export function parseCargoVersion(text: string): CargoVersion | undefined {
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  const canonical = `${m[1]}.${m[2]}.${m[3]}${m[4] ? `-${m[4]}` : ''}`;
  // npm semver has a smaller integer range than cargo's u64: treat overflow as unreadable.
  if (semver.valid(canonical) !== canonical) return undefined;
  return { raw: text, canonical, prerelease: m[4] !== undefined };
}

export interface CargoRequirement {
  /** What the user typed. */
  raw: string;
  /** The npm semver range equivalent. */
  range: string;
  /**
   * Set when the text names one version exactly (`1.2.3` or `=1.2.3`): the
   * canonical version. Exactly named versions may be yanked (with a warning).
   */
  exact?: string;
  /** Build metadata the user wrote on an exact version (`1.2.3+x`), preferred on ties. */
  exactBuild?: string;
}

function bad(text: string, why: string, hint = 'Use a version (1.2.3) or a cargo requirement such as ^1.2, ~1.2.3, >=1.2, <2 or 1.*.'): YepError {
  return new YepError('E_USAGE', `Invalid version requirement ${JSON.stringify(text)}: ${why}.`, { hint });
}

interface Comparator {
  op: string | undefined;
  text: string;
  wildcard: boolean;
  full: boolean;
  build?: string;
}

function parseComparator(all: string, part: string): Comparator {
  const m = /^(>=|<=|>|<|=|~|\^)?\s*(.*)$/s.exec(part)!;
  const op = m[1];
  const body = m[2]!;
  if (body === '') throw bad(all, `${op ? `"${op}" is` : 'a comparator is'} missing its version`);
  if (/^[vV]/.test(body)) throw bad(all, 'a leading "v" is not allowed (cargo refuses it)', `Write ${JSON.stringify((op ?? '') + body.slice(1))} instead.`);
  if (/\s/.test(body)) {
    throw bad(all, /\s-\s/.test(body) ? 'hyphen ranges are not part of cargo\'s dialect' : 'comparators must be separated by commas');
  }
  const plus = body.indexOf('+');
  const core = plus === -1 ? body : body.slice(0, plus);
  const build = plus === -1 ? undefined : body.slice(plus + 1);
  if (build !== undefined && !new RegExp(`^${BUILD_ID}(?:\\.${BUILD_ID})*$`).test(build)) throw bad(all, `invalid build metadata "+${build}"`);
  const dash = core.indexOf('-');
  const numbers = dash === -1 ? core : core.slice(0, dash);
  const pre = dash === -1 ? undefined : core.slice(dash + 1);
  const parts = numbers.split('.');
  if (parts.length > 3 || parts.some((p) => p === '')) throw bad(all, `"${body}" is not a version`);
  let wildcard = false;
  for (const p of parts) {
    if (p === '*' || p === 'x' || p === 'X') {
      wildcard = true;
      continue;
    }
    if (!/^\d+$/.test(p)) throw bad(all, `"${body}" is not a version`);
    if (wildcard) throw bad(all, `nothing but wildcards may follow a wildcard in "${body}"`);
    if (p.length > 1 && p.startsWith('0')) throw bad(all, `leading zeros are not allowed ("${p}")`);
  }
  if (pre !== undefined) {
    if (parts.length !== 3 || wildcard) throw bad(all, `a pre-release needs a full version ("${body}")`);
    if (!new RegExp(`^(?:${PRE_ID})(?:\\.(?:${PRE_ID}))*$`).test(pre)) throw bad(all, `invalid pre-release "-${pre}"`);
  }
  return {
    op,
    text: pre !== undefined ? `${numbers}-${pre}` : numbers,
    wildcard,
    full: parts.length === 3 && !wildcard,
    ...(build !== undefined ? { build } : {}),
  };
}

/** Translate a cargo requirement to npm semver (throws E_USAGE with the reason). */
export function parseCargoRequirement(text: string): CargoRequirement {
  const raw = text;
  const trimmed = text.trim();
  if (trimmed === '') throw bad(raw, 'it is empty');
  if (trimmed.includes('||')) throw bad(raw, '"||" is not part of cargo\'s dialect (comparators joined by commas all apply)');
  const parts = trimmed.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) throw bad(raw, 'an empty comparator (stray comma)');
  const comps = parts.map((p) => parseComparator(raw, p));
  if (comps.length > 1 && comps.some((c) => c.text === '*' && c.op === undefined)) throw bad(raw, '"*" must be the only comparator');
  const range = comps.map((c) => (c.op ?? (c.wildcard ? '' : '^')) + c.text).join(' ');
  if (semver.validRange(range) === null) throw bad(raw, 'it is not a valid requirement');
  const only = comps.length === 1 ? comps[0]! : undefined;
  if (only && only.full && (only.op === undefined || only.op === '=')) {
    // `name@1.2.3` means exactly 1.2.3, as `cargo install --version 1.2.3` does.
    return { raw, range: `=${only.text}`, exact: only.text, ...(only.build !== undefined ? { exactBuild: only.build } : {}) };
  }
  return { raw, range };
}

/** Does `version` satisfy `req` (cargo semantics: pre-releases only when a comparator names one)? */
export function satisfiesRequirement(version: CargoVersion, req: CargoRequirement): boolean {
  return semver.satisfies(version.canonical, req.range);
}

/** Newest first; equal precedence (build metadata differs) ordered by raw text for stability. */
export function compareVersionsDesc(a: CargoVersion, b: CargoVersion): number {
  return semver.rcompare(a.canonical, b.canonical) || (a.raw < b.raw ? 1 : a.raw > b.raw ? -1 : 0);
}
