/**
 * The approved grant of each installed extension, kept beside the lock in
 * `<store>/.yep-grants/<name>.json` (a dot-directory: the host ignores it). The
 * lock holds only the fingerprint; this copy lets `update` show a real diff (the
 * words the model reads included) even for path installs, whose manifest changes in
 * place. A copy whose fingerprint does not match the lock is ignored (a crash
 * between the two writes).
 */
import { join } from 'node:path';
import type { Context } from '../context.js';
import { makeOwnedDir, removeOwned } from '../fs/custody.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { grantFingerprint, legacyFingerprint, readStoredGrant, type Grant, type LegacyGrant } from '../package/grants.js';
import { assertValidName } from '../package/names.js';
import { storeCustody } from '../paths.js';
import { assertLockKept } from '../fs/lock-hold.js';

/** `<store>/.yep-grants/<name>.json`. */
export function approvedGrantFile(ctx: Context, name: string): string {
  return join(ctx.paths.grantsDir, `${assertValidName(name)}.json`);
}

export async function saveApprovedGrant(ctx: Context, name: string, grant: Grant): Promise<void> {
  assertLockKept(ctx.paths);
  const file = approvedGrantFile(ctx, name);
  await makeOwnedDir(storeCustody(ctx.paths, 'grants'), 0o755);
  await writeFileAtomic(file, `${JSON.stringify(grant, null, 2)}\n`, { what: 'The approved grant' });
}

/**
 * The approved grant whose fingerprint is `fingerprint`, if we still have it: a copy
 * with that fingerprint (a format-1 copy, written before the grant held the text the
 * model reads, comes back as such), or a current copy whose format-1 fingerprint it is
 * (a lock entry that still names its grant by the old fingerprint, placed with these
 * very bytes: a frozen install or a repair writes the copy of what it placed). A copy
 * that does not parse or match is ignored; one that is not a regular file is refused.
 */
export async function loadApprovedGrant(ctx: Context, name: string, fingerprint: string | undefined): Promise<Grant | LegacyGrant | undefined> {
  if (!fingerprint) return undefined;
  const text = readRegularTextSync(approvedGrantFile(ctx, name), 'The approved grant');
  if (text === undefined) return undefined;
  let grant: Grant | LegacyGrant | undefined;
  try {
    grant = readStoredGrant(JSON.parse(text));
  } catch {
    return undefined;
  }
  if (!grant) return undefined;
  if (grantFingerprint(grant) === fingerprint) return grant;
  return grant.format === 2 && legacyFingerprint(grant) === fingerprint ? grant : undefined;
}

export async function removeApprovedGrant(ctx: Context, name: string): Promise<void> {
  await removeOwned(storeCustody(ctx.paths, 'grants'), `${assertValidName(name)}.json`);
}
