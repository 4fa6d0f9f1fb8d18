/**
 * Cargo's version and requirement dialect, exactly: a port of the Rust `semver`
 * crate (1.0.x, the one cargo uses) `Version::parse`, `VersionReq::parse` and
 * `VersionReq::matches`, with numbers as BigInt so every valid u64 works (npm
 * semver stops at 2^53). test/fixtures/cargo-semver/table.json holds that crate's
 * own verdicts on 457 requirement strings and 70 versions
 * (scripts/cargo-semver-oracle/), and test/unit/cargo-semver.test.ts compares
 * every row. Acceptance follows the port alone; the friendlier messages for the
 * common mistakes (`v1.2`, `||`, hyphen ranges, a tab) only word the refusal.
 *
 * One deliberate difference, documented in docs/crates.md: a lone full version
 * without an operator (`1.2.3`) means exactly that version, as `cargo install
 * --version` reads it, not `^1.2.3` as Cargo.toml does.
 *
 * About 470 lines, on purpose in one file: parsing and matching follow the
 * crate's parse.rs and eval.rs function by function, so the two can be read side
 * by side when cargo changes.
 */
import { YepError } from '../../errors.js';

const U64_MAX = (1n << 64n) - 1n;
const MAX_COMPARATORS = 32;

export interface CargoVersion {
  /** Exactly as published (build metadata included): used in URLs, paths and display. */
  raw: string;
  /** Without build metadata: what precedence is compared on. */
  canonical: string;
  prerelease: boolean;
  major: bigint;
  minor: bigint;
  patch: bigint;
  /** Pre-release identifiers ('' for a release). */
  pre: string;
}

type Position = 'major' | 'minor' | 'patch' | 'pre-release' | 'build metadata';
const POS_TEXT: Record<Position, string> = {
  major: 'major version number',
  minor: 'minor version number',
  patch: 'patch version number',
  'pre-release': 'pre-release identifier',
  'build metadata': 'build metadata',
};

/** A parse failure in the Rust crate's terms (its Display text is `message`). */
class SemverError extends Error {
  constructor(
    readonly kind:
      | 'empty'
      | 'unexpected-end'
      | 'leading-zero'
      | 'overflow'
      | 'empty-segment'
      | 'illegal'
      | 'wildcard-not-only'
      | 'after-wildcard'
      | 'expected-comma'
      | 'too-many'
      | 'unexpected-char'
      | 'unexpected-char-after',
    message: string,
    readonly pos?: Position,
  ) {
    super(message);
  }
}

const quoteChar = (ch: string): string => {
  const cp = ch.codePointAt(0)!;
  return cp < 0x20 || cp === 0x7f || (cp >= 0x80 && cp <= 0xa0) || [0xad, 0x1680, 0x2028, 0x2029, 0x3000, 0xfeff].includes(cp) || (cp >= 0x2000 && cp <= 0x200f)
    ? `'\\u{${cp.toString(16)}}'`
    : `'${ch}'`;
};
const firstChar = (s: string): string => String.fromCodePoint(s.codePointAt(0)!);

function numericIdentifier(input: string, pos: Position): [bigint, string] {
  let len = 0;
  let value = 0n;
  while (len < input.length) {
    const c = input.charCodeAt(len);
    if (c < 0x30 || c > 0x39) break;
    if (value === 0n && len > 0) throw new SemverError('leading-zero', `invalid leading zero in ${POS_TEXT[pos]}`, pos);
    value = value * 10n + BigInt(c - 0x30);
    if (value > U64_MAX) throw new SemverError('overflow', `value of ${POS_TEXT[pos]} exceeds u64::MAX`, pos);
    len++;
  }
  if (len > 0) return [value, input.slice(len)];
  if (input.length > 0) throw new SemverError('unexpected-char', `unexpected character ${quoteChar(firstChar(input))} while parsing ${POS_TEXT[pos]}`, pos);
  throw new SemverError('unexpected-end', `unexpected end of input while parsing ${POS_TEXT[pos]}`, pos);
}

function dot(input: string, pos: Position): string {
  if (input.startsWith('.')) return input.slice(1);
  if (input.length > 0) throw new SemverError('unexpected-char-after', `unexpected character ${quoteChar(firstChar(input))} after ${POS_TEXT[pos]}`, pos);
  throw new SemverError('unexpected-end', `unexpected end of input while parsing ${POS_TEXT[pos]}`, pos);
}

