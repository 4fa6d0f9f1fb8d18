/**
 * Which config fields of an installed extension have a value and where it comes
 * from, never what it is: `list`, `enable` and `doctor` report set/unset only.
 * "Set" means set as the host reads it (host-reading.ts): a value on an entry
 * the host ignores is `kept`, not set.
 */
import { configFields, type ConfigField, type Manifest } from '../package/manifest.js';
import type { Paths } from '../paths.js';
import { secretStatus } from './secrets.js';
import { readExtensionSettings, type ExtensionSettings } from './settings.js';

export type FieldSource = 'settings' | 'secrets' | 'keychain' | 'default' | 'unset';

export interface FieldStatus {
  key: string;
  secret: boolean;
  required: boolean;
  /** A value was configured (settings.toml, connections.toml or the keychain). */
  set: boolean;
  /**
   * Where the value comes from: `secrets` = connections.toml (the host reads it),
   * `keychain` = the OS keychain (yep-ext only; the host cannot read it),
   * `default` = not configured but the schema has a default.
   */
  source: FieldSource;
  /** Environment variable the host injects the value as; null when none. */
  env: string | null;
  /**
   * Not in effect, but settings.toml keeps a value for it (on a disabled entry,
   * or one a later entry replaced): `yep-ext enable` brings it back. False otherwise.
   */
  kept: boolean;
}

/**
 * Status of one field given what settings and secrets hold. `config` is the
 * config in effect (what the host gives the server), `kept` the config the file
 * keeps that is not in effect (ExtensionSettings).
 */
function fieldStatus(
  field: ConfigField,
  config: Record<string, unknown>,
  fileSecrets: string[],
  keychainSecrets: string[],
  kept: Record<string, unknown> = {},
): FieldStatus {
  let source: FieldSource;
  if (field.secret) source = fileSecrets.includes(field.key) ? 'secrets' : keychainSecrets.includes(field.key) ? 'keychain' : 'unset';
  else source = field.key in config ? 'settings' : 'unset';
  const set = source !== 'unset';
  if (!set && field.default !== undefined) source = 'default';
  const isKept = !set && !field.secret && field.key in kept;
  return { key: field.key, secret: field.secret, required: field.required, set, source, env: field.env || null, kept: isKept };
}

/**
 * Per declared field: set or not and from where, in declaration order. `settings`
 * is the extension's settings when the caller already has them (list reads the
 * file once for all extensions).
 */
export async function configStatus(paths: Paths, manifest: Manifest, settings?: ExtensionSettings): Promise<FieldStatus[]> {
  const fields = configFields(manifest);
  if (fields.length === 0) return [];
  settings ??= await readExtensionSettings(paths, manifest.name);
  const secrets = fields.some((f) => f.secret) ? await secretStatus(paths, manifest.name) : { file: [], keychain: [] };
  return fields.map((f) => fieldStatus(f, settings.config, secrets.file, secrets.keychain, settings.kept));
}

/** Required fields with neither a value nor a default: what keeps an extension from working. */
export function missingFields(statuses: FieldStatus[]): FieldStatus[] {
  return statuses.filter((s) => s.required && s.source === 'unset');
}
