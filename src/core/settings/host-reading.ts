/**
 * What yolop does with an extension's `[[capabilities]]` entries (host-compat §5),
 * as one pure function over the entries in file order. Every report (`list`,
 * `info`, `enable`, `disable`, `doctor`, `verify`) and every edit of settings.toml
 * is computed from this reading, so yep-ext never says "enabled" or "set" where
 * the host would not.
 *
 * The host's rule (`apply_capability_settings` and `merge_config` in yolop's
 * capability_settings.rs, checked against that code: scripts/host-settings-oracle)
 * walks the entries in file order over a list of instances:
 * - `enabled = false` (the boolean) removes every instance of the ref seen so far;
 *   its own inline config is ignored;
 * - `append = true` (the boolean) adds another instance with its own config;
 * - any other entry is shallow-merged into the FIRST instance of the ref (its keys
 *   overwrite, keys it does not name are kept), or adds one when there is none.
 * The ref is `ref` when that key is present (it must then be a string), else `id`;
 * an entry without a string ref, or that is not a table, is skipped. Non-boolean
 * `enabled`/`append` values are ignored.
 *
 * What yep-ext's `enable` does to the entries (`enableChoice`) is defined here
 * too, because "kept" config (in the file, not in effect) is exactly what enable
 * would bring back: the two can never disagree.
 */
import type { TomlTable } from './toml-edit.js';

/** Keys the host reserves inside a capability table; never config keys. */
export const RESERVED_KEYS: readonly string[] = ['ref', 'id', 'enabled', 'append'];

export const extRef = (name: string): string => `ext:${name}`;

/** One capability server the host runs for the ref: its config and the entries (indexes) that made it. */
export interface HostInstance {
  config: Record<string, unknown>;
  /** Indexes, into the entries read, of the entries whose config reached this instance. */
  from: number[];
}

export interface ExtensionSettings {
  /** At least one `[[capabilities]]` entry names this extension. */
  present: boolean;
  /** The host loads it: at least one instance is left after every entry is applied. */
  enabled: boolean;
  /** The config of the first instance (the one every plain entry merges into); {} when disabled. Reserved keys removed. */
  config: Record<string, unknown>;
  /** Every instance the host runs, in order (more than one only with `append = true` entries). */
  instances: HostInstance[];
  /**
   * Config the file holds for it that the host does not apply now and that
   * `yep-ext enable` would bring back (the keys whose value enable changes or
   * adds). {} when there is none; for a disabled extension, the whole config
   * enable would give it.
   */
  kept: Record<string, unknown>;
  /** How many entries name this extension (several are normal: the host's enable appends one). */
  entries: number;
}

export const isTable = (v: unknown): v is TomlTable => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** The ref an entry names, as the host reads it: `ref` when present (a string, else none), else `id`; undefined when none. */
export function refOf(table: TomlTable): string | undefined {
  const raw = Object.hasOwn(table, 'ref') ? table.ref : table.id;
  return typeof raw === 'string' ? raw : undefined;
}

/** An entry's inline config: every key but the reserved ones. */
function configOf(table: TomlTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) if (!RESERVED_KEYS.includes(k)) out[k] = v;
  return out;
}

/** The entry removes every instance of its ref (`enabled = false`, the boolean). */
const isRemoveEntry = (t: TomlTable): boolean => t.enabled === false;
/** The entry adds an instance of its own (`append = true`, the boolean), unless it removes. */
const isAppendEntry = (t: TomlTable): boolean => t.enabled !== false && t.append === true;

/** The host's walk over one ref's entries, in file order (see the module comment). */
export function applyEntries(entries: readonly TomlTable[]): HostInstance[] {
  let instances: HostInstance[] = [];
  entries.forEach((entry, i) => {
    if (isRemoveEntry(entry)) {
      instances = [];
      return;
    }
    const config = configOf(entry);
    const first = instances[0];
    if (isAppendEntry(entry) || first === undefined) instances.push({ config, from: [i] });
    else instances[0] = { config: { ...first.config, ...config }, from: [...first.from, i] };
  });
  return instances;
}

