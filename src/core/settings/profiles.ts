/**
 * yolop's settings profiles (host-compat §5, "Profiles"; host 0.18
 * `src/config/profile.rs`): `<config>/profiles/<name>.toml`, chosen by
 * `yolop --profile <name>`. A profile's `[[capabilities]]` entries are applied
 * after settings.toml's, or instead of them under `capabilities_mode` =
 * `replace`/`only`/`exclusive` (settings.ts reads and writes them). This module
 * only finds a profile's file, and refuses a profile that does not exist.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { YepError, errnoCode } from '../errors.js';
import { inspectRegularFile } from '../fs/read-regular-file.js';
import { isValidName } from '../package/names.js';
import type { Paths } from '../paths.js';

/** `<config>/profiles`. */
const profilesDir = (paths: Paths): string => join(paths.configDir, 'profiles');

/** The profiles that exist (`<name>.toml` files), sorted. */
function listProfiles(paths: Paths): string[] {
  try {
    return readdirSync(profilesDir(paths), { withFileTypes: true })
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith('.toml') && isValidName(e.name.slice(0, -'.toml'.length)))
      .map((e) => e.name.slice(0, -'.toml'.length))
      .sort();
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw e;
  }
}

/**
 * The file of profile `name`. A name outside `^[A-Za-z0-9_-]+$` is E_NAME (it is
 * joined onto a path); a profile with no file is E_NOT_FOUND naming the ones that
 * exist: yep-ext never creates a profile, as yolop never does.
 */
export function profileFile(paths: Paths, name: string): string {
  if (!isValidName(name)) {
    throw new YepError('E_NAME', `Invalid profile name ${JSON.stringify(name.slice(0, 80))}: profile names match ^[A-Za-z0-9_-]+$.`, {
      hint: `A profile is ${join(profilesDir(paths), '<name>.toml')}; pass its <name>.`,
      details: { profile: name.slice(0, 80), dir: profilesDir(paths) },
    });
  }
  const file = join(profilesDir(paths), `${name}.toml`);
  if (inspectRegularFile(file, 'The profile file') === undefined) {
    const existing = listProfiles(paths);
    throw new YepError('E_NOT_FOUND', `There is no profile "${name}": ${file} does not exist.`, {
      hint:
        existing.length > 0
          ? `Profiles here: ${existing.join(', ')}. yolop reads a profile only from ${join(profilesDir(paths), '<name>.toml')}.`
          : `No profile exists in ${profilesDir(paths)}. Create ${file} (yolop reads it with \`yolop --profile ${name}\`), then run the command again.`,
      details: { profile: name, file, profiles: existing },
    });
  }
  return file;
}