/** Dot-separated [0-9A-Za-z-] segments; numeric pre-release segments without leading zeros. */
function identifier(input: string, pos: 'pre-release' | 'build metadata'): [string, string] {
  let acc = 0;
  let seg = 0;
  let nondigit = false;
  for (;;) {
    const c = input.charCodeAt(acc + seg);
    const isAlpha = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d;
    const isDigit = c >= 0x30 && c <= 0x39;
    if (isAlpha) {
      seg++;
      nondigit = true;
      continue;
    }
    if (isDigit) {
      seg++;
      continue;
    }
    const boundary = acc + seg < input.length ? input[acc + seg] : undefined;
    if (seg === 0) {
      if (acc === 0 && boundary !== '.') return ['', input];
      throw new SemverError('empty-segment', `empty identifier segment in ${POS_TEXT[pos]}`, pos);
    }
    if (pos === 'pre-release' && seg > 1 && !nondigit && input[acc] === '0')
      throw new SemverError('leading-zero', `invalid leading zero in ${POS_TEXT[pos]}`, pos);
    acc += seg;
    if (boundary === '.') {
      acc += 1;
      seg = 0;
      nondigit = false;
    } else {
      return [input.slice(0, acc), input.slice(acc)];
    }
  }
}

function parseVersionStrict(text: string): { major: bigint; minor: bigint; patch: bigint; pre: string; build: string } {
  if (text === '') throw new SemverError('empty', 'empty string, expected a semver version');
  const [major, afterMajor] = numericIdentifier(text, 'major');
  const [minor, afterMinor] = numericIdentifier(dot(afterMajor, 'major'), 'minor');
  const [patch, afterPatch] = numericIdentifier(dot(afterMinor, 'minor'), 'patch');
  let rest = afterPatch;
  let pos: Position = 'patch';
  let pre = '';
  let build = '';
  if (rest.startsWith('-')) {
    pos = 'pre-release';
    [pre, rest] = identifier(rest.slice(1), 'pre-release');
    if (pre === '') throw new SemverError('empty-segment', 'empty identifier segment in pre-release identifier', pos);
  }
  if (rest.startsWith('+')) {
    pos = 'build metadata';
    [build, rest] = identifier(rest.slice(1), 'build metadata');
    if (build === '') throw new SemverError('empty-segment', 'empty identifier segment in build metadata', pos);
  }
  if (rest.length > 0) throw new SemverError('unexpected-char-after', `unexpected character ${quoteChar(firstChar(rest))} after ${POS_TEXT[pos]}`, pos);
  return { major, minor, patch, pre, build };
}

/** Parse a version the way cargo does; undefined when cargo would reject it. */
export function parseCargoVersion(text: string): CargoVersion | undefined {
  let v: ReturnType<typeof parseVersionStrict>;
  try {
    v = parseVersionStrict(text);
  } catch (e) {
    if (e instanceof SemverError) return undefined;
    throw e;
  }
  const canonical = `${v.major}.${v.minor}.${v.patch}${v.pre ? `-${v.pre}` : ''}`;
  return { raw: text, canonical, prerelease: v.pre !== '', major: v.major, minor: v.minor, patch: v.patch, pre: v.pre };
}

// ---------------------------------------------------------------- requirements

type Op = '=' | '>' | '>=' | '<' | '<=' | '~' | '^' | '*';

interface CargoComparator {
  /** `*` is cargo's Op::Wildcard: an operator-less `1.*` or `1.2.*`. */
  op: Op;
  major: bigint;
  minor?: bigint;
  patch?: bigint;
  pre: string;
  /** Build metadata as written (ignored when matching, as in cargo). */
  build?: string;
}

export interface CargoRequirement {
  /** What the user typed. */
  raw: string;
  /** All must match; empty means `*`. */
  comparators: CargoComparator[];
  /** The requirement as cargo prints it (`>=1.2, <2`), for messages. */
  range: string;
  /**
   * Set when the text names one version exactly (`1.2.3` or `=1.2.3`): the
   * canonical version. Exactly named versions may be yanked (with a warning).
   */
  exact?: string;
  /** Build metadata the user wrote on an exact version (`1.2.3+x`), preferred on ties. */
  exactBuild?: string;
}

const WILDCARDS = ['*', 'x', 'X'];
const trimSpaces = (s: string): string => s.replace(/^ +/, '');

function opOf(input: string): [Op | undefined, string] {
  for (const op of ['>=', '<=', '=', '>', '<', '~', '^'] as const) if (input.startsWith(op)) return [op, input.slice(op.length)];
  return [undefined, input];
}

