/**
 * settings.toml (host-compat §5): the host applies the `[[capabilities]]` entries
 * for `ref = "ext:<name>"` (or `id`) in file order and the last one decides
 * (host-reading.ts computes that reading; every report uses it). Each edit folds
 * the extension's entries into the one entry that makes the host's reading what
 * the command promises. The file is the user's: yep-ext rewrites only the byte
 * spans of its own `ext:<name>` tables, proves by re-parsing that nothing else
 * changed, and never overwrites a file it cannot read. Disabling keeps the entry
 * (and its config) with `enabled = false` instead of deleting it as the host does.
 *
 * The IO functions do not take the installer lock: callers (operations, `remove`)
 * already hold it, and the lock is not re-entrant.
 */
import { YepError, stateIoError } from '../errors.js';
import type { TomlPosition } from '../text/toml-position.js';
import { ensureDir, sweepAtomicTemps, writeFileAtomic } from '../fs/fs-atomic.js';
import { assertValidName, isValidName } from '../package/names.js';
import type { Paths } from '../paths.js';
import {
  applySplices,
  canonicalToml,
  formatTomlKey,
  formatTomlString,
  formatTomlValue,
  insertionSplice,
  parseTomlText,
  parseEditableToml,
  loadEditableText,
  removalSplice,
  type Splice,
  type TomlLine,
  type TomlTable,
} from './toml-edit.js';

import { RESERVED_KEYS, entriesFor, extRef, hostReading, isTable, refOf, userConfigIndex, type ExtensionSettings } from './host-reading.js';

export { RESERVED_KEYS, extRef, hostReading, type ExtensionSettings };

export type SettingsEdit =
  /** Fold into one enabled entry; `values` (`undefined` removes a key) are set on the way, in the same write. */
  | { op: 'enable'; values?: Record<string, unknown> }
  /** Fold into one `enabled = false` entry keeping the user's config. */
  | { op: 'disable' }
  /** Set config, keeping the host's enabled state (`undefined` removes a key). */
  | { op: 'set'; values: Record<string, unknown> }
  | { op: 'remove' };

export interface EditResult {
  text: string;
  changed: boolean;
}

interface Element {
  /** Position in the parsed `capabilities` array. */
  index: number;
  /** Line index of the `[[capabilities]]` header. */
  first: number;
  /** Line index of the last statement that belongs to the table. */
  last: number;
  /** Line indexes of key/values before any sub-table header. */
  directKvs: number[];
  /** Line indexes of `[capabilities.x]` / `[[capabilities.x]]` headers. */
  subHeaders: number[];
  table: TomlTable;
}

interface SettingsDoc {
  file: string;
  text: string;
  data: TomlTable;
  lines: TomlLine[];
  eol: '\n' | '\r\n';
  elements: Element[];
  /** Why the capabilities cannot be edited as text (inline array, plain table...). */
  uneditable?: string;
}

/** `--json` gets `details: {file, line, column}` (line/column null when the problem has no one place). */
function corrupt(file: string, why: string, at?: TomlPosition): YepError {
  return new YepError('E_STATE', `The settings file ${file} is unreadable: ${why}.`, {
    hint: `yep-ext will not overwrite it. Fix it (yolop reads it too), or move it aside (mv "${file}" "${file}.bak") and run the command again.`,
    details: { file, line: at?.line ?? null, column: at?.column ?? null },
  });
}

/** Parse and index a settings document; throws E_STATE naming `file` when it is not valid TOML. */
function parseSettings(text: string, file: string): SettingsDoc {
  const parsed = parseEditableToml(text, file, (why, at) => corrupt(file, why, at));
  const { data, lines } = parsed;
  const doc: SettingsDoc = { file, ...parsed, elements: [] };
  const caps = data.capabilities;
  if (caps === undefined) return doc;
  if (!Array.isArray(caps)) {
    doc.uneditable = '`capabilities` is not an array of tables';
    return doc;
  }
  let current: Element | undefined;
  let inSub = false;
  lines.forEach((line, i) => {
    if (line.kind === 'header') {
      if (line.path[0] === 'capabilities' && line.path.length === 1 && line.array) {
        current = { index: doc.elements.length, first: i, last: i, directKvs: [], subHeaders: [], table: {} };
        doc.elements.push(current);
        inSub = false;
      } else if (current && line.path[0] === 'capabilities' && line.path.length > 1) {
        current.subHeaders.push(i);
        current.last = i;
        inSub = true;
      } else {
        current = undefined;
      }
    } else if (line.kind === 'kv' && current) {
      if (!inSub) current.directKvs.push(i);
      current.last = i;
    }
  });
  if (doc.elements.length !== caps.length || caps.some((c) => !isTable(c))) {
    doc.uneditable = '`capabilities` is written as an inline array, not as [[capabilities]] tables';
    doc.elements = [];
    return doc;
  }
  for (const el of doc.elements) el.table = caps[el.index] as TomlTable;
  return doc;
}

