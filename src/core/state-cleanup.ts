/**
 * What `remove` deletes besides the store entry and the lock entry: the
 * extension's `ext:<name>` entries in settings.toml and its table in
 * connections.toml. Shared by `remove` and by crash recovery of a remove.
 */
import type { Context } from './context.js';
import { removeApprovedGrant } from './approved-grants.js';

export async function removeExtensionState(ctx: Context, name: string): Promise<void> {
  await removeApprovedGrant(ctx, name);
}
