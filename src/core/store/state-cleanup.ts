/**
 * What `remove` deletes besides the store entry and the lock entry: the
 * extension's `ext:<name>` entries in settings.toml and its table in
 * connections.toml (and keychain copies). Shared by `remove` and by crash
 * recovery of a remove. A settings or secrets file that cannot be edited safely
 * is left alone with a warning: the package is already gone, and failing here
 * would leave a journal that every later run trips over.
 */
import type { Context } from '../context.js';
import { removeApprovedGrant } from './approved-grants.js';
import { removeTreeState } from './tree-state.js';
import { checkpoint } from './checkpoint.js';
import { isYepError } from '../errors.js';
import { keychainOptionsFromEnv } from '../settings/keychain.js';
import { removeExtensionSecrets } from '../settings/secrets.js';
import { removeExtensionSettings } from '../settings/settings.js';

export async function removeExtensionState(ctx: Context, name: string): Promise<void> {
  await removeApprovedGrant(ctx, name);
  removeTreeState(ctx.paths, name);
  try {
    await removeExtensionSettings(ctx.paths, name);
  } catch (e) {
    if (!isYepError(e)) throw e;
    ctx.log.warn(`Left settings.toml unchanged: ${e.message} Remove the [[capabilities]] table with ref = "ext:${name}" by hand.`);
  }
  await checkpoint(ctx.env, 'remove:between-settings-and-secrets');
  try {
    const r = await removeExtensionSecrets(ctx.paths, name, { keychain: keychainOptionsFromEnv(ctx.env) });
    for (const w of r.warnings) ctx.log.warn(w);
  } catch (e) {
    if (!isYepError(e)) throw e;
    ctx.log.warn(`Left connections.toml unchanged: ${e.message} Remove its ["ext:${name}"] table by hand.`);
  }
}
