/**
 * The one crate-version picker (docs/crates.md "Which version"): install, update,
 * outdated, info and the library's resolveCrateVersion all ask it, so they cannot
 * disagree. Pure: index lines, the requirement, the cooldown and the installed
 * version in; the versions to take, best first, and what lies outside the
 * requirement out.
 *
 * The rules, in order: the requirement (cargo's dialect; none = the newest stable;
 * a pre-release only when the requirement names one); a yanked version is never
 * chosen by a requirement (one named exactly is, with a warning); only a well-formed
 * cksum is installable (nothing is installed unverified); the release-age cooldown
 * (the user's, and the policy's floor) takes young versions out, and an exactly named
 * young version is refused instead, unless --allow-fresh waives the user's own
 * cooldown (never the policy's). With an installed version (update, outdated, info)
 * only newer versions are candidates (never a downgrade; a dead end is "nothing to
 * move to", not an error), an exact pin is not re-judged by the cooldown (it was
 * judged at install), and the newest release outside the requirement is named when
 * it is newer than what the requirement gives: the one "newer outside" rule.
 * `engines.yolop` is read only after a download, so the engines walks
 * (operations/agent-walk.ts, outdated-engines.ts) take `candidates` and `newer` in
 * this order. Entries without `pubtime` count as old.
 */
import { YepError, isYepError } from '../../errors.js';
import { formatAge } from '../../text/duration.js';
import { truncateRedacted } from '../../text/redact.js';
import {
  compareVersionsDesc,
  parseCargoRequirement,
  parseCargoVersion,
  satisfiesRequirement,
  type CargoRequirement,
  type CargoVersion,
} from './cargo-version.js';
import type { Cooldown } from './cooldown-options.js';
import { isInstallableCksum, type IndexEntry } from './index-lines.js';

export interface PickRequest {
  /** The crate, for messages (the name as published when the index gave one). */
  crate: string;
  entries: IndexEntry[];
  /** Cargo requirement; undefined = the newest stable version. */
  requirement?: string | undefined;
  /** The run's effective cooldown (undefined = none). */
  cooldown?: Cooldown | undefined;
  /** Now, in ms since the epoch (the cooldown's clock). */
  now: number;
  /** The installed pin (update, outdated, info): only newer versions are candidates. */
  installed?: { version: string; cksum?: string | undefined } | undefined;
}

export interface VersionPick {
  /**
   * The versions to take, best first. Install: every installable version the
   * requirement selects that the cooldown admits (the first is what `install` takes).
   * Installed: those newer than the installed one (empty = nothing to move to); first,
   * the installed version itself when the index now gives it another cksum, so the
   * caller refuses the republish.
   */
  candidates: IndexEntry[];
  /**
   * Installed only: every installable version newer than the installed one that the
   * cooldown admits, newest first; `within` = the requirement selects it (`update`
   * reaches it), else only an install of another requirement does (stable releases only).
   */
  newer: { entry: IndexEntry; within: boolean }[];
  /** Installed only: the newest release outside the requirement, when newer than what the requirement gives. */
  outside?: IndexEntry;
  /** Things to tell the user about the version taken (yanked, skipped unverifiable versions, --allow-fresh). */
  warnings: string[];
  /** The newer versions the cooldown kept out, in one line ("skipped x 0.4.1 is 1 h old; …"). */
  skipNote?: string;
}

/**
 * Whether the requirement selects `version` (undefined = the newest stable: every
 * release, no pre-release). The one "within the requirement" rule: the picker, and
 * `Source.updateReaches` (would `update` take this pin?), both ask it.
 */
export function requirementSelects(req: CargoRequirement | undefined, version: CargoVersion): boolean {
  return req ? satisfiesRequirement(version, req) : !version.prerelease;
}

/** The choice for `request`: install (no `installed`) throws on every dead end; installed never does for one. */
export function pickVersions(request: PickRequest): VersionPick {
  return request.installed ? pickFromInstalled(request, request.installed) : pickToInstall(request);
}

function ageOf(e: IndexEntry, now: number): number | undefined {
  return e.pubtime === undefined ? undefined : now - e.pubtime;
}

/** The cooldown's verdict on one entry: true when it is younger than the longer of the two cooldowns. */
function youngTest(cooldown: Cooldown | undefined, now: number): (e: IndexEntry) => boolean {
  if (!cooldown) return () => false;
  const limit = Math.max(cooldown.userMs, cooldown.policyMs);
  return (e) => {
    const age = ageOf(e, now);
    return age !== undefined && age < limit;
  };
}

const policyLabel = (c: Cooldown): string => `policy min_age in ${c.policyFile ?? 'the policy file'}`;

