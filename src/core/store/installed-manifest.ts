/**
 * The manifest of an installed extension, as the host would find it: the store
 * directory `<store>/<name>` (a symlink to a directory counts, as for the host)
 * holding a plugin.json whose `name` is `<name>`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { inspectRegularFile } from '../fs/read-regular-file.js';
import { MANIFEST_FILE, loadManifest, type Manifest } from '../package/manifest.js';
import { packageDir, type Paths } from '../paths.js';

/**
 * How a path install whose directory moved is installed again: from where it is now, with
 * --yes, since the lock still names the old directory and install asks before replacing an
 * entry from another source (without a TTY it refuses, exit 7). One wording for every hint.
 */
export const INSTALL_MOVED_DIR = 'yep-ext install <its directory> --yes';

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

/**
 * Not installed, said with what the lock knows: a name the lock pins whose package is gone (a
 * linked directory moved or deleted, a store entry removed by hand) is repaired from its
 * recorded source by `install --force <name>`; the default hint's `install <name>` would
 * look up the crate `yolop-extension-<name>` instead, another source altogether.
 * `unpinned` is the error for a name the lock does not pin (each command words its own).
 */
export async function notInstalledHere(paths: Paths, name: string, unpinned: () => YepError = () => notInstalled(name)): Promise<YepError> {
  // Lazily: only this error path reads the lock here.
  const { findEntry, loadStoreLock } = await import('./lockfile.js');
  const entry = await loadStoreLock(paths).then(
    (lock) => findEntry(lock, name),
    () => undefined,
  );
  if (!entry) return unpinned();
  // A path install is referenced in place: its recorded source is the directory that is gone,
  // so `install --force` would fail on it too. It is installed again from where it is now.
  const { describeSource, isLinked } = await import('../sources/index.js');
  if (isLinked(entry.source)) {
    // Only the store's link may be gone (removed by hand, or pointing elsewhere): the directory
    // is then still there, and saying it is gone sends the user looking for a move that never was.
    const dir = describeSource(entry.source);
    if (existsSync(join(dir, MANIFEST_FILE))) {
      return new YepError(
        'E_NOT_INSTALLED',
        `The extension "${name}" is not installed: extensions.lock pins it to the local directory ${dir}, which is still there, but its store entry ${packageDir(paths, name)} does not lead to it, so yolop does not find it.`,
        {
          hint: `Link it again with \`yep-ext install --force ${name}\` (it re-reads ${dir}), or drop it with \`yep-ext remove ${name}\`.`,
        },
      );
    }
    return new YepError(
      'E_NOT_INSTALLED',
      `The extension "${name}" is not installed: extensions.lock pins it to the local directory ${describeSource(entry.source)}, which is gone (moved or deleted).`,
      {
        hint: `Install it from where it is now (\`${INSTALL_MOVED_DIR}\`: it replaces the entry of the gone directory), or drop it with \`yep-ext remove ${name}\`.`,
      },
    );
  }
  return new YepError(
    'E_NOT_INSTALLED',
    `The extension "${name}" is not installed: extensions.lock pins it, but its package is missing from the store (${packageDir(paths, name)}).`,
    {
      hint: `Reinstall it from its recorded source with \`yep-ext install --force ${name}\` (or \`yep-ext install --frozen\`), or drop it with \`yep-ext remove ${name}\`.`,
    },
  );
}

/** Load the installed manifest of `name`: E_NOT_INSTALLED when absent, E_MANIFEST when the host would skip it. */
export async function loadInstalledManifest(paths: Paths, name: string): Promise<Manifest> {
  if (!(await isInstalled(paths, name))) throw await notInstalledHere(paths, name);
  const dir = packageDir(paths, name);
  const manifest = await loadManifest(dir);
  if (manifest.name !== name) {
    throw new YepError('E_MANIFEST', `${dir}/plugin.json names "${manifest.name}", not "${name}"; yolop skips such a package.`, {
      hint: `Reinstall it (yep-ext remove ${name}; yep-ext install <source>).`,
    });
  }
  return manifest;
}

/**
 * Under the installer lock, before a command writes for `name` what it checked before the
 * lock (enable, set-secret): the extension is still installed. Taking the lock may have
 * finished an interrupted removal of it (crash recovery) or waited for another process that
 * removed it; writing then would say "Enabled" or "Stored" for what yolop no longer has.
 */
export async function assertStillInstalled(paths: Paths, name: string): Promise<void> {
  if (!(await isInstalled(paths, name))) throw await notInstalledHere(paths, name);
}
