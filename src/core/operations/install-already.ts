/**
 * "Already installed", decided before any download. `install X` where
 * the lock and an intact store tree already hold what X resolves to would fetch
 * X, verify it and then report `unchanged`; when the candidates' records alone
 * prove that outcome, it is reported from the lock and the store and nothing is
 * downloaded. The proof: the best candidate (crates; git: the ref resolved by
 * `ls-remote`, Source.installedPin) is the locked pin with the locked index checksum
 * or commit (so the very same bytes, hence the locked content hash), the
 * tree passes the one intact rule (verify.ts `needsRefetch`, as `--frozen` and
 * `list` use it), its manifest carries the locked grant, the engines walk would
 * keep it, and the policy file admits it. Anything less certain (a lock without
 * a checksum, a damaged tree, a kind that resolves only by fetching) returns
 * undefined and the pipeline fetches, then decides, as before.
 *
 * The same pin asked for through another ref or requirement (`hello@^0.2` over a
 * `hello` that follows the newest) proves as much, but it is a re-pin: the lock
 * records what `update` now follows. That one lock write, under the installer lock
 * and only if the entry is still what was checked, is the only write here.
 */
import type { Context } from '../context.js';
import { checkAgainstAgent } from '../agent/agent-version.js';
import { commandFinding, inspectServerCommand } from '../package/inspect-command.js';
import { approvalOf, grantOf, summarizeGrant, type Grant } from '../package/grants.js';
import { recordApproval } from './grant-approval.js';
import type { Policy } from '../policy/policy-file.js';
import { followNote, pinnedCommit, samePin, samePinAndFollow, withFollows } from '../sources/index.js';
import { withInstallLock } from '../store/install-lock.js';
import { loadStoreLock, saveStoreLock, type LockEntry, type LockSource, type Lockfile } from '../store/lockfile.js';
import { saveCustody } from '../store/custody.js';
import { versionLabel, warnVerdict } from './agent-walk.js';
import type { InstallOutcome } from './install.js';
import { installedViolations } from './policy-gate.js';
import { checkEntry, needsRefetch } from '../store/entry-check.js';

/** The registry checksum a record pins (crates: the index's `cksum`); undefined for a record without one. */
function checksum(rec: LockSource): string | undefined {
  const value = (rec as { cksum?: unknown }).cksum;
  return typeof value === 'string' ? value : undefined;
}

/**
 * `installed` and `wanted` pin the same bytes: the same registry checksum, or the same
 * commit (content-addressed: the same commit hashing otherwise is an E_INTEGRITY the
 * pipeline raises, so it is left to the pipeline only when the tree is not intact).
 */
function sameBytes(installed: LockSource, wanted: LockSource): boolean {
  const sum = checksum(wanted);
  if (sum !== undefined) return checksum(installed) === sum;
  const commit = pinnedCommit(wanted);
  return commit !== undefined && pinnedCommit(installed) === commit;
}

/**
 * What the check found: the `unchanged` outcome when the lock and store prove it;
 * otherwise what it read on the way, for the plan to reuse (each state file is read
 * once per command: test/cli/repeated-io.test.ts): the lock, and the intact verdict
 * of the entry it checked.
 */
export interface AlreadyCheck {
  outcome?: InstallOutcome;
  lock?: Lockfile;
  checked?: { entry: LockEntry; intact: boolean };
}

/**
 * The `unchanged` outcome of installing the best of `records` (what `Source.candidates`
 * returned, best first), when the lock and store prove it (see AlreadyCheck).
 */
export async function alreadyInstalled(
  ctx: Context,
  policy: Policy,
  records: readonly LockSource[],
  notes: readonly string[],
  options: { ignoreEngines: boolean },
): Promise<AlreadyCheck> {
  const first = records[0];
  if (!first) return {};
  // The lock and the tree are read under the installer lock (not while another install is
  // halfway through placing this entry); the checks that may spawn the agent run after it,
  // so a slow `yolop --version` never holds up other installs.
  const seen = await withInstallLock(ctx, async () => {
    const lock = await loadStoreLock(ctx.paths);
    const entry = lock.entries.find((e) => e.source.type === first.type && samePin(e.source, first));
    if (!entry || !sameBytes(entry.source, first) || typeof entry.grant !== 'string') return { lock };
    return { lock, entry, check: await checkEntry(ctx, entry, { mode: 'cheap' }) };
  });
  const { lock, entry, check } = seen;
  if (!entry || !check) return { lock };
  const read = { lock, checked: { entry, intact: !needsRefetch(entry, check.result) } };
  const { manifest } = check;
  const dir = check.result.dir;
  if (!manifest || !dir || manifest.name !== entry.name || !read.checked.intact) return read;
  const grant = summarizeGrant(grantOf(manifest));
  // The intact tree holds the locked bytes: a format-1 fingerprint (from before the grant held
  // the words the model reads) approves them as they are, and the grant is recorded once.
  const how = approvalOf(entry.grant, grant.grant);
  if (!how) return read;
  if ((await installedViolations(ctx, policy, entry, manifest)).length > 0) return read;
  // The walk keeps the newest candidate unless its range excludes the agent (and --ignore-engines is off).
  const verdict = await checkAgainstAgent(ctx, manifest);
  if (verdict.status === 'excludes' && !options.ignoreEngines) return read;
  warnVerdict(ctx, `${manifest.name} ${versionLabel(manifest, entry.source)}`, verdict);
  const command = await inspectServerCommand(dir, manifest.yolop.capabilityServer.command, ctx.env.PATH ?? '');
  const refollow = !samePinAndFollow(entry.source, first);
  const source = refollow ? withFollows(entry.source, first) : entry.source;
  const record = how === 'before-text';
  // Lost to another install meanwhile: what was read is stale, so the plan reads afresh.
  if ((refollow || record) && !(await relock(ctx, entry, source, record ? grant.grant : undefined))) return {};
  const outcome: InstallOutcome = {
    name: entry.name,
    ...(manifest.version !== undefined ? { version: manifest.version } : {}),
    status: refollow ? 'repinned' : 'unchanged',
    content_hash: entry.content_hash,
    grant: grant.fingerprint,
    source,
    previous: entry,
    manifest,
    command: commandFinding(command),
    notes: [...notes, ...followNote(entry.source, source)],
    engines: { ...verdict, skipped: [], ignored: options.ignoreEngines && verdict.status === 'excludes' },
  };
  return { outcome };
}

/**
 * Record `source` (the same pin, followed through another ref or requirement) and, when
 * given, `grant` (the installed grant of an entry named by a format-1 fingerprint) for
 * the entry that was checked, under the installer lock. False when the entry changed
 * meanwhile (another install got there first): the pipeline then decides afresh.
 */
async function relock(ctx: Context, checked: LockEntry, source: LockSource, grant?: Grant): Promise<boolean> {
  return withInstallLock(ctx, async () => {
    const lock = await loadStoreLock(ctx.paths);
    const current = lock.entries.find((e) => e.name === checked.name);
    if (!current || JSON.stringify(current) !== JSON.stringify(checked)) return false;
    if (source !== checked.source) {
      await saveStoreLock(ctx.paths, { ...lock, entries: lock.entries.map((e) => (e === current ? { ...e, source } : e)) });
      await saveCustody(ctx, { ...current, source });
    }
    // recordApproval writes through pinEntries, which records custody too.
    return grant ? recordApproval(ctx, await loadStoreLock(ctx.paths), { ...current, source }, grant) : true;
  });
}
