/**
 * `disable`: keep the extension's [[capabilities]] table and its inline config,
 * marked `enabled = false` (the host deletes the table and loses the config).
 * Works for a name that is no longer installed but still has a table, so a
 * leftover entry can always be switched off.
 */
import { resolveInstalled } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { storeExists, withInstallLock } from '../store/install-lock.js';
import { isInstalled, notInstalled } from '../store/installed-manifest.js';
import { disableExtension, readExtensionSettings } from '../settings/settings.js';
import { profileFile } from '../settings/profiles.js';

export interface DisableResult {
  name: string;
  enabled: false;
  changed: boolean;
  installed: boolean;
  /** The profile written (`--profile`), or null for settings.toml. */
  profile: string | null;
}

export async function runDisable(ctx: Context, input: string, options: { profile?: string } = {}): Promise<DisableResult> {
  const name = await resolveInstalled(ctx, input);
  const unknown = () => notInstalled(name, 'Run `yep-ext list` to see what is installed.');
  // A profile that does not exist is refused first (E_NOT_FOUND naming the ones there are).
  if (options.profile !== undefined) profileFile(ctx.paths, options.profile);
  const present = async () => (await readExtensionSettings(ctx.paths, name, options.profile)).present;
  // Nothing installed anywhere and nothing in settings.toml: refused without creating the store for its lock.
  if (!storeExists(ctx) && !(await present())) throw unknown();
  return withInstallLock(ctx, async () => {
    const installed = await isInstalled(ctx.paths, name);
    if (!installed && !(await present())) throw unknown();
    const { changed } = await disableExtension(ctx.paths, name, { profile: options.profile });
    return { name, enabled: false, changed, installed, profile: options.profile ?? null };
  });
}