function withoutExtension(data: TomlTable, name: string): TomlTable {
  const copy: TomlTable = { ...data };
  if (Array.isArray(copy.capabilities)) {
    copy.capabilities = copy.capabilities.filter((c) => !(isTable(c) && refOf(c) === extRef(name)));
    if ((copy.capabilities as unknown[]).length === 0) delete copy.capabilities;
  }
  return copy;
}

/** What the host makes of `name` in this settings text (pure; see host-reading.ts). */
export function readSettingsFromText(text: string, name: string, file = 'settings.toml'): ExtensionSettings {
  return settingsLookup(text, file)(name);
}

/**
 * Parse settings text once and answer readSettingsFromText for any number of
 * names: `list` asks for every installed extension, and re-parsing the file per
 * extension was most of its time with 50 installed (docs/performance.md).
 */
export function settingsLookup(text: string, file = 'settings.toml'): SettingsLookup {
  const doc = parseSettings(text, file);
  const byRef = new Map<unknown, TomlTable[]>();
  const caps = doc.data.capabilities;
  if (Array.isArray(caps)) {
    for (const c of caps) if (isTable(c)) byRef.set(refOf(c), [...(byRef.get(refOf(c)) ?? []), c]);
  }
  const lookup = (name: string): ExtensionSettings => hostReading(byRef.get(extRef(name)) ?? []);
  const named = [...byRef.keys()].filter((r): r is string => typeof r === 'string' && r.startsWith(extRef(''))).map((r) => r.slice(extRef('').length));
  return Object.assign(lookup, { extNames: named });
}

/** readSettingsFromText for any name, and the names of every `ext:<name>` entry, in file order. */
export type SettingsLookup = ((name: string) => ExtensionSettings) & { readonly extNames: readonly string[] };

function assertConfigKey(key: string): void {
  if (RESERVED_KEYS.includes(key)) {
    throw new YepError('E_USAGE', `"${key}" is reserved by yolop in a [[capabilities]] table and cannot be a config key.`, {
      hint: `The extension's config_schema should rename the field; reserved keys are ${RESERVED_KEYS.join(', ')}.`,
    });
  }
  if (!isValidName(key)) throw new YepError('E_USAGE', `Invalid config key ${JSON.stringify(key)}: keys must match ^[A-Za-z0-9_-]+$.`);
}

function formatValueFor(key: string, value: unknown): string {
  try {
    return formatTomlValue(value);
  } catch (e) {
    throw new YepError('E_USAGE', `The value for ${key} cannot be written to TOML: ${(e as Error).message}.`);
  }
}

/** `enabled = false`-style lines for a brand-new table. */
function newTableBlock(name: string, eol: string, extra: [string, unknown][]): string {
  const rows = ['[[capabilities]]', `ref = ${formatTomlString(extRef(name))}`, ...extra.map(([k, v]) => `${formatTomlKey(k)} = ${formatValueFor(k, v)}`)];
  return rows.map((r) => r + eol).join('');
}

/** Key/value lines of `el` whose key is `key` (dotted forms are refused: we do not rewrite them). */
function directKeyLines(doc: SettingsDoc, el: Element, key: string): TomlLine[] {
  const found = el.directKvs.map((i) => doc.lines[i] as TomlLine).filter((l) => l.path[0] === key);
  const subTable = el.subHeaders.some((i) => (doc.lines[i] as TomlLine).path[1] === key);
  if (subTable || found.some((l) => l.path.length > 1)) {
    throw new YepError(
      'E_STATE',
      `In ${doc.file}, the ${String(refOf(el.table))} table writes "${key}" as a dotted key or sub-table; yep-ext only rewrites plain \`key = value\` lines.`,
      {
        hint: `Edit "${key}" in ${doc.file} by hand (write it as \`${key} = <value>\`), then run the command again.`,
      },
    );
  }
  return found;
}

/** Where new direct keys of `el` go: after its last direct key/value, else after its header. */
function directInsertPos(doc: SettingsDoc, el: Element): number {
  const lastKv = el.directKvs[el.directKvs.length - 1];
  return (doc.lines[lastKv ?? el.first] as TomlLine).end;
}

/** Text to insert at a line boundary `pos`, adding a line break first if the file ends without one. */
function linesAt(doc: SettingsDoc, pos: number, rows: string[]): Splice {
  const lead = pos > 0 && doc.text[pos - 1] !== '\n' ? doc.eol : '';
  return { start: pos, end: pos, text: lead + rows.map((r) => r + doc.eol).join('') };
}

