/**
 * The manifest of an installed extension, as the host would find it: the store
 * directory `<store>/<name>` (a symlink to a directory counts, as for the host)
 * holding a plugin.json whose `name` is `<name>`.
 */
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { inspectRegularFile } from '../fs/read-regular-file.js';
import { MANIFEST_FILE, loadManifest, type Manifest } from '../package/manifest.js';
import { packageDir, type Paths } from '../paths.js';

/** `hint` replaces the default, which suggests installing (wrong for commands such as disable). */
export function notInstalled(name: string, hint?: string): YepError {
  return new YepError('E_NOT_INSTALLED', `The extension "${name}" is not installed.`, {
    hint: hint ?? `Install it first (yep-ext install ${name}), or run \`yep-ext list\` to see what is installed.`,
  });
}

/**
 * True when `<store>/<name>/plugin.json` exists. One that is there but is not a
 * regular file (a FIFO, a directory, a dangling link) is an E_STATE error naming
 * it, not "not installed": the user must see what is wrong with it.
 */
export async function isInstalled(paths: Paths, name: string): Promise<boolean> {
  return inspectRegularFile(join(packageDir(paths, name), MANIFEST_FILE), 'The manifest') !== undefined;
}

/** Load the installed manifest of `name`: E_NOT_INSTALLED when absent, E_MANIFEST when the host would skip it. */
export async function loadInstalledManifest(paths: Paths, name: string): Promise<Manifest> {
  if (!(await isInstalled(paths, name))) throw notInstalled(name);
  const dir = packageDir(paths, name);
  const manifest = await loadManifest(dir);
  if (manifest.name !== name) {
    throw new YepError('E_MANIFEST', `${dir}/plugin.json names "${manifest.name}", not "${name}"; yolop skips such a package.`, {
      hint: `Reinstall it (yep-ext remove ${name}; yep-ext install <source>).`,
    });
  }
  return manifest;
}
