/**
 * settings.toml (host-compat §5): an extension is enabled while a
 * `[[capabilities]]` table with `ref = "ext:<name>"` (or `id`) exists that does
 * not say `enabled = false`; its non-secret config sits inline in that table.
 * The file is the user's: yep-ext rewrites only the byte spans of its own
 * `ext:<name>` tables, proves by re-parsing that nothing else changed, and never
 * overwrites a file it cannot read. Disabling keeps the table (and its config)
 * with `enabled = false` instead of deleting it as the host does.
 *
 * The IO functions do not take the installer lock: callers (operations, `remove`)
 * already hold it, and the lock is not re-entrant.
 */
import { mkdir } from 'node:fs/promises';
import { YepError, stateIoError } from '../errors.js';
import { sweepAtomicTemps, writeFileAtomic } from '../store/fs-atomic.js';
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

/** Keys the host reserves inside a capability table; never config keys. */
export const RESERVED_KEYS: readonly string[] = ['ref', 'id', 'enabled', 'append'];

export const extRef = (name: string): string => `ext:${name}`;

export interface ExtensionSettings {
  /** A `[[capabilities]]` table for this extension exists. */
  present: boolean;
  /** The host would load it: some table exists that does not say `enabled = false`. */
  enabled: boolean;
  /** Inline config of the first matching table, reserved keys removed. */
  config: Record<string, unknown>;
  /** How many tables name this extension (more than one is suspicious). */
  entries: number;
}

export type SettingsEdit =
  | { op: 'enable' }
  | { op: 'disable' }
  /** `undefined` removes a key. */
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

const isTable = (v: unknown): v is TomlTable => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

function refOf(table: TomlTable): unknown {
  return typeof table.ref === 'string' ? table.ref : table.id;
}

