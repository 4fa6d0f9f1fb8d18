/** Human text for enable / disable / set-secret / config results (pure: data in, text out). */
import type { FieldStatus } from '../core/settings/config-status.js';
import type { DisableResult } from '../core/operations/disable.js';
import type { EnableResult } from '../core/operations/enable.js';
import type { SetSecretResult } from '../core/operations/set-secret.js';
import type { ConfigSetResult, ConfigShowResult } from '../core/operations/config.js';
import { sanitize } from '../core/text/sanitize.js';
import { keychainAccount, KEYCHAIN_SERVICE } from '../core/settings/keychain.js';

/** A field's state, worded alike by enable and info (the file it is set in, never the value). */
export const SOURCE_TEXT: Record<FieldStatus['source'], string> = {
  settings: 'set (settings.toml)',
  secrets: 'set (connections.toml)',
  keychain: 'set (OS keychain; yolop cannot read it)',
  default: 'unset (default applies)',
  unset: 'unset',
};

/** A value settings.toml keeps on an entry the host ignores. */
const KEPT_TEXT = '; kept in settings.toml, not in effect';

/** The settings file a command wrote: settings.toml, or the profile yolop reads over it. */
const settingsName = (profile: string | null): string => (profile === null ? 'settings.toml' : `profile ${profile}`);

/** One line per field: key, kind, status. Never a value. Under a profile a value may sit in either file. */
function renderFields(fields: FieldStatus[], profile: string | null): string[] {
  const width = Math.max(...fields.map((f) => f.key.length), 3);
  const source = (f: FieldStatus) => (f.source === 'settings' && profile !== null ? `set (settings.toml or profile ${profile})` : SOURCE_TEXT[f.source]);
  return fields.map(
    (f) =>
      `  ${f.key.padEnd(width)}  ${(f.secret ? 'secret' : 'config').padEnd(6)}  ${f.required ? 'required' : 'optional'}  ${source(f)}${f.kept ? KEPT_TEXT : ''}`,
  );
}

/** `quiet` (-q): the result line only (the setup still missing is an error, shown anyway). */
export function renderEnable(r: EnableResult, quiet = false): string {
  const lines = [
    r.was_enabled
      ? r.changed
        ? `${r.name} was already enabled; configuration updated.`
        : `${r.name} is already enabled; nothing changed.`
      : `Enabled ${r.name}${r.profile === null ? '' : ` in profile ${r.profile}`}.`,
  ];
  if (quiet) return lines[0]!;
  if (r.config_set.length > 0) lines.push(`Saved ${r.config_set.join(', ')} in ${settingsName(r.profile)}.`);
  for (const s of r.secrets_set) lines.push(`Stored secret ${s.key} in ${s.store === 'file' ? 'connections.toml (mode 0600)' : 'the OS keychain'}.`);
  if (r.fields.length > 0) lines.push('Configuration:', ...renderFields(r.fields, r.profile));
  return lines.join('\n');
}

export function renderDisable(r: DisableResult): string {
  const where = r.profile === null ? '' : ` in profile ${r.profile}`;
  return r.changed
    ? `Disabled ${r.name}${where}; its configuration is kept for the next \`yep-ext enable ${r.name}\`.`
    : `${r.name} is already disabled${where}; nothing changed.`;
}

export function renderSetSecret(r: SetSecretResult): string {
  const id = `${r.name}.${r.field}`;
  if (r.action === 'unset') return r.changed ? `Removed secret ${id}.` : `${id} was not set; nothing changed.`;
  if (r.store === 'keychain') {
    return [
      `Stored ${id} in the OS keychain (service "${KEYCHAIN_SERVICE}", account "${keychainAccount(r.name, r.field)}").`,
      'Note: yolop reads secrets only from connections.toml, so the agent will NOT pass this one to the server; `yep-ext doctor` will. See docs/secrets.md.',
    ].join('\n');
  }
  // yolop starts the server (and hands it the secret) only while settings.toml enables it.
  const when = r.enabled === true ? '' : r.enabled === false ? ` once ${r.name} is enabled (\`yep-ext enable ${r.name}\`)` : ` while ${r.name} is enabled`;
  const env = r.env ? `; yolop passes it to the server as ${r.env}${when}` : '';
  return r.changed ? `Stored ${id} in ${r.file} (mode 0600)${env}.` : `${id} already holds that value; nothing changed.`;
}

/** `config show`: one line per field, a non-secret's value in effect, a secret's state only. */
export function renderConfigShow(r: ConfigShowResult): string {
  const where = r.profile === null ? '' : ` (profile ${r.profile})`;
  const head = `${r.name}${where}: ${r.enabled ? 'enabled' : 'not enabled'}`;
  if (r.fields.length === 0) return `${head}; it declares no config.`;
  const width = Math.max(...r.fields.map((f) => f.key.length), 3);
  const lines = r.fields.map((f) => {
    const state = f.secret
      ? SOURCE_TEXT[f.source]
      : f.source === 'settings'
        ? `= ${sanitize(JSON.stringify(f.value), { max: 200 })}`
        : f.source === 'default'
          ? `unset (default ${sanitize(JSON.stringify(f.default), { max: 200 })})`
          : 'unset';
    const env = f.env ? `  -> $${f.env}` : '';
    const kept = f.kept ? `; ${sanitize(JSON.stringify(f.kept_value), { max: 200 })} kept for \`yep-ext enable\`` : '';
    return `  ${f.key.padEnd(width)}  ${(f.secret ? 'secret' : 'config').padEnd(6)}  ${f.required ? 'required' : 'optional'}  ${state}${kept}${env}`;
  });
  const missing = r.missing.length > 0 ? [`Missing required: ${r.missing.join(', ')}.`] : [];
  return [head, ...lines, ...missing].join('\n');
}

/** `config set`: what was written, then the config as it now stands. */
/** `quiet` (-q): the result line only, without the config table. */
export function renderConfigSet(r: ConfigSetResult, quiet = false): string {
  const file = settingsName(r.profile);
  const first = r.changed
    ? `Saved ${r.config_set.join(', ')} for ${r.name} in ${file}.`
    : `${r.name}: ${r.config_set.join(', ')} already set so; nothing changed.`;
  return quiet ? first : [first, renderConfigShow(r)].join('\n');
}
