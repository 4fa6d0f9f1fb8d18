/**
 * What `remove` deletes besides the store entry and the lock entry: the
 * extension's `ext:<name>` entries in settings.toml and its table in
 * connections.toml. Shared by `remove` and by crash recovery of a remove.
 */
import type { Context } from './context.js';

export async function removeExtensionState(_ctx: Context, _name: string): Promise<void> {
  // Filled in when the settings and secrets modules land.
}