/** An entry as `yep-ext enable` leaves it when it switches it back on: no longer a removing entry. */
const switchedOn = (t: TomlTable): TomlTable => {
  const { enabled: _dropped, ...rest } = t;
  return rest;
};

/** The entry names config or adds an instance of its own: it is not a bare `{ ref }`. */
const carriesConfig = (t: TomlTable): boolean => isAppendEntry(t) || Object.keys(configOf(t)).length > 0;

/**
 * Which entries `yep-ext enable` switches back on (`flip`: indexes, each at or after
 * `layerStart`; the entries before it belong to a file read under the one written, a
 * profile's base) and whether it adds a bare `{ ref }` entry (`add`). The least change
 * that does what enable promises, so that disable-then-enable gives the file back:
 * - disabled: the last entry is a removing one (that is what disabled means in the
 *   host's walk); enable switches that one entry back on, and nothing else. A disable
 *   marked exactly that entry, so the pair is an exact round trip, and an
 *   `enabled = false` the user wrote on an earlier entry stays where it is. With no
 *   such entry in the written file, a bare entry is added;
 * - enabled, with config the file keeps but the host does not apply (a disable
 *   followed by the host's own enable, which appends a bare entry): the removing
 *   entries that cancel it are switched back on, the last first, for as long as what
 *   follows them is only bare entries; an entry that names config of its own is what
 *   the user set since, so the walk stops there. Nothing is switched when that
 *   brings no config back.
 */
export function enableChoice(entries: readonly TomlTable[], layerStart: number): { flip: number[]; add: boolean } {
  if (applyEntries(entries).length === 0) {
    const last = entries.length - 1;
    const lastEntry = entries[last];
    return last >= layerStart && lastEntry !== undefined && isRemoveEntry(lastEntry) ? { flip: [last], add: false } : { flip: [], add: true };
  }
  const flip = new Set<number>();
  const now = (): TomlTable[] => entries.map((t, i) => (flip.has(i) ? switchedOn(t) : t));
  for (;;) {
    let r = entries.length - 1;
    while (r >= 0 && (flip.has(r) || !isRemoveEntry(entries[r] as TomlTable))) r--;
    if (
      r < 0 ||
      r < layerStart ||
      now()
        .slice(r + 1)
        .some(carriesConfig)
    )
      break;
    flip.add(r);
  }
  if (flip.size === 0 || same(applyEntries(entries)[0]?.config, applyEntries(now())[0]?.config)) return { flip: [], add: false };
  return { flip: [...flip].sort((a, b) => a - b), add: false };
}

/** The entries as `yep-ext enable` leaves them (enableChoice applied), read for what enable would bring back. */
function enableEntries(entries: readonly TomlTable[], layerStart: number, ref: string): TomlTable[] {
  const { flip, add } = enableChoice(entries, layerStart);
  const out = entries.map((t, i) => (flip.includes(i) ? switchedOn(t) : t));
  return add ? [...out, { ref }] : out;
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (isTable(v) && !Array.isArray(v))
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, v[k]]),
      );
    return v;
  });
}

/**
 * What the host makes of one extension's entries (all entries naming it, in file
 * order; with a profile, the base file's first). `layerStart` is where the
 * entries of the file yep-ext would write start (kept config is what an enable
 * there brings back).
 */
export function hostReading(entries: readonly TomlTable[], layerStart = 0, ref = refOf(entries[0] ?? {}) ?? ''): ExtensionSettings {
  const instances = applyEntries(entries);
  const config = instances[0]?.config ?? {};
  const whenEnabled = applyEntries(enableEntries(entries, layerStart, ref))[0]?.config ?? {};
  const kept = Object.fromEntries(Object.entries(whenEnabled).filter(([k, v]) => !Object.hasOwn(config, k) || !same(config[k], v)));
  return { present: entries.length > 0, enabled: instances.length > 0, config, instances, kept, entries: entries.length };
}

/** Every entry of a parsed settings document naming `ext:<name>`, in file order. */
export function entriesFor(data: TomlTable, name: string): TomlTable[] {
  const caps = data.capabilities;
  return Array.isArray(caps) ? caps.filter((c): c is TomlTable => isTable(c) && refOf(c) === extRef(name)) : [];
}
