/**
 * What a server receives from its configuration, by the host's rules
 * (extensions-spec "Config & secrets"): non-secret values travel in
 * `initialize.config` (and, when the field names an `env`, also as that
 * variable); `secret: true` values travel only as the variable named by `env`
 * and are stripped from `initialize.config`.
 */
import { configFields, type Manifest } from '../package/manifest.js';

/** The extension's configured values, as the settings and secrets stores hold them. */
export interface ServerConfig {
  /** Non-secret values (settings.toml, inline in the `ext:<name>` entry). */
  values: Record<string, unknown>;
  /** Secret values (connections.toml, table `ext:<name>`). */
  secrets: Record<string, string>;
  /**
   * Secret fields among `secrets` whose value came from the OS keychain: yep-ext can
   * read them back, yolop cannot (it reads only connections.toml).
   */
  keychain?: string[];
}

interface FieldStatus {
  key: string;
  secret: boolean;
  env?: string;
  required: boolean;
  set: boolean;
}

export interface ConfigInjection {
  /** Variables to add to the server's environment. */
  env: Record<string, string>;
  /** `initialize.config`: non-secret values only. */
  initConfig: Record<string, unknown>;
  /** Every secret value in play, for redaction. */
  secretValues: string[];
  fields: FieldStatus[];
  /** Required fields with no value. */
  missing: FieldStatus[];
  /** Secret fields without `env`: the host can never hand them to the server. */
  unreachableSecrets: string[];
}

const asEnvValue = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

export function planConfigInjection(manifest: Manifest, config: ServerConfig | undefined): ConfigInjection {
  const values = config?.values ?? {};
  const secrets = config?.secrets ?? {};
  const env: Record<string, string> = {};
  const initConfig: Record<string, unknown> = {};
  const fields: FieldStatus[] = [];
  const unreachableSecrets: string[] = [];
  const declared = configFields(manifest);
  const secretKeys = new Set(declared.filter((f) => f.secret).map((f) => f.key));
  // Values for keys the schema does not declare still travel (the host passes its table through), secrets never.
  for (const [k, v] of Object.entries(values))
    if (!secretKeys.has(k)) Object.defineProperty(initConfig, k, { value: v, enumerable: true, writable: true, configurable: true });
  for (const f of declared) {
    const value = f.secret ? secrets[f.key] : values[f.key];
    const set = value !== undefined && value !== null && value !== '';
    if (f.secret && !f.env) unreachableSecrets.push(f.key);
    if (set && f.env) env[f.env] = asEnvValue(value);
    fields.push({ key: f.key, secret: f.secret, ...(f.env ? { env: f.env } : {}), required: f.required, set });
  }
  const secretValues = Object.values(secrets).filter((v) => typeof v === 'string' && v !== '');
  return { env, initConfig, secretValues, fields, missing: fields.filter((f) => f.required && !f.set), unreachableSecrets };
}
