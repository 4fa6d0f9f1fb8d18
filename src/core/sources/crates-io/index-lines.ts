/**
 * Sparse index file body -> entries, parsed the way cargo does it (crates-io.md
 * "Sparse index"): each line on its own; a line that does not parse is skipped
 * (forward compatibility), never fatal; `v` > 2 skipped; unknown fields ignored;
 * missing `yanked` = false. A whole HTML page (a captive portal or a wrong
 * --index) is an error, not an empty crate.
 */
import { YepError } from '../../errors.js';
import { parseCargoVersion, type CargoVersion } from './cargo-version.js';

export const CKSUM_RE = /^[0-9a-f]{64}$/;
/** The index's `pubtime` form (RFC 3339 in UTC, seconds optional fractions). */
const PUBTIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** The highest index schema version yep-ext understands (cargo's too). */
const MAX_INDEX_SCHEMA = 2;

export interface IndexEntry {
  /** The name as published (its case may differ from what the user typed). */
  name: string;
  /** Raw `vers`, build metadata included. */
  vers: string;
  version: CargoVersion;
  /** As the index gave it; only `CKSUM_RE` values are installable. */
  cksum: string;
  yanked: boolean;
  /** Publication time (`pubtime`, ms since the epoch); undefined when the index gives none or an unreadable one. */
  pubtime?: number;
  /** The line as the index gave it (surrounding whitespace aside): what a mirror copies, byte for byte. */
  line: string;
}

export interface ParsedIndex {
  entries: IndexEntry[];
  /** Lines that failed to parse, used a newer schema, or named another crate. */
  skipped: number;
  /**
   * The name on the first line that names another crate. A registry keeps each crate in a file
   * of its own, so such a line means an altered index or mirror: a reader that only picks
   * versions may skip it, a mirror that copies the file must refuse it.
   */
  foreign?: string;
}

/** True when a body looks like an HTML page rather than JSON lines. */
export function looksLikeHtml(body: string): boolean {
  const head = body.trimStart().slice(0, 256).toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html') || head.startsWith('<?xml') || (head.startsWith('<') && head.includes('<head'));
}

/** The error for an HTML page where index lines were expected (hardening B12). */
export function htmlPageError(where: string): YepError {
  return new YepError('E_NETWORK', `${where} is an HTML page, not sparse index lines.`, {
    hint: 'The registry URL may be wrong (it must be a sparse index root), or a proxy or captive portal answered instead. Check --index / YEP_EXT_INDEX.',
  });
}

/** One line: this crate's entry, the name of another crate the line names, or undefined when it cannot be read. */
function parseLine(line: string, lowerName: string): IndexEntry | { foreign: string } | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return undefined;
  const o = obj as Record<string, unknown>;
  if (typeof o.name !== 'string') return undefined;
  if (o.name.toLowerCase() !== lowerName) return { foreign: o.name };
  if (typeof o.vers !== 'string') return undefined;
  const version = parseCargoVersion(o.vers);
  if (!version) return undefined;
  const v = o.v === undefined ? 1 : o.v;
  if (typeof v !== 'number' || !Number.isInteger(v) || v > MAX_INDEX_SCHEMA) return undefined;
  if (o.yanked !== undefined && o.yanked !== null && typeof o.yanked !== 'boolean') return undefined;
  // A missing or malformed cksum keeps the line: the version exists but is not
  // installable, and the user deserves to hear that rather than "no such version".
  const cksum = typeof o.cksum === 'string' ? o.cksum : '';
  // `pubtime` (YYYY-MM-DDTHH:MM:SSZ) feeds the release-age cooldown; a missing or
  // unreadable one counts as old (crates-io.md), so it never hides a version.
  const pubtime = typeof o.pubtime === 'string' && PUBTIME_RE.test(o.pubtime) ? Date.parse(o.pubtime) : Number.NaN;
  return { name: o.name, vers: o.vers, version, cksum, yanked: o.yanked === true, ...(Number.isFinite(pubtime) ? { pubtime } : {}), line };
}

/** Parse an index file for `crateName` (lines for other names are ignored). */
export function parseIndexFile(body: string, crateName: string, where: string): ParsedIndex {
  if (looksLikeHtml(body)) throw htmlPageError(where);
  const lower = crateName.toLowerCase();
  const entries: IndexEntry[] = [];
  const seen = new Map<string, IndexEntry>();
  let skipped = 0;
  let foreign: string | undefined;
  for (const rawLine of body.split('\n')) {
    const line = rawLine.trim();
    if (line === '') continue;
    const read = parseLine(line, lower);
    if (read && 'foreign' in read) foreign ??= read.foreign;
    const entry = read && 'vers' in read ? read : undefined;
    const earlier = entry && seen.get(entry.vers);
    if (earlier && entry && earlier.cksum !== entry.cksum) throw twoChecksumsError(where, entry);
    if (!entry || earlier) {
      skipped++;
      continue;
    }
    seen.set(entry.vers, entry);
    entries.push(entry);
  }
  return { entries, skipped, ...(foreign === undefined ? {} : { foreign }) };
}

/**
 * One version listed twice with two checksums: a registry publishes a version once, so which
 * bytes are the published ones cannot be told, whichever line a reader takes (the mirror
 * refuses the same index: mirror-crates.ts).
 */
function twoChecksumsError(where: string, entry: IndexEntry): YepError {
  return new YepError('E_INTEGRITY', `${where} lists ${entry.name} ${entry.vers} more than once, with different checksums; a published version has one.`, {
    hint: 'Do not trust this index: check the registry (--index / YEP_EXT_INDEX) or the mirror in front of it.',
    details: { crate: entry.name, version: entry.vers, index: where },
  });
}

export function isInstallableCksum(cksum: string): boolean {
  return CKSUM_RE.test(cksum);
}