function corrupt(file: string, why: string, cause?: unknown): YepError {
  return new YepError('E_STATE', `The settings file ${file} is unreadable: ${why}.`, {
    hint: `yep-ext will not overwrite it. Fix it (yolop reads it too), or move it aside (mv "${file}" "${file}.bak") and run the command again.`,
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** Parse and index a settings document; throws E_STATE naming `file` when it is not valid TOML. */
function parseSettings(text: string, file: string): SettingsDoc {
  const parsed = parseEditableToml(text, (why) => corrupt(file, why));
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

function matching(data: TomlTable, name: string): TomlTable[] {
  const caps = data.capabilities;
  return Array.isArray(caps) ? caps.filter((c): c is TomlTable => isTable(c) && refOf(c) === extRef(name)) : [];
}

function withoutExtension(data: TomlTable, name: string): TomlTable {
  const copy: TomlTable = { ...data };
  if (Array.isArray(copy.capabilities)) {
    copy.capabilities = copy.capabilities.filter((c) => !(isTable(c) && refOf(c) === extRef(name)));
    if ((copy.capabilities as unknown[]).length === 0) delete copy.capabilities;
  }
  return copy;
}

function configOf(table: TomlTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) if (!RESERVED_KEYS.includes(k)) out[k] = v;
  return out;
}

/** What the host would make of `name` in this settings text (pure). */
export function readSettingsFromText(text: string, name: string, file = 'settings.toml'): ExtensionSettings {
  return settingsLookup(text, file)(name);
}

/**
 * Parse settings text once and answer readSettingsFromText for any number of
 * names: `list` asks for every installed extension, and re-parsing the file per
 * extension was most of its time with 50 installed (docs/performance.md).
 */
export function settingsLookup(text: string, file = 'settings.toml'): (name: string) => ExtensionSettings {
  const doc = parseSettings(text, file);
  const byRef = new Map<unknown, TomlTable[]>();
  const caps = doc.data.capabilities;
  if (Array.isArray(caps)) {
    for (const c of caps) if (isTable(c)) byRef.set(refOf(c), [...(byRef.get(refOf(c)) ?? []), c]);
  }
  return (name) => {
    const tables = byRef.get(extRef(name)) ?? [];
    return {
      present: tables.length > 0,
      enabled: tables.some((t) => t.enabled !== false),
      config: tables[0] ? configOf(tables[0]) : {},
      entries: tables.length,
    };
  };
}

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
    throw new YepError('E_STATE', `In ${doc.file}, the ${String(refOf(el.table))} table writes "${key}" as a dotted key or sub-table; yep-ext only rewrites plain \`key = value\` lines.`, {
      hint: `Edit "${key}" in ${doc.file} by hand (write it as \`${key} = <value>\`), then run the command again.`,
    });
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

function plan(doc: SettingsDoc, name: string, edit: SettingsEdit): { splices: Splice[]; expected: TomlTable[] } {
  const els = doc.elements.filter((el) => refOf(el.table) === extRef(name));
  const tables = els.map((el) => el.table);
  const endOfCapabilities = (): number => {
    const lastEl = doc.elements[doc.elements.length - 1];
    return lastEl ? (doc.lines[lastEl.last] as TomlLine).end : doc.text.length;
  };
  const appendTable = (extra: [string, unknown][]): Splice => insertionSplice(doc.text, endOfCapabilities(), doc.eol, newTableBlock(name, doc.eol, extra));

  switch (edit.op) {
    case 'enable': {
      if (tables.length === 0) return { splices: [appendTable([])], expected: [{ ref: extRef(name) }] };
      if (tables.some((t) => t.enabled !== false)) return { splices: [], expected: tables };
      const el = els[0] as Element;
      const splices = directKeyLines(doc, el, 'enabled').map((l): Splice => ({ start: l.start, end: l.end, text: '' }));
      const { enabled: _dropped, ...rest } = el.table;
      return { splices, expected: [rest, ...tables.slice(1)] };
    }
    case 'disable': {
      const splices: Splice[] = [];
      for (const el of els) {
        if (el.table.enabled === false) continue;
        const existing = directKeyLines(doc, el, 'enabled')[0];
        if (existing) splices.push({ start: existing.valueStart, end: existing.valueEnd, text: 'false' });
        else {
          const refLine = el.directKvs.map((i) => doc.lines[i] as TomlLine).find((l) => l.path.length === 1 && (l.path[0] === 'ref' || l.path[0] === 'id'));
          const at = refLine ?? (doc.lines[el.first] as TomlLine);
          splices.push(linesAt(doc, at.end, [`${refLine?.indent ?? ''}enabled = false`]));
        }
      }
      return { splices, expected: tables.map((t) => ({ ...t, enabled: false })) };
    }
    case 'set': {
      const entries = Object.entries(edit.values);
      for (const [k] of entries) assertConfigKey(k);
      const el = els[0];
      if (!el) {
        // Config for an extension that is not enabled: write the table disabled
        // (the host's flaw is to enable it as a side effect).
        const defined = entries.filter(([, v]) => v !== undefined);
        if (defined.length === 0) return { splices: [], expected: [] };
        const expected: TomlTable = { ref: extRef(name), enabled: false, ...Object.fromEntries(defined) };
        return { splices: [appendTable([['enabled', false], ...defined])], expected: [expected] };
      }
      const splices: Splice[] = [];
      const inserts: string[] = [];
      const next: TomlTable = { ...el.table };
      for (const [key, value] of entries) {
        const existing = directKeyLines(doc, el, key);
        if (value === undefined) {
          for (const l of existing) splices.push({ start: l.start, end: l.end, text: '' });
          delete next[key];
          continue;
        }
        const line = existing[0];
        if (line && key in el.table && canonicalToml(el.table[key]) === canonicalToml(value)) continue;
        if (line) splices.push({ start: line.valueStart, end: line.valueEnd, text: formatValueFor(key, value) });
        else inserts.push(`${formatTomlKey(key)} = ${formatValueFor(key, value)}`);
        next[key] = value;
      }
      if (inserts.length > 0) {
        const lastKv = el.directKvs[el.directKvs.length - 1];
        const indent = lastKv === undefined ? '' : (doc.lines[lastKv] as TomlLine).indent;
        splices.push(linesAt(doc, directInsertPos(doc, el), inserts.map((row) => indent + row)));
      }
      return { splices, expected: [next, ...tables.slice(1)] };
    }
    case 'remove':
      return { splices: mergeDeletions(els.map((el) => removalSplice(doc.lines, el.first, el.last))), expected: [] };
  }
}

/**
 * Apply one edit to settings text (pure). Only the `ext:<name>` tables change;
 * the result is re-parsed and must equal the old document everywhere else.
 */
export function applySettingsEdit(text: string, name: string, edit: SettingsEdit, file = 'settings.toml'): EditResult {
  assertValidName(name);
  const doc = parseSettings(text, file);
  const needsText = edit.op === 'remove' ? matching(doc.data, name).length > 0 : true;
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
  const oursRight = canonicalToml(matching(parsed, name)) === canonicalToml(expected);
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
    await mkdir(paths.configDir, { recursive: true, mode: 0o755 });
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

/** Enable `name` (flip `enabled = false` back or add a table). Caller holds the installer lock. */
export async function enableExtension(paths: Paths, name: string): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'enable' });
}

/** Disable `name`, keeping its table and inline config (`enabled = false`). Caller holds the lock. */
export async function disableExtension(paths: Paths, name: string): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'disable' });
}

/**
 * Set (or, with `undefined`, remove) inline config keys of `name`. Values keep
 * their types (numbers, booleans, strings, arrays, tables). Never enables a
 * disabled extension. Caller holds the lock.
 */
export async function setExtensionConfig(paths: Paths, name: string, values: Record<string, unknown>): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'set', values });
}

/** Delete every `ext:<name>` table (used by `remove`); everything else stays. Caller holds the lock. */
export async function removeExtensionSettings(paths: Paths, name: string): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'remove' });
}