/** Merge overlapping deletions (two removed tables may claim the same blank line). */
function mergeDeletions(splices: Splice[]): Splice[] {
  const sorted = [...splices].sort((a, b) => a.start - b.start);
  const out: Splice[] = [];
  for (const s of sorted) {
    const prev = out[out.length - 1];
    if (prev && s.start < prev.end) prev.end = Math.max(prev.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** Splices that set (or, with `undefined`, remove) config keys in `el`, and the table they produce from `base`. */
function configSplices(doc: SettingsDoc, el: Element, values: [string, unknown][], base: TomlTable): { splices: Splice[]; table: TomlTable } {
  const splices: Splice[] = [];
  const inserts: string[] = [];
  const table: TomlTable = { ...base };
  for (const [key, value] of values) {
    const existing = directKeyLines(doc, el, key);
    if (value === undefined) {
      for (const l of existing) splices.push({ start: l.start, end: l.end, text: '' });
      delete table[key];
      continue;
    }
    const line = existing[0];
    if (line && key in el.table && canonicalToml(el.table[key]) === canonicalToml(value)) continue;
    if (line) splices.push({ start: line.valueStart, end: line.valueEnd, text: formatValueFor(key, value) });
    else inserts.push(`${formatTomlKey(key)} = ${formatValueFor(key, value)}`);
    table[key] = value;
  }
  if (inserts.length > 0) {
    const lastKv = el.directKvs[el.directKvs.length - 1];
    const indent = lastKv === undefined ? '' : (doc.lines[lastKv] as TomlLine).indent;
    splices.push(
      linesAt(
        doc,
        directInsertPos(doc, el),
        inserts.map((row) => indent + row),
      ),
    );
  }
  return { splices, table };
}

/** Splices that make `el` say `enabled = false` (or drop that line), and the resulting table. */
function switchSplices(doc: SettingsDoc, el: Element, enabled: boolean): { splices: Splice[]; table: TomlTable } {
  const wasEnabled = el.table.enabled !== false;
  if (enabled === wasEnabled) return { splices: [], table: { ...el.table } };
  if (enabled) {
    const { enabled: _dropped, ...rest } = el.table;
    return { splices: directKeyLines(doc, el, 'enabled').map((l): Splice => ({ start: l.start, end: l.end, text: '' })), table: rest };
  }
  const table = { ...el.table, enabled: false };
  const existing = directKeyLines(doc, el, 'enabled')[0];
  if (existing) return { splices: [{ start: existing.valueStart, end: existing.valueEnd, text: 'false' }], table };
  const refLine = el.directKvs.map((i) => doc.lines[i] as TomlLine).find((l) => l.path.length === 1 && (l.path[0] === 'ref' || l.path[0] === 'id'));
  const at = refLine ?? (doc.lines[el.first] as TomlLine);
  return { splices: [linesAt(doc, at.end, [`${refLine?.indent ?? ''}enabled = false`])], table };
}

/**
 * The edit as splices, and the one entry (or none) it must leave for `name`.
 * enable, disable and set fold every entry for `name` into one: the entry
 * holding the user's config (host-reading.ts, userConfigIndex; the last entry
 * when none holds config) is kept in place with its layout and comments, gets
 * the wanted switch and values, and every other entry for `name` is deleted.
 * The host then reads exactly that entry: enabled or not, with that config.
 */
function plan(doc: SettingsDoc, name: string, edit: SettingsEdit): { splices: Splice[]; expected: TomlTable[] } {
  const els = doc.elements.filter((el) => refOf(el.table) === extRef(name));
  const tables = els.map((el) => el.table);
  if (edit.op === 'remove') return { splices: mergeDeletions(els.map((el) => removalSplice(doc.lines, el.first, el.last))), expected: [] };

  const values = Object.entries(edit.op === 'disable' ? {} : (edit.values ?? {}));
  for (const [k] of values) assertConfigKey(k);
  // `set` keeps what the host reads today; enable and disable say what they want.
  const enabled = edit.op === 'set' ? hostReading(tables).enabled : edit.op === 'enable';

  if (els.length === 0) {
    const defined = values.filter(([, v]) => v !== undefined);
    // Config alone never enables (the host's flaw is to enable as a side effect): write it disabled.
    if (!enabled && defined.length === 0) return { splices: [], expected: [] };
    const extra: [string, unknown][] = enabled ? defined : [['enabled', false], ...defined];
    const lastEl = doc.elements[doc.elements.length - 1];
    const endOfCapabilities = lastEl ? (doc.lines[lastEl.last] as TomlLine).end : doc.text.length;
    return {
      splices: [insertionSplice(doc.text, endOfCapabilities, doc.eol, newTableBlock(name, doc.eol, extra))],
      expected: [{ ref: extRef(name), ...Object.fromEntries(extra) }],
    };
  }

  const userIndex = userConfigIndex(tables);
  const keep = els[userIndex === -1 ? els.length - 1 : userIndex] as Element;
  const switched = switchSplices(doc, keep, enabled);
  const configured = configSplices(doc, keep, values, switched.table);
  const deletions = mergeDeletions(els.filter((el) => el !== keep).map((el) => removalSplice(doc.lines, el.first, el.last)));
  return { splices: [...deletions, ...switched.splices, ...configured.splices], expected: [configured.table] };
}

/**
 * Apply one edit to settings text (pure). Only the `ext:<name>` tables change;
 * the result is re-parsed and must equal the old document everywhere else.
 */
export function applySettingsEdit(text: string, name: string, edit: SettingsEdit, file = 'settings.toml'): EditResult {
  assertValidName(name);
  const doc = parseSettings(text, file);
  const needsText = edit.op === 'remove' ? entriesFor(doc.data, name).length > 0 : true;
  if (doc.uneditable && needsText) {
    throw new YepError('E_STATE', `yep-ext cannot edit ${file}: ${doc.uneditable}.`, {
      hint: `Write each capability as its own [[capabilities]] table (see docs/configuration.md), then run the command again. Nothing was changed.`,
    });
  }
  const { splices, expected } = plan(doc, name, edit);
  if (splices.length === 0) return { text, changed: false };
  const next = applySplices(text, splices);
  let parsed: TomlTable;
  try {
    parsed = parseTomlText(next);
  } catch (e) {
    throw unsafeEdit(file, name, e);
  }
  const othersSame = canonicalToml(withoutExtension(doc.data, name)) === canonicalToml(withoutExtension(parsed, name));
  const oursRight = canonicalToml(entriesFor(parsed, name)) === canonicalToml(expected);
  if (!othersSame || !oursRight) throw unsafeEdit(file, name);
  return { text: next, changed: next !== text };
}

function unsafeEdit(file: string, name: string, cause?: unknown): YepError {
  return new YepError('E_STATE', `yep-ext could not edit the ${extRef(name)} entry in ${file} without disturbing the rest of the file; nothing was written.`, {
    hint: `Edit the [[capabilities]] table with ref = "${extRef(name)}" by hand, or report this as a bug with the file attached.`,
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** Read settings.toml as text: '' when missing; E_STATE when unreadable or not UTF-8. */
export async function loadSettingsText(paths: Paths): Promise<string> {
  return loadEditableText(paths.settingsFile, (why) => corrupt(paths.settingsFile, why), 'The settings file');
}

async function editSettings(paths: Paths, name: string, edit: SettingsEdit): Promise<{ changed: boolean }> {
  const text = await loadSettingsText(paths);
  const result = applySettingsEdit(text, name, edit, paths.settingsFile);
  if (!result.changed) return { changed: false };
  try {
    await ensureDir(paths.configDir, 0o755);
  } catch (e) {
    throw stateIoError('create', paths.configDir, e);
  }
  await sweepAtomicTemps(paths.settingsFile);
  await writeFileAtomic(paths.settingsFile, result.text, { symlinks: 'follow', what: 'The settings file' });
  return { changed: true };
}

/** What settings.toml says about `name` (a missing file says: not enabled, no config). */
export async function readExtensionSettings(paths: Paths, name: string): Promise<ExtensionSettings> {
  return readSettingsFromText(await loadSettingsText(paths), assertValidName(name), paths.settingsFile);
}

/**
 * Enable `name`: fold its entries into one enabled entry (or add one) holding
 * the user's config plus `values` (`undefined` removes a key), in one atomic
 * write, so the host never reads the switch without the config or the reverse.
 * Caller holds the installer lock.
 */
export async function enableExtension(paths: Paths, name: string, values: Record<string, unknown> = {}): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'enable', values });
}

/** Disable `name`: fold its entries into one `enabled = false` entry keeping the user's config. Caller holds the lock. */
export async function disableExtension(paths: Paths, name: string): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'disable' });
}

/**
 * Set (or, with `undefined`, remove) inline config keys of `name`, folding its
 * entries into one that the host reads as enabled exactly when it did before.
 * Values keep their types (numbers, booleans, strings, arrays, tables). Never
 * enables a disabled extension. Caller holds the lock.
 */
export async function setExtensionConfig(paths: Paths, name: string, values: Record<string, unknown>): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'set', values });
}

/** Delete every `ext:<name>` table (used by `remove`); everything else stays. Caller holds the lock. */
export async function removeExtensionSettings(paths: Paths, name: string): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'remove' });
}