/** The cooldown that decides (the longer one; the policy's on a tie) and how to name it. */
function ruleOf(c: Cooldown): { ms: number; label: string; byPolicy: boolean } {
  const byPolicy = c.policyMs >= c.userMs;
  return { ms: Math.max(c.userMs, c.policyMs), label: byPolicy ? policyLabel(c) : c.userFrom, byPolicy };
}

function listVersions(entries: IndexEntry[], max = 6): string {
  const shown = entries.slice(0, max).map((e) => e.vers + (e.yanked ? ' (yanked)' : ''));
  return shown.join(', ') + (entries.length > max ? `, … (${entries.length} in all)` : '');
}

/** The requirement's installable versions (best first) and what to say about the best; throws on every dead end. */
function selectInstallable(crate: string, entries: IndexEntry[], req: CargoRequirement | undefined): { entries: IndexEntry[]; warnings: string[] } {
  const sorted = [...entries].sort((a, b) => compareVersionsDesc(a.version, b.version));
  if (sorted.length === 0) {
    throw new YepError('E_NOT_FOUND', `The index lists no version of ${crate} that yep-ext can read.`, {
      hint: 'The registry may use a newer index format. Try a newer yep-ext.',
    });
  }
  const matching = sorted.filter((e) => requirementSelects(req, e.version));
  const exact = req?.exact !== undefined;
  let usable = exact ? matching : matching.filter((e) => !e.yanked);
  if (exact && req.exactBuild !== undefined) {
    // `1.2.3+x` typed in full: prefer that very build when several share 1.2.3.
    const same = usable.filter((e) => e.vers === `${req.exact}+${req.exactBuild}`);
    if (same.length > 0) usable = same;
  }
  if (usable.length === 0) throw noMatch(crate, sorted, matching, req);
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
  const warnings: string[] = [];
  const chosen = verifiable[0]!;
  if (chosen !== best) {
    const passed = usable.slice(0, usable.indexOf(chosen)).map((e) => e.vers);
    warnings.push(`skipped ${crate} ${passed.join(', ')}: the index gives no valid checksum; using ${chosen.vers}`);
  }
  if (chosen.yanked) warnings.push(`${crate} ${chosen.vers} is yanked; installing it because you named it exactly`);
  return { entries: verifiable, warnings };
}

/** Install: the candidates under the cooldown, or the error that says why there are none. */
function pickToInstall(r: PickRequest): VersionPick {
  const req = r.requirement === undefined ? undefined : parseCargoRequirement(r.requirement);
  const selected = selectInstallable(r.crate, r.entries, req);
  const c = r.cooldown;
  if (!c) return { candidates: selected.entries, newer: [], warnings: selected.warnings };
  const best = selected.entries[0]!;
  if (req?.exact !== undefined) {
    const age = ageOf(best, r.now);
    if (age === undefined) return { candidates: selected.entries, newer: [], warnings: selected.warnings };
    const what = `${r.crate} ${best.vers} is ${formatAge(age)} old`;
    if (age < c.policyMs) throw freshRefusal(r.crate, best, `${what}; cooldown ${formatAge(c.policyMs)} (${policyLabel(c)})`, c, true, age);
    if (age < c.userMs) {
      if (!c.allowFresh) throw freshRefusal(r.crate, best, `${what}; cooldown ${formatAge(c.userMs)} (${c.userFrom})`, c, false, age);
      selected.warnings.push(`${what}; cooldown ${formatAge(c.userMs)} (${c.userFrom}): installing it because of --allow-fresh`);
    }
    return { candidates: selected.entries, newer: [], warnings: selected.warnings };
  }
  const young = youngTest(c, r.now);
  const kept = selected.entries.filter((e) => !young(e));
  const rule = ruleOf(c);
  if (kept.length === 0) {
    // Something would match without the cooldown: say that the cooldown is why nothing does.
    const age = ageOf(best, r.now) ?? 0;
    throw freshRefusal(
      r.crate,
      best,
      `every version of ${r.crate}${r.requirement ? ` matching ${r.requirement}` : ''} is younger than the cooldown: ${best.vers} is ${formatAge(age)} old; cooldown ${formatAge(rule.ms)} (${rule.label})`,
      c,
      rule.byPolicy,
      age,
    );
  }
  const skipNote = skipNoteOf(r, selected.entries, young, kept[0], `using ${kept[0]!.vers}`);
  return { candidates: kept, newer: [], warnings: kept[0] === best ? selected.warnings : [], ...(skipNote ? { skipNote } : {}) };
}