function comparatorOf(input: string): [CargoComparator, Position, string] {
  const [written, afterOp] = opOf(input);
  let op: Op = written ?? '^';
  let text = trimSpaces(afterOp);
  let pos: Position = 'major';
  const [major, afterMajor] = numericIdentifier(text, pos);
  text = afterMajor;
  let minor: bigint | undefined;
  let patch: bigint | undefined;
  let hasWildcard = false;
  if (text.startsWith('.')) {
    text = text.slice(1);
    pos = 'minor';
    if (WILDCARDS.includes(text[0] ?? '')) {
      hasWildcard = true;
      if (!written) op = '*';
      text = text.slice(1);
    } else {
      [minor, text] = numericIdentifier(text, pos);
    }
  }
  if (text.startsWith('.')) {
    text = text.slice(1);
    pos = 'patch';
    if (WILDCARDS.includes(text[0] ?? '')) {
      if (!written) op = '*';
      text = text.slice(1);
    } else if (hasWildcard) {
      throw new SemverError('after-wildcard', 'unexpected character after wildcard in version req');
    } else {
      [patch, text] = numericIdentifier(text, pos);
    }
  }
  let pre = '';
  if (patch !== undefined && text.startsWith('-')) {
    pos = 'pre-release';
    [pre, text] = identifier(text.slice(1), 'pre-release');
    if (pre === '') throw new SemverError('empty-segment', 'empty identifier segment in pre-release identifier', pos);
  }
  let build: string | undefined;
  if (patch !== undefined && text.startsWith('+')) {
    pos = 'build metadata';
    [build, text] = identifier(text.slice(1), 'build metadata');
    if (build === '') throw new SemverError('empty-segment', 'empty identifier segment in build metadata', pos);
  }
  text = trimSpaces(text);
  return [
    { op, major, ...(minor !== undefined ? { minor } : {}), ...(patch !== undefined ? { patch } : {}), pre, ...(build !== undefined ? { build } : {}) },
    pos,
    text,
  ];
}

/** VersionReq::parse, exactly (throws SemverError with the crate's message). */
function parseReqStrict(text: string): CargoComparator[] {
  const start = trimSpaces(text);
  if (WILDCARDS.includes(start[0] ?? '')) {
    const rest = trimSpaces(start.slice(1));
    if (rest === '') return [];
    if (rest.startsWith(',')) throw new SemverError('wildcard-not-only', `wildcard req (${start[0]}) must be the only comparator in the version req`);
    throw new SemverError('after-wildcard', 'unexpected character after wildcard in version req');
  }
  const out: CargoComparator[] = [];
  let input = start;
  for (;;) {
    let parsed: [CargoComparator, Position, string];
    try {
      parsed = comparatorOf(input);
    } catch (e) {
      if (e instanceof SemverError && WILDCARDS.includes(input[0] ?? '')) {
        const rest = trimSpaces(input.slice(1));
        if (rest === '' || rest.startsWith(','))
          throw new SemverError('wildcard-not-only', `wildcard req (${input[0]}) must be the only comparator in the version req`);
      }
      throw e;
    }
    const [cmp, pos, rest] = parsed;
    out.push(cmp);
    if (rest === '') return out;
    if (!rest.startsWith(',')) throw new SemverError('expected-comma', `expected comma after ${POS_TEXT[pos]}, found ${quoteChar(firstChar(rest))}`, pos);
    if (out.length === MAX_COMPARATORS) throw new SemverError('too-many', 'excessive number of version comparators');
    input = trimSpaces(rest.slice(1));
  }
}

function bad(text: string, why: string, hint = 'Use a version (1.2.3) or a cargo requirement such as ^1.2, ~1.2.3, >=1.2, <2 or 1.*.'): YepError {
  return new YepError('E_USAGE', `Invalid version requirement ${JSON.stringify(text)}: ${why}.`, { hint });
}

