/**
 * The release-age cooldown as one step around version choice (issue 15): young
 * versions (index `pubtime` newer than the cooldown) are taken off the candidate
 * list before `chooseVersion` runs, and each newer version skipped that way is
 * named ("0.4.1 is 2 h old; cooldown 3 d"). An exactly named version is not
 * filtered but refused when young, unless `--allow-fresh` waives the user's own
 * cooldown (the policy's floor is never waived). Entries without `pubtime` count
 * as old. Kept apart from choose-version.ts so other filters (engines) compose.
 */
import { YepError, isYepError } from '../../errors.js';
import type { Cooldown } from './cooldown-options.js';
import { formatAge } from '../../text/duration.js';
import { compareVersionsDesc, parseCargoRequirement } from './cargo-version.js';
import { chooseVersion, type VersionChoice } from './choose-version.js';
import type { IndexEntry } from './index-lines.js';

export interface CooledChoice extends VersionChoice {
  /** Newer versions the cooldown skipped ("0.4.1 is 2 h old"). */
  skipped: string[];
  /** The one line that names them for people (not in `warnings`), when any were skipped. */
  skipNote?: string;
}

function ageOf(e: IndexEntry, now: number): number | undefined {
  return e.pubtime === undefined ? undefined : now - e.pubtime;
}

function ruleLabel(c: Cooldown, policy: boolean): string {
  return policy ? `policy min_age in ${c.policyFile ?? 'the policy file'}` : c.userFrom;
}

/** Whether `requirement` names one version exactly (`1.2.3`, `=1.2.3`). */
export function isExactRequirement(requirement: string | undefined): boolean {
  if (requirement === undefined) return false;
  try {
    return parseCargoRequirement(requirement).exact !== undefined;
  } catch {
    return false; // chooseVersion reports the syntax error
  }
}

/** chooseVersion under `cooldown` (undefined = none) at time `now` (ms). */
export function chooseUnderCooldown(
  crate: string,
  entries: IndexEntry[],
  requirement: string | undefined,
  cooldown: Cooldown | undefined,
  now: number,
): CooledChoice {
  if (!cooldown) return { ...chooseVersion(crate, entries, requirement), skipped: [] };
  const limit = Math.max(cooldown.userMs, cooldown.policyMs);
  const byPolicy = cooldown.policyMs >= cooldown.userMs;
  const young = (e: IndexEntry) => {
    const age = ageOf(e, now);
    return age !== undefined && age < limit;
  };

  if (isExactRequirement(requirement)) {
    const choice = chooseVersion(crate, entries, requirement);
    const age = ageOf(choice.entry, now);
    if (age === undefined) return { ...choice, skipped: [] };
    const what = `${crate} ${choice.entry.vers} is ${formatAge(age)} old`;
    if (age < cooldown.policyMs)
      throw freshRefusal(crate, choice.entry, `${what}; cooldown ${formatAge(cooldown.policyMs)} (${ruleLabel(cooldown, true)})`, cooldown, true, age);
    if (age < cooldown.userMs) {
      if (!cooldown.allowFresh)
        throw freshRefusal(crate, choice.entry, `${what}; cooldown ${formatAge(cooldown.userMs)} (${cooldown.userFrom})`, cooldown, false, age);
      choice.warnings.push(`${what}; cooldown ${formatAge(cooldown.userMs)} (${cooldown.userFrom}): installing it because of --allow-fresh`);
    }
    return { ...choice, skipped: [] };
  }

  const kept = entries.filter((e) => !young(e));
  let unrestricted: VersionChoice | undefined;
  try {
    unrestricted = chooseVersion(crate, entries, requirement);
  } catch {
    unrestricted = undefined;
  }
  let choice: VersionChoice;
  try {
    choice = chooseVersion(crate, kept, requirement);
  } catch (e) {
    // Something would match without the cooldown: say that the cooldown is why nothing does.
    if (!isYepError(e) || e.code !== 'E_NOT_FOUND' || !unrestricted) throw e;
    const best = unrestricted.entry;
    const age = ageOf(best, now) ?? 0;
    throw freshRefusal(
      crate,
      best,
      `every version of ${crate}${requirement ? ` matching ${requirement}` : ''} is younger than the cooldown: ${best.vers} is ${formatAge(age)} old; cooldown ${formatAge(limit)} (${ruleLabel(cooldown, byPolicy)})`,
      cooldown,
      byPolicy,
      age,
    );
  }
  const skipped: string[] = [];
  if (unrestricted && unrestricted.entry !== choice.entry) {
    const top = unrestricted.entry.version;
    for (const e of [...entries].sort((a, b) => compareVersionsDesc(a.version, b.version))) {
      if (!young(e) || e.yanked) continue;
      if (compareVersionsDesc(e.version, top) < 0 || compareVersionsDesc(e.version, choice.entry.version) >= 0) continue;
      skipped.push(`${e.vers} is ${formatAge(ageOf(e, now) ?? 0)} old`);
    }
  }
  if (skipped.length === 0) return { ...choice, skipped };
  return {
    ...choice,
    skipped,
    skipNote: `skipped ${crate} ${skipped.join(', ')}; cooldown ${formatAge(limit)} (${ruleLabel(cooldown, byPolicy)}); using ${choice.entry.vers}`,
  };
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
