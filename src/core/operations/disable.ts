/**
 * `disable`: keep the extension's [[capabilities]] table and its inline config,
 * marked `enabled = false` (the host deletes the table and loses the config).
 * Works for a name that is no longer installed but still has a table, so a
 * leftover entry can always be switched off.
 */
import { resolveExtensionName } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { storeExists, withInstallLock } from '../store/install-lock.js';
import { isInstalled, notInstalled } from '../store/installed-manifest.js';
import { disableExtension, readExtensionSettings } from '../settings/settings.js';

export interface DisableResult {
  name: string;
  enabled: false;
  changed: boolean;
  installed: boolean;
}

export async function runDisable(ctx: Context, input: string): Promise<DisableResult> {
  const name = resolveExtensionName(ctx.paths, input);
  const unknown = () => notInstalled(name, 'Run `yep-ext list` to see what is installed.');
  // Nothing installed anywhere and nothing in settings.toml: refused without creating the store for its lock.
  if (!storeExists(ctx) && !(await readExtensionSettings(ctx.paths, name)).present) throw unknown();
  return withInstallLock(ctx, async () => {
    const installed = await isInstalled(ctx.paths, name);
    if (!installed && !(await readExtensionSettings(ctx.paths, name)).present) throw unknown();
    const { changed } = await disableExtension(ctx.paths, name);
    return { name, enabled: false, changed, installed };
  });
}