const OTHER_SPACE = /[\t\n\v\f\r\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** Why cargo refuses `text`, worded for the common mistakes; `err` is the parser's own reason. */
function explain(text: string, err: SemverError): YepError {
  const t = text.replace(/^ +| +$/g, '');
  if (t === '') return bad(text, 'it is empty');
  const space = OTHER_SPACE.exec(text);
  if (space) {
    const cp = space[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return bad(text, `it contains U+${cp} (only plain spaces, U+0020, may separate its parts: cargo refuses any other whitespace)`);
  }
  if (/[\x00-\x1f\x7f]/.test(text)) return bad(text, 'it contains control characters');
  if (t.includes('||')) return bad(text, '"||" is not part of cargo\'s dialect (comparators joined by commas all apply)');
  if (/ - /.test(t)) return bad(text, "hyphen ranges are not part of cargo's dialect");
  const parts = t.split(',').map((p) => p.replace(/^ +| +$/g, ''));
  if (parts.some((p) => p === '')) return bad(text, 'an empty comparator (stray comma)');
  if (parts.length > MAX_COMPARATORS) return bad(text, `more than ${MAX_COMPARATORS} comparators`);
  for (const part of parts) {
    const [op, rest] = opOf(part);
    const body = trimSpaces(rest);
    if (body === '') return bad(text, `${op ? `"${op}" is` : 'a comparator is'} missing its version`);
    if (/^[vV]/.test(body)) return bad(text, 'a leading "v" is not allowed (cargo refuses it)', `Write ${JSON.stringify((op ?? '') + body.slice(1))} instead.`);
    const w = body[0] ?? '';
    if (WILDCARDS.includes(w)) {
      if (op)
        return bad(
          text,
          `an operator cannot apply to a wildcard major version ("${part}")`,
          `Write "${w}" alone for any version, or give a major version: ${op}1.*`,
        );
      if (body.length > 1 && body[1] !== ' ')
        return bad(text, `a wildcard major version cannot be followed by more parts ("${body}")`, `Write "${w}" alone for any version.`);
      if (parts.length > 1) return bad(text, `"${w}" must be the only comparator`);
    }
    if (/ /.test(body)) return bad(text, 'comparators must be separated by commas');
    const core = body.split('+')[0]!;
    const numbers = core.split('-')[0]!.split('.');
    if (body.includes('+') && (numbers.length < 3 || numbers.some((n) => WILDCARDS.includes(n)))) {
      return bad(text, `build metadata needs a full version ("${body}")`, 'Write major.minor.patch+build, or drop the +build part.');
    }
    if (core.includes('-') && numbers.every((n) => /^\d+$/.test(n)) && numbers.length < 3) return bad(text, `a pre-release needs a full version ("${body}")`);
    if (numbers.length > 3) return bad(text, `"${body}" is not a version`);
    if (numbers.some((n) => n !== '' && !/^\d+$/.test(n) && !WILDCARDS.includes(n))) return bad(text, `"${body}" is not a version`);
  }
  switch (err.kind) {
    case 'leading-zero':
      return err.pos === 'pre-release'
        ? bad(text, 'invalid pre-release: leading zeros are not allowed in a numeric identifier')
        : bad(text, `leading zeros are not allowed (${err.message})`);
    case 'overflow':
      return bad(text, `a number is larger than cargo allows (${err.message}: at most 18446744073709551615)`);
    case 'after-wildcard':
      return bad(text, 'nothing but wildcards may follow a wildcard');
    case 'wildcard-not-only':
      return bad(text, `${err.message.replace(/^wildcard req \((.)\)/, '"$1"')}`);
    case 'expected-comma':
      return bad(text, 'comparators must be separated by commas');
    case 'empty-segment':
      return err.pos === 'build metadata'
        ? bad(text, 'invalid build metadata (empty or not [0-9A-Za-z-])')
        : bad(text, 'invalid pre-release (empty or not [0-9A-Za-z-])');
    default:
      return bad(text, err.message);
  }
}

function versionText(c: CargoComparator): string {
  if (c.minor === undefined) return c.op === '*' ? `${c.major}.*` : `${c.major}`;
  if (c.patch === undefined) return c.op === '*' ? `${c.major}.${c.minor}.*` : `${c.major}.${c.minor}`;
  return `${c.major}.${c.minor}.${c.patch}${c.pre ? `-${c.pre}` : ''}`;
}

function describeRange(comparators: CargoComparator[]): string {
  if (comparators.length === 0) return '*';
  return comparators.map((c) => (c.op === '*' ? versionText(c) : `${c.op}${versionText(c)}`)).join(', ');
}

/** Parse a cargo requirement (throws E_USAGE with the reason when cargo would refuse it). */
export function parseCargoRequirement(text: string): CargoRequirement {
  let comparators: CargoComparator[];
  try {
    comparators = parseReqStrict(text);
  } catch (e) {
    if (e instanceof SemverError) throw explain(text, e);
    throw e;
  }
  const only = comparators.length === 1 ? comparators[0]! : undefined;
  const written = opOf(trimSpaces(text))[0];
  if (only && only.patch !== undefined && only.minor !== undefined && (written === undefined || written === '=')) {
    // `name@1.2.3` means exactly 1.2.3, as `cargo install --version 1.2.3` does.
    const exactCmp: CargoComparator = { ...only, op: '=' };
    const exact = versionText(exactCmp);
    return { raw: text, comparators: [exactCmp], range: `=${exact}`, exact, ...(only.build !== undefined ? { exactBuild: only.build } : {}) };
  }
  return { raw: text, comparators, range: describeRange(comparators) };
}

// ---------------------------------------------------------------- matching (eval.rs)

/** Pre-release precedence (SemVer 11.4): '' (a release) ranks above any pre-release. */
function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  const as = a.split('.');
  const bs = b.split('.');
  for (let i = 0; i < as.length; i++) {
    const x = as[i]!;
    const y = bs[i];
    if (y === undefined) return 1;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    let c: number;
    if (xn && yn) c = x.length !== y.length ? x.length - y.length : x < y ? -1 : x > y ? 1 : 0;
    else if (xn) return -1;
    else if (yn) return 1;
    else c = x < y ? -1 : x > y ? 1 : 0;
    if (c !== 0) return Math.sign(c);
  }
  return bs.length > as.length ? -1 : 0;
}

const cmpBig = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

function matchesExact(c: CargoComparator, v: CargoVersion): boolean {
  if (v.major !== c.major) return false;
  if (c.minor !== undefined && v.minor !== c.minor) return false;
  if (c.patch !== undefined && v.patch !== c.patch) return false;
  return v.pre === c.pre;
}

function matchesOrder(c: CargoComparator, v: CargoVersion, sign: 1 | -1): boolean {
  if (v.major !== c.major) return cmpBig(v.major, c.major) === sign;
  if (c.minor === undefined) return false;
  if (v.minor !== c.minor) return cmpBig(v.minor, c.minor) === sign;
  if (c.patch === undefined) return false;
  if (v.patch !== c.patch) return cmpBig(v.patch, c.patch) === sign;
  return comparePrerelease(v.pre, c.pre) === sign;
}

function matchesTilde(c: CargoComparator, v: CargoVersion): boolean {
  if (v.major !== c.major) return false;
  if (c.minor !== undefined && v.minor !== c.minor) return false;
  if (c.patch !== undefined && v.patch !== c.patch) return v.patch > c.patch;
  return comparePrerelease(v.pre, c.pre) >= 0;
}

function matchesCaret(c: CargoComparator, v: CargoVersion): boolean {
  if (v.major !== c.major) return false;
  if (c.minor === undefined) return true;
  if (c.patch === undefined) return c.major > 0n ? v.minor >= c.minor : v.minor === c.minor;
  if (c.major > 0n) {
    if (v.minor !== c.minor) return v.minor > c.minor;
    if (v.patch !== c.patch) return v.patch > c.patch;
  } else if (c.minor > 0n) {
    if (v.minor !== c.minor) return false;
    if (v.patch !== c.patch) return v.patch > c.patch;
  } else if (v.minor !== c.minor || v.patch !== c.patch) {
    return false;
  }
  return comparePrerelease(v.pre, c.pre) >= 0;
}

function matchesImpl(c: CargoComparator, v: CargoVersion): boolean {
  switch (c.op) {
    case '=':
    case '*':
      return matchesExact(c, v);
    case '>':
      return matchesOrder(c, v, 1);
    case '>=':
      return matchesExact(c, v) || matchesOrder(c, v, 1);
    case '<':
      return matchesOrder(c, v, -1);
    case '<=':
      return matchesExact(c, v) || matchesOrder(c, v, -1);
    case '~':
      return matchesTilde(c, v);
    case '^':
      return matchesCaret(c, v);
  }
}

function preIsCompatible(c: CargoComparator, v: CargoVersion): boolean {
  return c.major === v.major && c.minor === v.minor && c.patch === v.patch && c.pre !== '';
}

/**
 * Does `version` satisfy `req`? Cargo semantics: a pre-release matches only when a
 * comparator names the same major.minor.patch with a pre-release tag.
 * `includePrerelease` drops that gate (used to suggest pre-releases in messages).
 */
export function satisfiesRequirement(version: CargoVersion, req: CargoRequirement, options: { includePrerelease?: boolean } = {}): boolean {
  if (!req.comparators.every((c) => matchesImpl(c, version))) return false;
  if (version.pre === '' || options.includePrerelease) return true;
  return req.comparators.some((c) => preIsCompatible(c, version));
}

/** Precedence order (build metadata ignored), ascending. */
export function compareVersions(a: CargoVersion, b: CargoVersion): number {
  return cmpBig(a.major, b.major) || cmpBig(a.minor, b.minor) || cmpBig(a.patch, b.patch) || comparePrerelease(a.pre, b.pre);
}

/** Newest first; equal precedence (build metadata differs) ordered by raw text for stability. */
export function compareVersionsDesc(a: CargoVersion, b: CargoVersion): number {
  return compareVersions(b, a) || (a.raw < b.raw ? 1 : a.raw > b.raw ? -1 : 0);
}