/** Installed: what is newer, within the requirement and outside it; a dead end is nothing to move to. */
function pickFromInstalled(r: PickRequest, installed: { version: string; cksum?: string | undefined }): VersionPick {
  const req = r.requirement === undefined ? undefined : parseCargoRequirement(r.requirement);
  let selected: { entries: IndexEntry[]; warnings: string[] } = { entries: [], warnings: [] };
  try {
    selected = selectInstallable(r.crate, r.entries, req);
  } catch (e) {
    // Nothing the requirement selects is installable now (all yanked, say): the installed version stays.
    if (!isYepError(e) || (e.code !== 'E_NOT_FOUND' && e.code !== 'E_INTEGRITY')) throw e;
  }
  const young = youngTest(r.cooldown, r.now);
  // An exact pin was judged by the cooldown when it was installed.
  const admitted = req?.exact !== undefined ? selected.entries : selected.entries.filter((e) => !young(e));
  const now = parseCargoVersion(installed.version);
  const isNewer = (e: IndexEntry): boolean => now === undefined || compareVersionsDesc(e.version, now) < 0;
  const first = admitted[0];
  const republished = first !== undefined && first.vers === installed.version && installed.cksum !== undefined && first.cksum !== installed.cksum;
  const within = now === undefined ? admitted.slice(0, 1).filter((e) => e.vers !== installed.version) : admitted.filter(isNewer);
  const candidates = republished ? [first, ...within] : within;
  const selectedSet = new Set(selected.entries);
  const outsideOk = (e: IndexEntry): boolean =>
    !selectedSet.has(e) && !e.yanked && !e.version.prerelease && isInstallableCksum(e.cksum) && !young(e) && now !== undefined && isNewer(e);
  const newer = [...within.map((entry) => ({ entry, within: true })), ...r.entries.filter(outsideOk).map((entry) => ({ entry, within: false }))].sort((a, b) =>
    compareVersionsDesc(a.entry.version, b.entry.version),
  );
  const top = within[0]?.version ?? now;
  const outside =
    r.requirement === undefined ? undefined : newer.find((n) => !n.within && (top === undefined || compareVersionsDesc(n.entry.version, top) < 0))?.entry;
  const moving = candidates.length > 0;
  const skipNote = skipNoteOf(
    r,
    selected.entries.filter(isNewer),
    young,
    within[0],
    moving ? `using ${within[0]?.vers ?? installed.version}` : `keeping ${installed.version}`,
  );
  return {
    candidates,
    newer,
    ...(outside ? { outside } : {}),
    // What is said of a version taken; nothing moves, nothing to say.
    warnings: moving && admitted[0] === selected.entries[0] ? selected.warnings : [],
    ...(skipNote && req?.exact === undefined ? { skipNote } : {}),
  };
}

/** "skipped x 0.4.1 is 1 h old; cooldown 3 d (--min-age); using 0.3.0": the young versions newer than the one taken. */
function skipNoteOf(
  r: PickRequest,
  selected: IndexEntry[],
  young: (e: IndexEntry) => boolean,
  taken: IndexEntry | undefined,
  outcome: string,
): string | undefined {
  if (!r.cooldown) return undefined;
  const skipped = selected.filter((e) => young(e) && !e.yanked && (taken === undefined || compareVersionsDesc(e.version, taken.version) < 0));
  if (skipped.length === 0) return undefined;
  const rule = ruleOf(r.cooldown);
  const ages = skipped.map((e) => `${e.vers} is ${formatAge(ageOf(e, r.now) ?? 0)} old`).join(', ');
  return `skipped ${r.crate} ${ages}; cooldown ${formatAge(rule.ms)} (${rule.label}); ${outcome}`;
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

function freshRefusal(crate: string, entry: IndexEntry, why: string, cooldown: Cooldown, byPolicy: boolean, age: number): YepError {
  const capitalised = why.charAt(0).toUpperCase() + why.slice(1);
  return new YepError('E_POLICY', `${capitalised}.`, {
    hint: byPolicy
      ? `The administrator's policy (${cooldown.policyFile ?? 'policy file'}) requires releases to be at least ${formatAge(cooldown.policyMs)} old. Install an older version, or wait.`
      : `Install an older version, wait, or pass --allow-fresh with the exact version to take it anyway (e.g. ${crate}@${entry.vers} --allow-fresh).`,
    details: {
      rule: 'min_age',
      item: `${crate}@${entry.vers}`,
      age_ms: age,
      min_age_ms: byPolicy ? cooldown.policyMs : cooldown.userMs,
      from: byPolicy ? (cooldown.policyFile ?? 'policy') : cooldown.userFrom,
    },
  });
}
