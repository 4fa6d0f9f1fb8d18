/**
 * What yolop does with an extension's `[[capabilities]]` entries (host-compat §5),
 * as one pure function over the entries in file order. Every report (`list`,
 * `list --json`, `enable`, `disable`, `doctor`, the fast path) and every edit of
 * settings.toml is computed from this reading, so yep-ext never says "enabled"
 * or "set" where the host would not.
 *
 * The host's rules: entries apply in file order; an entry without
 * `enabled = false` adds the capability (replacing an earlier one of the same
 * ref) with *its own* inline config; a later `enabled = false` entry removes it.
 * So the last entry decides, and only that entry's config reaches the server.
 * `id` is read like `ref`.
 *
 * yep-ext's own rule (docs/configuration.md, "Several entries for one
 * extension"): the config the user set is the config of the last enabled entry
 * that holds any, else of the last entry that holds any. That is what an edit
 * keeps when it folds the entries into one, and what `list` shows as "kept, not
 * in effect" when the host does not apply it.
 */
import type { TomlTable } from './toml-edit.js';

/** Keys the host reserves inside a capability table; never config keys. */
export const RESERVED_KEYS: readonly string[] = ['ref', 'id', 'enabled', 'append'];

export const extRef = (name: string): string => `ext:${name}`;

export interface ExtensionSettings {
  /** At least one `[[capabilities]]` entry names this extension. */
  present: boolean;
  /** The host loads it: the last entry for it does not say `enabled = false`. */
  enabled: boolean;
  /** The config the host gives the server: the last entry's, when enabled; else {}. Reserved keys removed. */
  config: Record<string, unknown>;
  /**
   * Config the file holds for it that the host does not apply (on a disabled
   * entry, or on an entry a later one replaced): what `yep-ext enable` brings
   * back. {} when there is none, and always {} when it equals `config`.
   */
  kept: Record<string, unknown>;
  /** How many entries name this extension (several are normal: the host's enable appends one). */
  entries: number;
}

export const isTable = (v: unknown): v is TomlTable => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** The ref an entry names: `ref` when it is a string, else `id`. */
export function refOf(table: TomlTable): unknown {
  return typeof table.ref === 'string' ? table.ref : table.id;
}

/** An entry's inline config: every key but the reserved ones. */
export function configOf(table: TomlTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) if (!RESERVED_KEYS.includes(k)) out[k] = v;
  return out;
}

const isEnabledEntry = (t: TomlTable): boolean => t.enabled !== false;
const holdsConfig = (t: TomlTable): boolean => Object.keys(configOf(t)).length > 0;

/**
 * Index of the entry whose config is "the config the user set": the last
 * enabled entry holding config, else the last entry holding config; -1 when no
 * entry holds any.
 */
export function userConfigIndex(entries: readonly TomlTable[]): number {
  for (let i = entries.length - 1; i >= 0; i--) if (isEnabledEntry(entries[i] as TomlTable) && holdsConfig(entries[i] as TomlTable)) return i;
  for (let i = entries.length - 1; i >= 0; i--) if (holdsConfig(entries[i] as TomlTable)) return i;
  return -1;
}

/** What the host makes of one extension's entries (all entries naming it, in file order). */
export function hostReading(entries: readonly TomlTable[]): ExtensionSettings {
  const lastIndex = entries.length - 1;
  const last = entries[lastIndex];
  const enabled = last !== undefined && isEnabledEntry(last);
  const config = enabled ? configOf(last) : {};
  const user = userConfigIndex(entries);
  // The user's config is in effect exactly when it is the last entry's and that entry is enabled.
  const kept = user === -1 || (enabled && user === lastIndex) ? {} : configOf(entries[user] as TomlTable);
  return { present: entries.length > 0, enabled, config, kept, entries: entries.length };
}

/** Every entry of a parsed settings document naming `ext:<name>`, in file order. */
export function entriesFor(data: TomlTable, name: string): TomlTable[] {
  const caps = data.capabilities;
  return Array.isArray(caps) ? caps.filter((c): c is TomlTable => isTable(c) && refOf(c) === extRef(name)) : [];
}
