/**
 * What `remove` deletes besides the store entry and the lock entry: the
 * extension's `ext:<name>` entries in settings.toml, its approved grant, and its
 * table in connections.toml (and keychain copies). Shared by `remove` and by
 * crash recovery of a remove.
 *
 * Order matters to the agent, which runs no recovery: settings first (the agent
 * stops loading the extension), then the package, then the secrets (read only for
 * an enabled extension). So the package never leaves while settings.toml still
 * enables it: `preflightRemoval` refuses, before anything changes, a settings file
 * that enables the extension in a form yep-ext cannot edit, and a failed settings
 * write stops the removal there (the next command finishes it). A settings file
 * nobody can read (not TOML) enables nothing, so it is left alone with a warning,
 * as is a secrets file that cannot be edited safely: failing there would leave a
 * journal that every later run trips over.
 */
import type { Context } from '../context.js';
import { removeApprovedGrant } from './approved-grants.js';
import { removeCustody } from './custody.js';
import { removeTreeState } from './tree-state.js';
import { removeMcpRecord } from './mcp-record.js';
import { checkpoint } from '../fs/checkpoint.js';
import { YepError, isYepError } from '../errors.js';
import { keychainOptions } from '../settings/keychain.js';
import { removeExtensionSecrets } from '../settings/secrets.js';
import { applySettingsEdit, loadSettingsText, readSettingsFromText, removeExtensionSettings } from '../settings/settings.js';

/** True when yolop would load `name` from this settings text (false when it cannot read it). */
function hostEnables(text: string, name: string, file: string): boolean {
  try {
    return readSettingsFromText(text, name, file).enabled;
  } catch {
    return false;
  }
}

/**
 * Before a removal changes anything: refuse when settings.toml enables `name` in
 * a form yep-ext cannot edit (an inline `capabilities` array, say), since the
 * package would then go while yolop still loads it.
 */
export async function preflightRemoval(ctx: Context, name: string): Promise<void> {
  const file = ctx.paths.settingsFile;
  let text: string;
  try {
    text = await loadSettingsText(ctx.paths);
  } catch (e) {
    if (isYepError(e)) return; // unreadable: yolop cannot read it either; removal warns and leaves it
    throw e;
  }
  try {
    applySettingsEdit(text, name, { op: 'remove' }, file);
  } catch (e) {
    if (!isYepError(e) || !hostEnables(text, name, file)) return;
    throw new YepError('E_STATE', `${file} enables ext:${name} in a form yep-ext cannot edit (${e.message}); nothing was removed.`, {
      hint: `Remove or disable its ext:${name} entry in ${file} by hand, then run \`yep-ext remove ${name}\` again.`,
    });
  }
}

/**
 * Step one of a removal: delete the extension's settings entries. Throws when
 * the write failed (a full disk, a read-only file: settings.toml is unchanged and
 * the caller must keep the package). A file that cannot be read or edited and
 * does not enable the extension (preflightRemoval) is left alone with a warning.
 */
export async function disableForRemoval(ctx: Context, name: string): Promise<void> {
  try {
    await removeExtensionSettings(ctx.paths, name);
  } catch (e) {
    if (!isYepError(e)) throw e;
    const text = await loadSettingsText(ctx.paths).catch(() => undefined);
    if (text !== undefined && hostEnables(text, name, ctx.paths.settingsFile)) throw e;
    ctx.log.warn(`Left settings.toml unchanged: ${e.message} Remove the [[capabilities]] table with ref = "ext:${name}" by hand.`);
  }
}

/** The last step of a removal: the approved grant and the secrets. */
export async function removeGrantAndSecrets(ctx: Context, name: string): Promise<void> {
  await removeApprovedGrant(ctx, name);
  await removeCustody(ctx, name);
  await removeTreeState(ctx.paths, name);
  await removeMcpRecord(ctx.paths, name);
  await checkpoint(ctx, 'remove:between-settings-and-secrets');
  try {
    const r = await removeExtensionSecrets(ctx.paths, name, { keychain: keychainOptions(ctx) });
    for (const w of r.warnings) ctx.log.warn(w);
  } catch (e) {
    if (!isYepError(e)) throw e;
    ctx.log.warn(`Left connections.toml unchanged: ${e.message} Remove its ["ext:${name}"] table by hand.`);
  }
}
