/**
 * Where `yep-ext doctor` gets an installed extension's configured values and
 * secrets, so the server runs with what the host would give it (the host's own
 * doctor injects nothing, so servers that need config fail it but work live):
 *   values  <- settings.toml: the config the host gives an enabled extension (the
 *              last `ext:<name>` entry's, host-reading.ts); for a disabled one, the
 *              config `yep-ext enable` would put in effect (its kept config)
 *   secrets <- connections.toml table ["ext:<name>"] (plus keychain-held fields, which
 *              yolop never reads: the `config` check names them, as a warning)
 * An uninstalled package being authored gets its config the same way when one
 * is on record under its name; otherwise the caller's environment is all it sees.
 */
import type { Context } from '../context.js';
import type { DoctorConfigLoader } from './doctor.js';
import { keychainOptions } from '../settings/keychain.js';
import { getSecrets, loadSecretsText, readSecretsFromText } from '../settings/secrets.js';
import { readExtensionSettings } from '../settings/settings.js';

export function doctorConfigLoader(ctx: Context): DoctorConfigLoader {
  return async (name) => {
    const settings = await readExtensionSettings(ctx.paths, name);
    const secrets = await getSecrets(ctx.paths, name, { keychain: keychainOptions(ctx) });
    // Which of them yolop will not have: the keychain's (the config check says so).
    const inFile = readSecretsFromText(await loadSecretsText(ctx.paths), name, ctx.paths.secretsFile);
    const keychain = Object.keys(secrets).filter((k) => !(k in inFile));
    return { values: settings.enabled ? settings.config : settings.kept, secrets, ...(keychain.length ? { keychain } : {}) };
  };
}
