/**
 * `config show` and `config set`: the config of one installed extension, read and
 * written as yolop reads settings.toml (or a profile), without enabling or
 * disabling it. The host's `yolop extensions config show|set` verbs, for an agent
 * that learned them (docs/agents.md). Secrets are never values here: show says
 * set or unset, and set refuses a secret field (set-secret reads it from a
 * terminal or stdin, never from the command line).
 */
import type { Context } from '../context.js';
import { configFields } from '../package/manifest.js';
import { configStatus, missingFields, type FieldStatus } from '../settings/config-status.js';
import { profileFile } from '../settings/profiles.js';
import { readExtensionSettings, setExtensionConfig } from '../settings/settings.js';
import { withInstallLock } from '../store/install-lock.js';
import { resolveInstalled } from '../store/installed-name.js';
import { assertStillInstalled, loadInstalledManifest } from '../store/installed-manifest.js';
import { parseConfigAssignments } from './enable.js';

/** One declared field: its state, and for a non-secret field the value in effect (or its default). */
interface ConfigShowField extends FieldStatus {
  /** The value the host gives the server; null for a secret, or when unset with no default. */
  value: unknown;
  /** The manifest's default for a non-secret field; null when none. */
  default: unknown;
  /** A value settings.toml keeps for it that is not in effect (the extension is disabled): what `enable` brings back; null otherwise. */
  kept_value: unknown;
}

export interface ConfigShowResult {
  name: string;
  /** The host loads it (settings.toml, or the profile over it). */
  enabled: boolean;
  profile: string | null;
  fields: ConfigShowField[];
  /** Required fields with neither a value nor a default. */
  missing: string[];
}

export interface ConfigSetResult extends ConfigShowResult {
  changed: boolean;
  /** The keys written. */
  config_set: string[];
}

export interface ConfigScope {
  /** Read and write `<config>/profiles/<profile>.toml` as yolop does under `--profile`. */
  profile?: string | undefined;
}

async function showFor(ctx: Context, name: string, scope: ConfigScope): Promise<ConfigShowResult> {
  const manifest = await loadInstalledManifest(ctx.paths, name);
  const settings = await readExtensionSettings(ctx.paths, name, scope.profile);
  const declared = new Map(configFields(manifest).map((f) => [f.key, f]));
  const statuses = await configStatus(ctx.paths, manifest, settings);
  const fields = statuses.map((f): ConfigShowField => {
    const def = f.secret ? undefined : declared.get(f.key)?.default;
    const value = f.secret ? undefined : f.source === 'settings' ? settings.config[f.key] : def;
    const keptValue = f.kept ? settings.kept[f.key] : undefined;
    return { ...f, value: value ?? null, default: def ?? null, kept_value: keptValue ?? null };
  });
  return { name, enabled: settings.enabled, profile: scope.profile ?? null, fields, missing: missingFields(statuses).map((f) => f.key) };
}

/** The config of an installed extension as the host would hand it to the server. */
export async function showConfig(ctx: Context, input: string, scope: ConfigScope = {}): Promise<ConfigShowResult> {
  const name = await resolveInstalled(ctx, input);
  if (scope.profile !== undefined) profileFile(ctx.paths, scope.profile);
  return showFor(ctx, name, scope);
}

/**
 * Set non-secret config fields (`key=value`, typed by the schema), keeping the
 * enabled state: a disabled or never-enabled extension keeps its values where
 * `enable` brings them back (settings.ts `setExtensionConfig`).
 */
export async function setConfig(ctx: Context, input: string, assignments: string[], scope: ConfigScope = {}): Promise<ConfigSetResult> {
  const name = await resolveInstalled(ctx, input);
  if (scope.profile !== undefined) profileFile(ctx.paths, scope.profile);
  const manifest = await loadInstalledManifest(ctx.paths, name);
  // Refused before the lock is taken: an unknown field, a secret, a value of the wrong type.
  const values = parseConfigAssignments(manifest, assignments);
  return withInstallLock(ctx, async () => {
    await assertStillInstalled(ctx.paths, name);
    const { changed } = await setExtensionConfig(ctx.paths, name, values, scope.profile !== undefined ? { profile: scope.profile } : {});
    return { ...(await showFor(ctx, name, scope)), changed, config_set: Object.keys(values) };
  });
}
