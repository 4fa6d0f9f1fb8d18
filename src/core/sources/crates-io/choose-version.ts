/**
 * Pick the version to install from a crate's index entries (crates-io.md
 * "Choosing a version"): highest non-yanked match; no requirement means the
 * highest stable; an exactly named version may be yanked (with a warning);
 * only versions with a well-formed cksum are installable, since nothing is ever
 * installed unverified. Every dead end gets its own message.
 */
import { YepError } from '../../errors.js';
import { compareVersionsDesc, parseCargoRequirement, satisfiesRequirement, type CargoRequirement } from './cargo-version.js';
import { isInstallableCksum, type IndexEntry } from './index-lines.js';
import { truncateRedacted } from '../../text/redact.js';

export interface VersionChoice {
  entry: IndexEntry;
  /** Things the user should hear (yanked, skipped unverifiable versions). */
  warnings: string[];
}

function listVersions(entries: IndexEntry[], max = 6): string {
  const shown = entries.slice(0, max).map((e) => e.vers + (e.yanked ? ' (yanked)' : ''));
  return shown.join(', ') + (entries.length > max ? `, … (${entries.length} in all)` : '');
}

export interface CandidateChoice {
  /** Every installable version `requirement` selects, best first (`entries[0]` is chooseVersion's choice). */
  entries: IndexEntry[];
  /** Things the user should hear about the best one (yanked, skipped unverifiable versions). */
  warnings: string[];
}

/** Choose from `entries` for `requirement` (undefined = latest stable). Throws YepError on every dead end. */
export function chooseVersion(crate: string, entries: IndexEntry[], requirement?: string): VersionChoice {
  const c = chooseCandidates(crate, entries, requirement);
  return { entry: c.entries[0]!, warnings: c.warnings };
}

/**
 * Every version `chooseVersion` could pick, in the order it prefers them: the walk
 * for `engines.yolop` (operations/agent-walk) tries them newest first, since a
 * version's agent requirement is known only after its download.
 */
export function chooseCandidates(crate: string, entries: IndexEntry[], requirement?: string): CandidateChoice {
  const req: CargoRequirement | undefined = requirement === undefined ? undefined : parseCargoRequirement(requirement);
  const sorted = [...entries].sort((a, b) => compareVersionsDesc(a.version, b.version));
  if (sorted.length === 0) {
    throw new YepError('E_NOT_FOUND', `The index lists no version of ${crate} that yep-ext can read.`, {
      hint: 'The registry may use a newer index format. Try a newer yep-ext.',
    });
  }
  const matching = sorted.filter((e) => (req ? satisfiesRequirement(e.version, req) : !e.version.prerelease));
  const exact = req?.exact !== undefined;
  let usable = exact ? matching : matching.filter((e) => !e.yanked);
  if (exact && req.exactBuild !== undefined) {
    // `1.2.3+x` typed in full: prefer that very build when several share 1.2.3.
    const same = usable.filter((e) => e.vers === `${req.exact}+${req.exactBuild}`);
    if (same.length > 0) usable = same;
  }
  if (usable.length === 0) throw noMatch(crate, sorted, matching, req);

  const warnings: string[] = [];
  const verifiable = usable.filter((e) => isInstallableCksum(e.cksum));
  const best = usable[0]!;
  if (verifiable.length === 0) {
    throw new YepError(
      'E_INTEGRITY',
      `${crate} ${best.vers} cannot be installed: the index gives no valid checksum for it${usable.length > 1 ? ' (nor for any other matching version)' : ''}.`,
      {
        hint: 'yep-ext never installs a crate it cannot verify. Report this to the registry.',
        details: { crate, version: best.vers, cksum: truncateRedacted(best.cksum, 80, [], { marker: () => '…' }) },
      },
    );
  }
  const chosen = verifiable[0]!;
  if (chosen !== best) {
    warnings.push(
      `skipped ${crate} ${usable
        .slice(0, usable.indexOf(chosen))
        .map((e) => e.vers)
        .join(', ')}: the index gives no valid checksum; using ${chosen.vers}`,
    );
  }
  if (chosen.yanked) warnings.push(`${crate} ${chosen.vers} is yanked; installing it because you named it exactly`);
  return { entries: verifiable, warnings };
}

function noMatch(crate: string, sorted: IndexEntry[], matching: IndexEntry[], req: CargoRequirement | undefined): YepError {
  const live = sorted.filter((e) => !e.yanked);
  if (!req) {
    const stable = sorted.filter((e) => !e.version.prerelease);
    if (stable.length > 0 && stable.every((e) => e.yanked)) {
      const pre = live.filter((e) => e.version.prerelease);
      return new YepError('E_NOT_FOUND', `Every release of ${crate} is yanked (${listVersions(stable)}).`, {
        hint:
          pre.length > 0
            ? `Pre-releases exist: install one by naming it, e.g. ${crate}@${pre[0]!.vers}. Or name a yanked version exactly to install it anyway.`
            : `Name a version exactly to install it anyway, e.g. ${crate}@${stable[0]!.vers}.`,
        details: { crate, reason: 'only-yanked' },
      });
    }
    const pre = live.filter((e) => e.version.prerelease);
    if (pre.length > 0) {
      return new YepError('E_NOT_FOUND', `${crate} has only pre-release versions (${listVersions(pre)}).`, {
        hint: `Install one by naming it, e.g. ${crate}@${pre[0]!.vers}.`,
        details: { crate, reason: 'only-prerelease' },
      });
    }
    return new YepError('E_NOT_FOUND', `Every version of ${crate} is yanked (${listVersions(sorted)}).`, {
      hint: `Name a version exactly to install it anyway, e.g. ${crate}@${sorted[0]!.vers}.`,
      details: { crate, reason: 'only-yanked' },
    });
  }
  if (matching.length > 0) {
    return new YepError('E_NOT_FOUND', `Only yanked versions of ${crate} match ${req.raw} (${listVersions(matching)}).`, {
      hint: `Name one exactly to install it anyway, e.g. ${crate}@${matching[0]!.vers}, or pick another version: ${listVersions(live) || 'none available'}.`,
      details: { crate, requirement: req.raw, reason: 'only-yanked' },
    });
  }
  const preMatch = live.filter((e) => e.version.prerelease && satisfiesRequirement(e.version, req, { includePrerelease: true }));
  const hint =
    preMatch.length > 0
      ? `Pre-releases match only when the requirement names one: try ${crate}@${preMatch[0]!.vers}.`
      : live.length > 0
        ? `Available: ${listVersions(live)}.`
        : 'Every version is yanked.';
  return new YepError('E_NOT_FOUND', `No version of ${crate} matches ${req.raw}.`, {
    hint,
    details: { crate, requirement: req.raw, available: live.slice(0, 20).map((e) => e.vers), reason: 'no-match' },
  });
}
