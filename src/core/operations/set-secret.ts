/**
 * `set-secret`: store (or with `unset`, remove) one field the manifest declares
 * `secret: true`. The value arrives as a Secret from a hidden prompt or stdin,
 * read by the CLI only after the field is known to be valid, so nobody types a
 * credential for a field that will be refused.
 */
import { resolveInstalled } from '../store/installed-name.js';
import type { Context } from '../context.js';
import { assertConfigValue, checkTypedText } from '../settings/config-values.js';
import type { PromptValidator } from './enable.js';
import { YepError } from '../errors.js';
import { shownArgument } from '../text/redact.js';
import { closestMatches } from '../text/closest.js';
import { withInstallLock } from '../store/install-lock.js';
import { assertStillInstalled, loadInstalledManifest, isInstalled } from '../store/installed-manifest.js';
import { keychainOptions } from '../settings/keychain.js';
import { configFields, type ConfigField, type Manifest } from '../package/manifest.js';
import { isValidName } from '../package/names.js';
import type { Secret } from '../settings/secret-value.js';
import { chooseSecretStore, setSecret, unsetSecret, type SecretStoreKind } from '../settings/secrets.js';
import { readExtensionSettings } from '../settings/settings.js';

export interface SetSecretOptions {
  /** Remove the secret instead of setting it. */
  unset?: boolean;
  /** Store in the OS keychain (falls back to connections.toml when unreachable). */
  keychain?: boolean;
  /** Called once the field is known to be valid; returns the value. */
  readValue?: (field: ConfigField, extension: string, validate: PromptValidator) => Promise<Secret>;
}

export interface SetSecretResult {
  name: string;
  field: string;
  action: 'set' | 'unset';
  changed: boolean;
  /** Where the value is (set) or was removed from (unset: both are cleared). */
  store: SecretStoreKind;
  /** connections.toml, the only secret store yolop reads. */
  file: string;
  /** yolop reads the value: false when it is in the keychain. */
  host_visible: boolean;
  /** The environment variable yolop passes it to the server as (null: none declared, or an unset). */
  env: string | null;
  /**
   * settings.toml enables the extension (read as the host reads it): yolop starts its server, and
   * passes the secret, only then. null: an unset, or settings.toml could not be read.
   */
  enabled: boolean | null;
}

function secretField(manifest: Manifest, key: string): ConfigField {
  const fields = configFields(manifest);
  const secrets = fields.filter((f) => f.secret).map((f) => f.key);
  const field = fields.find((f) => f.key === key);
  if (!field) {
    // The word is not repeated: where a field name belongs, an agent may have put the secret itself (`token=sk-…`, or the value alone).
    const given = key.includes('=')
      ? ` ${shownArgument(key)}: the value is never taken on the command line (a hidden prompt, or --stdin)`
      : ' by the name given (not repeated here: it may be a value)';
    const [near] = closestMatches(key.split('=')[0] ?? '', secrets);
    throw new YepError('E_USAGE', `${manifest.name} declares no config field${given}.`, {
      hint: `${near !== undefined ? `Did you mean ${near}? ` : ''}${secrets.length > 0 ? `Secret fields of ${manifest.name}: ${secrets.join(', ')}.` : `${manifest.name} declares no secret fields.`}`,
    });
  }
  if (!field.secret) {
    throw new YepError('E_USAGE', `${manifest.name}.${key} is not a secret; it belongs in settings.toml.`, {
      hint: `Run \`yep-ext enable ${manifest.name} --config ${key}=<value>\`.${secrets.length > 0 ? ` Secret fields: ${secrets.join(', ')}.` : ''}`,
    });
  }
  return field;
}

export async function runSetSecret(ctx: Context, input: string, key: string, options: SetSecretOptions = {}): Promise<SetSecretResult> {
  const name = await resolveInstalled(ctx, input);
  const keychain = keychainOptions(ctx);
  const base = { name, field: key, file: ctx.paths.secretsFile };
  if (options.unset) {
    // Removing needs no manifest: a leftover secret of an uninstalled extension can go too.
    if (await isInstalled(ctx.paths, name)) secretField(await loadInstalledManifest(ctx.paths, name), key);
    else if (!isValidName(key)) throw new YepError('E_USAGE', `Invalid field name ${shownArgument(key)}.`);
    const r = await withInstallLock(ctx, () => unsetSecret(ctx.paths, name, key, { keychain }));
    for (const w of r.warnings) ctx.log.warn(w);
    return { ...base, action: 'unset', changed: r.changed, store: 'file', host_visible: true, env: null, enabled: null };
  }
  const manifest = await loadInstalledManifest(ctx.paths, name);
  const field = secretField(manifest, key);
  const store = chooseSecretStore(ctx.env, options.keychain);
  if (!options.readValue)
    throw new YepError('E_USAGE', 'No value source: give --stdin or run in a terminal.', {
      hint: `Pipe the value: printf %s "$VALUE" | yep-ext set-secret ${name} ${key} --stdin`,
    });
  const value = await options.readValue(field, name, (raw) => checkTypedText(field, raw, name));
  assertConfigValue(field, value.reveal(), name);
  const r = await withInstallLock(ctx, async () => {
    // Taking the lock may have completed an interrupted removal of it (recovery), or waited out one.
    await assertStillInstalled(ctx.paths, name);
    return setSecret(ctx.paths, name, key, value, { store, keychain });
  });
  for (const w of r.warnings) ctx.log.warn(w);
  // Stored is not delivered: the host hands a secret to the server only as the variable its `env` names.
  if (!field.env)
    ctx.log.warn(
      `${name}.${key} declares no "env" in ${name}'s plugin.json: yolop never passes it to the server (a secret reaches the server only as the environment variable \`env\` names). Ask the extension's author to add one; \`yep-ext doctor ${name}\` shows it too.`,
    );
  const enabled = await readExtensionSettings(ctx.paths, name).then(
    (s) => s.enabled,
    () => null,
  );
  return { ...base, action: 'set', changed: r.changed, store: r.store, host_visible: r.store === 'file', env: field.env ?? null, enabled };
}
