/**
 * settings.toml and profile files (host-compat §5): the host applies the
 * `[[capabilities]]` entries for `ref = "ext:<name>"` (or `id`) in file order,
 * a profile's after the base file's (host-reading.ts computes that reading;
 * every report uses it). Each edit changes as little as makes the host's reading
 * what the command promises, and never deletes an entry or a config key the user
 * wrote (`plan` below). The file is the user's: yep-ext rewrites only the byte
 * spans of its own `ext:<name>` tables, proves by re-parsing that nothing else
 * changed, and never overwrites a file it cannot read. Disabling keeps every
 * entry and its config (the host deletes them).
 *
 * The IO functions do not take the installer lock: callers (operations, `remove`)
 * already hold it, and the lock is not re-entrant.
 */
import { YepError, stateIoError } from '../errors.js';
import type { TomlPosition } from '../text/toml-position.js';
import { sweepAtomicTemps, writeFileAtomic } from '../fs/fs-atomic.js';
import { makeDirs } from '../fs/custody.js';
import { assertValidName, isValidName } from '../package/names.js';
import type { Paths } from '../paths.js';
import { dirname } from 'node:path';
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

import { RESERVED_KEYS, applyEntries, enableChoice, entriesFor, extRef, hostReading, isTable, refOf, type ExtensionSettings } from './host-reading.js';
import { profileFile } from './profiles.js';
import { assertLockKept } from '../fs/lock-hold.js';

export { hostReading, type ExtensionSettings };

export type SettingsEdit =
  /** Enabled, kept config back in effect; `values` (`undefined` removes a key) are set on the way, in the same write. */
  | { op: 'enable'; values?: Record<string, unknown> }
  /** Disabled, every entry and key kept. */
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
function corrupt(file: string, why: string, at?: TomlPosition, what = 'The settings file'): YepError {
  return new YepError('E_STATE', `${what} ${file} is unreadable: ${why}.`, {
    hint: `yep-ext will not overwrite it. Fix it (yolop reads it too), or move it aside (mv "${file}" "${file}.bak") and run the command again.`,
    details: { file, line: at?.line ?? null, column: at?.column ?? null },
  });
}

/**
 * The last document parseSettings made of each file, never handed out itself. One command
 * reads settings.toml several times (enable: before the installer lock, under it, for the
 * edit, and after the write), mostly the same text, and parsing it is most of each read. A
 * document depends on its text and file alone (`what` only words an error, and errors are
 * not kept). Each caller gets a copy of its tables, since a reading hands nested tables to
 * library callers that may change them; the statement map and the element bounds are only
 * read, so they are shared.
 */
const parsedDocs = new Map<string, SettingsDoc>();
/** Files whose last document is kept: settings.toml and the profiles a run reads. */
const PARSED_DOCS_MAX = 8;

/** Parse and index a settings document; throws E_STATE naming `file` when it is not valid TOML. */
function parseSettings(text: string, file: string, what?: string): SettingsDoc {
  const known = parsedDocs.get(file);
  if (known?.text === text) return copyOfDoc(known) ?? parseSettingsDoc(text, file, what);
  const doc = parseSettingsDoc(text, file, what);
  const copy = copyOfDoc(doc);
  if (copy === undefined) return doc;
  if (parsedDocs.size >= PARSED_DOCS_MAX) parsedDocs.clear();
  parsedDocs.set(file, doc);
  return copy;
}

/** `doc` with tables of its own; undefined when its data holds what copyOfTable cannot copy. */
function copyOfDoc(doc: SettingsDoc): SettingsDoc | undefined {
  const data = copyOfTable(doc.data);
  if (data === undefined) return undefined;
  const caps = data.capabilities as TomlTable[];
  return { ...doc, data, elements: doc.elements.map((el) => ({ ...el, table: caps[el.index] as TomlTable })) };
}

/**
 * A copy of a parsed table as the parser makes them: tables without a prototype, arrays, and
 * primitive values. Undefined for anything else (a date is an object of its own class): such a
 * document is parsed afresh each time instead.
 */
function copyOfTable(table: TomlTable): TomlTable | undefined {
  const out = Object.create(null) as TomlTable;
  for (const key of Object.keys(table)) {
    const value = copyOfValue(table[key]);
    if (value === NOT_COPIED) return undefined;
    out[key] = value;
  }
  return out;
}

const NOT_COPIED = Symbol('not copied');

function copyOfValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const copied = copyOfValue(item);
      if (copied === NOT_COPIED) return NOT_COPIED;
      out.push(copied);
    }
    return out;
  }
  if (Object.getPrototypeOf(value) !== null) return NOT_COPIED;
  return copyOfTable(value as TomlTable) ?? NOT_COPIED;
}

