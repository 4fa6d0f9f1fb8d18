/**
 * The approved grant of each installed extension, kept beside the lock in
 * `<store>/.yep-grants/<name>.json` (a dot-directory: the host ignores it). The
 * lock holds only the fingerprint; this copy lets `update` show a real diff even
 * for path installs, whose manifest changes in place. A copy whose fingerprint
 * does not match the lock is ignored (a crash between the two writes).
 */
import { join } from 'node:path';
import type { Context } from '../context.js';
import { makeOwnedDir, removeOwned } from '../fs/custody.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { grantFingerprint, type Grant } from '../package/grants.js';
import { assertValidName } from '../package/names.js';
import { storeCustody } from '../paths.js';

/** `<store>/.yep-grants/<name>.json`. */
export function approvedGrantFile(ctx: Context, name: string): string {
  return join(ctx.paths.grantsDir, `${assertValidName(name)}.json`);
}

export async function saveApprovedGrant(ctx: Context, name: string, grant: Grant): Promise<void> {
  const file = approvedGrantFile(ctx, name);
  await makeOwnedDir(storeCustody(ctx.paths, 'grants'), 0o755);
  await writeFileAtomic(file, `${JSON.stringify(grant, null, 2)}\n`, { what: 'The approved grant' });
}

/**
 * The approved grant whose fingerprint is `fingerprint`, if we still have it. A copy
 * that does not parse or match is ignored; one that is not a regular file is refused.
 */
export async function loadApprovedGrant(ctx: Context, name: string, fingerprint: string | undefined): Promise<Grant | undefined> {
  if (!fingerprint) return undefined;
  const text = readRegularTextSync(approvedGrantFile(ctx, name), 'The approved grant');
  if (text === undefined) return undefined;
  try {
    const grant = JSON.parse(text) as Grant;
    return grantFingerprint(grant) === fingerprint ? grant : undefined;
  } catch {
    return undefined;
  }
}

export async function removeApprovedGrant(ctx: Context, name: string): Promise<void> {
  await removeOwned(storeCustody(ctx.paths, 'grants'), `${assertValidName(name)}.json`);
}
