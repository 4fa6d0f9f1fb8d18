/**
 * The one comparison of a candidate grant with what the lock approved, for every road
 * that asks "is this what the user approved?": install (and its reinstall), update,
 * `install --force`, and (by `approvalOf` on fingerprints alone) `install --frozen`
 * and the "already installed" check. Decided on data: the lock's fingerprint, the
 * approved grant kept in `.yep-grants`, the installed manifest, content hashes.
 *
 * Migration (docs/grants.md): a lock written before the grant held the words the
 * model reads names its grant by a format-1 fingerprint. Over the same bytes (the
 * candidate's content hash is the locked one, or the installed tree is intact) those
 * words are the ones installed then, so the grant is approved as it is and recorded
 * in the current format once; over other bytes the old words are taken from the
 * intact installed tree, and when they cannot be, the new words are shown whole and
 * asked about.
 */
import type { Context } from '../context.js';
import {
  approvalOf,
  diffGrants,
  grantFingerprint,
  grantOf,
  legacyGrantOf,
  recordsLaterText,
  type Grant,
  type GrantDiff,
  type LegacyGrant,
} from '../package/grants.js';
import { loadManifest } from '../package/manifest.js';
import { packageDir } from '../paths.js';
import { loadApprovedGrant, saveApprovedGrant } from '../store/approved-grants.js';
import { findEntry, type LockEntry, type Lockfile } from '../store/lockfile.js';
import { pinEntries } from '../store/transaction.js';

/** A candidate: the grant a fetched package asks for, and the content hash it came with. */
export interface GrantCandidate {
  grant: Grant;
  content_hash: string;
}

/** How a candidate grant stands against what is approved for its name. */
export interface GrantJudgement {
  /** The candidate is exactly what was approved: nothing to show or ask. */
  approved: boolean;
  /**
   * Approved through the lock's format-1 fingerprint over the same bytes: the candidate's
   * grant (with its text) is to be recorded in the lock and `.yep-grants` (recordApproval).
   */
  record: boolean;
  /** The diff against the approved grant, when one is known (none: nothing installed, or nothing on record to compare). */
  diff?: GrantDiff;
  /** Consent is needed: a widening change, or an approved grant that cannot be proved (nothing to diff against). */
  widens: boolean;
}

/** Same bytes as the entry pins: the store tree passes the one intact rule (verify.ts `needsRefetch`). */
async function treeIntact(ctx: Context, entry: LockEntry): Promise<boolean> {
  const { checkEntry, needsRefetch } = await import('../store/entry-check.js');
  const check = await checkEntry(ctx, entry, { mode: 'cheap' });
  return !needsRefetch(entry, check.result);
}

/**
 * The grant approved for `name` under `entry`, as precisely as it can be known: the stored
 * copy; else the installed manifest's grant when the lock's fingerprint names it (a fingerprint
 * from before the words or the skill files were recorded only over an intact tree, whose words
 * and files are then the approved ones; over a changed tree the stored copy or the format-1
 * form, what it did not record unknown). With no fingerprint on record (an entry
 * the host wrote, or a directory the lock does not know) the installed manifest's grant is
 * what there is to compare with. Undefined when nothing can be proved.
 */
async function approvedGrant(ctx: Context, name: string, entry: LockEntry | undefined): Promise<Grant | LegacyGrant | undefined> {
  const fingerprint = typeof entry?.grant === 'string' ? entry.grant : undefined;
  const stored = await loadApprovedGrant(ctx, name, fingerprint);
  // A stored grant approved before the package's description and skill files were recorded knows the other words, not those.
  if (stored !== undefined && recordsLaterText(stored)) return stored;
  const installed = await loadManifest(packageDir(ctx.paths, name)).then(
    (m) => grantOf(m),
    () => undefined,
  );
  if (!entry || fingerprint === undefined) return installed;
  const how = installed ? approvalOf(fingerprint, installed) : undefined;
  if (installed && how === 'exact') return installed;
  if (installed && how === 'before-text') return (await treeIntact(ctx, entry)) ? installed : (stored ?? legacyGrantOf(installed));
  return stored;
}

/**
 * Judge `candidate` against what is approved for `name` (`entry`: its lock entry, if any).
 * Approved outright when the lock's fingerprint is the candidate's, or is its format-1
 * fingerprint over the same content hash; otherwise the diff against the approved grant
 * decides, and with none to diff against (a fingerprint on record that nothing proves)
 * consent is needed.
 */