function parseSettingsDoc(text: string, file: string, what?: string): SettingsDoc {
  const parsed = parseEditableToml(text, file, (why, at) => corrupt(file, why, at, what));
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

/**
 * The entries a profile adds (host-compat §5, "Profiles"): `<config>/profiles/<name>.toml`
 * read as the host reads it. `replace` (capabilities_mode `replace`, `only` or
 * `exclusive`) drops the base file's entries; otherwise they come first.
 */
export interface ProfileLayer {
  name: string;
  file: string;
  text: string;
}

const REPLACING_MODES = new Set(['replace', 'only', 'exclusive']);
/** How errors name a profile's file (they name its path too: the file the user should look at). */
const PROFILE_FILE = 'The profile file';

/** The profile's parsed document and whether it replaces the base file's entries. */
function parseProfile(profile: ProfileLayer): { doc: SettingsDoc; replace: boolean } {
  const doc = parseSettings(profile.text, profile.file, PROFILE_FILE);
  const mode = doc.data.capabilities_mode;
  return { doc, replace: typeof mode === 'string' && REPLACING_MODES.has(mode) };
}

/** Every capability entry of a parsed document, grouped by the ref the host reads, in file order. */
function entriesByRef(data: TomlTable): Map<string, TomlTable[]> {
  const byRef = new Map<string, TomlTable[]>();
  const caps = data.capabilities;
  if (!Array.isArray(caps)) return byRef;
  for (const c of caps) {
    const ref = isTable(c) ? refOf(c) : undefined;
    if (ref !== undefined) byRef.set(ref, [...(byRef.get(ref) ?? []), c as TomlTable]);
  }
  return byRef;
}

/** What the host makes of `name` in this settings text, under `profile` when given (pure; see host-reading.ts). */
export function readSettingsFromText(text: string, name: string, file = 'settings.toml', profile?: ProfileLayer): ExtensionSettings {
  return settingsLookup(text, file, profile)(name);
}

/**
 * Parse settings text (and a profile's) once and answer readSettingsFromText for
 * any number of names: `list` asks for every installed extension, and re-parsing
 * the file per extension would be most of its time with many installed.
 */
export function settingsLookup(text: string, file = 'settings.toml', profile?: ProfileLayer): SettingsLookup {
  const base = entriesByRef(parseSettings(text, file).data);
  const layer = profile ? parseProfile(profile) : undefined;
  const top = layer ? entriesByRef(layer.doc.data) : undefined;
  const below = layer?.replace ? new Map<string, TomlTable[]>() : base;
  const lookup = (name: string): ExtensionSettings => {
    const ref = extRef(name);
    const under = top ? (below.get(ref) ?? []) : [];
    const own = top ? (top.get(ref) ?? []) : (base.get(ref) ?? []);
    return hostReading([...under, ...own], under.length, ref);
  };
  const refs = new Set([...below.keys(), ...(top?.keys() ?? [])]);
  const named = [...refs].filter((r) => r.startsWith(extRef(''))).map((r) => r.slice(extRef('').length));
  return Object.assign(lookup, { extNames: named });
}

/** readSettingsFromText for any name, and the names of every `ext:<name>` entry the host reads. */
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
    if (line && Object.hasOwn(base, key) && canonicalToml(base[key]) === canonicalToml(value)) continue;
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

/** The line that holds `el`'s ref as the host reads it (`ref`, else `id`): where disable puts its `enabled = false`. */
function refLineOf(doc: SettingsDoc, el: Element): number | undefined {
  return el.directKvs.find((i) => {
    const l = doc.lines[i] as TomlLine;
    return l.path.length === 1 && (l.path[0] === 'ref' || l.path[0] === 'id');
  });
}

/**
 * The `enabled = false` line is the one disable writes: the statement right after the
 * ref line, at its indentation, `enabled = false` and nothing else (no comment). Such a
 * line is taken out again; any other is the user's, and keeps its place, spelling and
 * comment (only its value turns to `true`).
 */
function isDisableLine(doc: SettingsDoc, el: Element, line: TomlLine): boolean {
  const refAt = refLineOf(doc, el);
  if (refAt === undefined || doc.lines[refAt + 1] !== line) return false;
  const text = doc.text.slice(line.start, line.end).replace(/\r?\n$/, '');
  return text === `${(doc.lines[refAt] as TomlLine).indent}enabled = false`;
}

/** Splices that make `el` say `enabled = false`, or stop saying it, and the resulting table. */
function switchSplices(doc: SettingsDoc, el: Element, base: TomlTable, enabled: boolean): { splices: Splice[]; table: TomlTable } {
  const wasEnabled = base.enabled !== false;
  if (enabled === wasEnabled) return { splices: [], table: { ...base } };
  const existing = directKeyLines(doc, el, 'enabled')[0];
  if (enabled) {
    if (existing && isDisableLine(doc, el, existing)) {
      const { enabled: _dropped, ...rest } = base;
      return { splices: [{ start: existing.start, end: existing.end, text: '' }], table: rest };
    }
    return { splices: existing ? [{ start: existing.valueStart, end: existing.valueEnd, text: 'true' }] : [], table: { ...base, enabled: true } };
  }
  const table = { ...base, enabled: false };
  if (existing) return { splices: [{ start: existing.valueStart, end: existing.valueEnd, text: 'false' }], table };
  const refAt = refLineOf(doc, el);
  const refLine = refAt === undefined ? undefined : (doc.lines[refAt] as TomlLine);
  const at = refLine ?? (doc.lines[el.first] as TomlLine);
  return { splices: [linesAt(doc, at.end, [`${refLine?.indent ?? ''}enabled = false`])], table };
}

/**
 * The edit as splices, and the entries it must leave for `name`. No entry is
 * deleted and no config key the user wrote is dropped (only `remove`, and a key
 * set to `undefined`, take anything away):
 * - enable: the entries host-reading.ts `enableChoice` names stop saying
 *   `enabled = false` (a disabled extension: its last entry, the one disable
 *   marked; an enabled one: the entries that cancel config it keeps); a bare
 *   entry is added when the host would still run nothing otherwise;
 * - disable: the last entry says `enabled = false` (one line), or, with no entry
 *   in this file, a new `{ ref, enabled = false }` entry does;
 * - values go into the last entry whose config reaches the first instance (later
 *   keys win in the host's merge), or into a new entry when that one is not in
 *   this file; for a disabled extension, into the last entry, where enable brings
 *   them back. `undefined` removes the key from every entry of this file.
 * `prefix` holds the entries the host applies before this file's (a profile's
 * base); they are read, never written.
 */
function plan(doc: SettingsDoc, name: string, edit: SettingsEdit, prefix: readonly TomlTable[]): { splices: Splice[]; expected: TomlTable[] } {
  const ref = extRef(name);
  const els = doc.elements.filter((el) => refOf(el.table) === ref);
  if (edit.op === 'remove') return { splices: mergeDeletions(els.map((el) => removalSplice(doc.lines, el.first, el.last))), expected: [] };

  const values = Object.entries(edit.op === 'disable' ? {} : (edit.values ?? {}));
  for (const [k] of values) assertConfigKey(k);
  const tables = new Map<Element, TomlTable>(els.map((el) => [el, el.table]));
  const splices: Splice[] = [];
  let added: TomlTable | undefined;
  const current = (): TomlTable[] => [...prefix, ...els.map((el) => tables.get(el) as TomlTable), ...(added ? [added] : [])];
  const flip = (el: Element, enabled: boolean): void => {
    const switched = switchSplices(doc, el, tables.get(el) as TomlTable, enabled);
    splices.push(...switched.splices);
    tables.set(el, switched.table);
  };

  if (edit.op === 'enable') {
    const choice = enableChoice(current(), prefix.length);
    for (const i of choice.flip) flip(els[i - prefix.length] as Element, true);
    if (choice.add) added = { ref };
  } else if (edit.op === 'disable' && applyEntries(current()).length > 0) {
    const last = els[els.length - 1];
    if (last) flip(last, false);
    else added = { ref, enabled: false };
  }

  const defined = values.filter(([, v]) => v !== undefined);
  const removed = values.filter(([, v]) => v === undefined);
  const perElement = new Map<Element, [string, unknown][]>();
  for (const el of els) {
    const gone = removed.filter(([k]) => Object.hasOwn(tables.get(el) as TomlTable, k));
    if (gone.length > 0) perElement.set(el, gone);
  }
  if (defined.length > 0) {
    const first = applyEntries(current())[0];
    let target: Element | 'added' | 'new';
    if (first) {
      const at = Math.max(...first.from) - prefix.length;
      target = at < 0 ? 'new' : at < els.length ? (els[at] as Element) : 'added';
    } else {
      // Config alone never enables (the host's flaw is to enable as a side effect): it waits where enable finds it.
      target = added ? 'added' : (els[els.length - 1] ?? 'new');
    }
    if (target === 'new' && !added) added = first ? { ref } : { ref, enabled: false };
    if (target === 'new' || target === 'added') Object.assign(added as TomlTable, Object.fromEntries(defined));
    else perElement.set(target, [...(perElement.get(target) ?? []), ...defined]);
  }
  for (const [el, list] of perElement) {
    const configured = configSplices(doc, el, list, tables.get(el) as TomlTable);
    splices.push(...configured.splices);
    tables.set(el, configured.table);
  }
  if (added) {
    const lastEl = doc.elements[doc.elements.length - 1];
    const endOfCapabilities = lastEl ? (doc.lines[lastEl.last] as TomlLine).end : doc.text.length;
    const { ref: _ref, ...extra } = added;
    splices.push(insertionSplice(doc.text, endOfCapabilities, doc.eol, newTableBlock(name, doc.eol, Object.entries(extra))));
  }
  return { splices, expected: current().slice(prefix.length) };
}

/**
 * Apply one edit to settings text (pure). Only the `ext:<name>` tables change;
 * the result is re-parsed and must equal the old document everywhere else.
 * `prefix`: the entries for `name` the host applies before this file's (a
 * profile's base file), read and never written.
 */
export function applySettingsEdit(text: string, name: string, edit: SettingsEdit, file = 'settings.toml', prefix: readonly TomlTable[] = []): EditResult {
  assertValidName(name);
  const doc = parseSettings(text, file);
  const needsText = edit.op === 'remove' ? entriesFor(doc.data, name).length > 0 : true;
  if (doc.uneditable && needsText) {
    throw new YepError('E_STATE', `yep-ext cannot edit ${file}: ${doc.uneditable}.`, {
      hint: `Write each capability as its own [[capabilities]] table (see docs/configuration.md), then run the command again. Nothing was changed.`,
    });
  }
  const { splices, expected } = plan(doc, name, edit, prefix);
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

/** Read a profile's file (it exists: profiles.ts `profileFile` checked); E_STATE when unreadable. */
export async function loadProfileLayer(paths: Paths, profile: string): Promise<ProfileLayer> {
  const file = profileFile(paths, profile);
  return { name: profile, file, text: await loadEditableText(file, (why) => corrupt(file, why, undefined, PROFILE_FILE), PROFILE_FILE) };
}

/** The file an edit writes (settings.toml, or the profile's), its text, and the entries the host applies before it. */
async function editTarget(paths: Paths, name: string, profile: string | undefined): Promise<{ file: string; text: string; prefix: TomlTable[]; dir: string }> {
  if (profile === undefined) return { file: paths.settingsFile, text: await loadSettingsText(paths), prefix: [], dir: paths.configDir };
  const layer = await loadProfileLayer(paths, profile);
  const base = await loadSettingsText(paths);
  const prefix = parseProfile(layer).replace ? [] : entriesFor(parseSettings(base, paths.settingsFile).data, name);
  return { file: layer.file, text: layer.text, prefix, dir: dirname(layer.file) };
}

async function editSettings(paths: Paths, name: string, edit: SettingsEdit, profile?: string): Promise<{ changed: boolean }> {
  const target = await editTarget(paths, name, profile);
  const result = applySettingsEdit(target.text, name, edit, target.file, target.prefix);
  if (!result.changed) return { changed: false };
  try {
    await makeDirs(target.dir, 0o755);
  } catch (e) {
    throw stateIoError('create', target.dir, e);
  }
  assertLockKept(paths);
  await sweepAtomicTemps(target.file);
  await writeFileAtomic(target.file, result.text, { symlinks: 'follow', what: profile === undefined ? 'The settings file' : 'The profile file' });
  return { changed: true };
}

/** What settings.toml (under `profile`, when given) says about `name` (a missing file says: not enabled, no config). */
export async function readExtensionSettings(paths: Paths, name: string, profile?: string): Promise<ExtensionSettings> {
  const layer = profile === undefined ? undefined : await loadProfileLayer(paths, profile);
  return readSettingsFromText(await loadSettingsText(paths), assertValidName(name), paths.settingsFile, layer);
}

/** Where an edit goes: settings.toml, or a profile's file (`--profile`). */
export interface SettingsScope {
  profile?: string;
}

/**
 * Enable `name`: its entries stop saying `enabled = false` (or a bare entry is
 * added), with `values` (`undefined` removes a key) set in the same atomic write,
 * so the host never reads the switch without the config or the reverse.
 * Caller holds the installer lock.
 */
export async function enableExtension(
  paths: Paths,
  name: string,
  values: Record<string, unknown> = {},
  scope: SettingsScope = {},
): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'enable', values }, scope.profile);
}

/** Disable `name`: its last entry says `enabled = false`; every entry and key stays. Caller holds the lock. */
export async function disableExtension(paths: Paths, name: string, scope: SettingsScope = {}): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'disable' }, scope.profile);
}

/**
 * Set (or, with `undefined`, remove) inline config keys of `name`, keeping the
 * host's enabled state. Values keep their types (numbers, booleans, strings,
 * arrays, tables). Never enables a disabled extension. Caller holds the lock.
 */
export async function setExtensionConfig(
  paths: Paths,
  name: string,
  values: Record<string, unknown>,
  scope: SettingsScope = {},
): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'set', values }, scope.profile);
}

/** Delete every `ext:<name>` table of settings.toml (used by `remove`); everything else stays. Caller holds the lock. */
export async function removeExtensionSettings(paths: Paths, name: string): Promise<{ changed: boolean }> {
  return editSettings(paths, name, { op: 'remove' });
}