export function judgeGrant(ctx: Context, name: string, entry: LockEntry | undefined, candidate: GrantCandidate): Promise<GrantJudgement> {
  return judgeAs(ctx, name, entry, candidate, approvalOf(typeof entry?.grant === 'string' ? entry.grant : undefined, candidate.grant));
}

/**
 * judgeGrant with `how` the lock's fingerprint approves the candidate's grant already worked
 * out (approvalOf hashes the grant): private, so no caller outside can hand in an approval it
 * did not compute from the same entry and grant.
 */
async function judgeAs(
  ctx: Context,
  name: string,
  entry: LockEntry | undefined,
  candidate: GrantCandidate,
  how: ReturnType<typeof approvalOf>,
): Promise<GrantJudgement> {
  const fingerprint = typeof entry?.grant === 'string' ? entry.grant : undefined;
  if (how === 'exact' || (how === 'before-text' && candidate.content_hash === entry?.content_hash)) {
    const unchanged: GrantDiff = { ...diffGrants(candidate.grant, candidate.grant), from: fingerprint as string };
    return { approved: true, record: how === 'before-text', diff: unchanged, widens: false };
  }
  const approved = await approvedGrant(ctx, name, entry);
  const diff = approved ? diffGrants(approved, candidate.grant) : undefined;
  return { approved: false, record: false, ...(diff ? { diff } : {}), widens: diff ? diff.widens : fingerprint !== undefined };
}

/**
 * The installed grant of `entry` when the lock names it by its format-1 fingerprint and the
 * installed tree holds the locked bytes: the grant to record (same bytes, same words), for a
 * run that fetches nothing (an update with nothing newer). Undefined otherwise.
 */
export async function installedBeforeText(ctx: Context, entry: LockEntry): Promise<Grant | undefined> {
  if (typeof entry.grant !== 'string') return undefined;
  const installed = await loadManifest(packageDir(ctx.paths, entry.name)).then(
    (m) => grantOf(m),
    () => undefined,
  );
  if (!installed || approvalOf(entry.grant, installed) !== 'before-text') return undefined;
  return (await treeIntact(ctx, entry)) ? installed : undefined;
}

/**
 * Record `grant` as the approved grant of `checked` (lock and `.yep-grants`), where the lock
 * still holds `checked` as it was judged: an entry the host wrote (no grant), or one named by
 * a format-1 fingerprint, whose bytes are unchanged. The caller holds the installer lock and
 * passes the lock as read under it. False when the entry moved meanwhile (nothing written).
 */
export async function recordApproval(ctx: Context, lock: Lockfile, checked: LockEntry, grant: Grant): Promise<boolean> {
  const current = findEntry(lock, checked.name);
  if (!current || current.content_hash !== checked.content_hash || current.grant !== checked.grant) return false;
  await pinEntries(ctx, { pin: [{ ...current, grant: grantFingerprint(grant) }] });
  await saveApprovedGrant(ctx, checked.name, grant);
  return true;
}

/**
 * For the road that turns on what is already installed (`enable`): the grant of the installed
 * manifest against the one approved for `entry`. A package edited in place (a path install) or
 * a tree changed by hand may ask for more than the user saw; `enable` must not switch that on
 * unasked. Undefined when the lock records no approval to compare with (an entry the host
 * wrote: the host asked; a package no lock pins: verify reports it).
 */
export async function installedGrantJudgement(ctx: Context, entry: LockEntry, installed: Grant): Promise<GrantJudgement | undefined> {
  if (typeof entry.grant !== 'string') return undefined;
  // A fingerprint from before the description and skill files were recorded approves the installed
  // words only over the locked bytes: a tree edited since (a path package, a hand-changed store) is
  // judged as a new candidate, not waved through as the migration.
  const how = approvalOf(entry.grant, installed);
  const lockedBytes = how !== 'before-text' || (await treeIntact(ctx, entry));
  return judgeAs(ctx, entry.name, entry, { grant: installed, content_hash: lockedBytes ? entry.content_hash : EDITED_TREE }, how);
}

/** The content hash of an installed tree that no longer holds the locked bytes: matches no lock's. */
const EDITED_TREE = 'edited-since-locked';
