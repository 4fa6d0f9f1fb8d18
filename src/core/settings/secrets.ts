/**
 * connections.toml (host-compat §6): one `["ext:<name>"]` table of string values
 * per extension, beside tables the host's own connectors own. Like settings,
 * edits touch only our table's bytes and are proven by re-parsing. The file is
 * created 0600 from the first byte (the atomic writer opens its temp file with
 * that mode), a group/world-readable file is repaired to 0600 with a warning on
 * the next write, and a symlinked file is never written through. Values never
 * appear in messages: parse errors name a line and column, not the text.
 *
 * Optionally a field lives in the OS keychain instead (keychain.ts); the host
 * reads only this file. IO functions expect the caller to hold the installer lock.
 */
import { chmod } from 'node:fs/promises';
import { YepError, stateIoError } from '../errors.js';
import type { TomlPosition } from '../text/toml-position.js';
import { inspectRegularFile } from '../fs/read-regular-file.js';
import { assertReplaceable, sweepAtomicTemps, writeFileAtomic } from '../fs/fs-atomic.js';
import { makeDirs } from '../fs/custody.js';
import {
  KeychainUnavailable,
  keychainDelete,
  keychainGet,
  keychainIndexFile,
  keychainSet,
  readKeychainIndex,
  writeKeychainIndex,
  type KeychainIndex,
  type KeychainOptions,
} from './keychain.js';
import { assertValidName, isValidName } from '../package/names.js';
import type { Paths } from '../paths.js';
import { type Secret, revealSecret } from './secret-value.js';
import {
  applySplices,
  canonicalToml,
  formatTomlKey,
  formatTomlString,
  insertionSplice,
  parseTomlText,
  parseEditableToml,
  loadEditableText,
  removalSplice,
  type Splice,
  type TomlLine,
  type TomlTable,
} from './toml-edit.js';
import { assertLockKept } from '../fs/lock-hold.js';

const SECRETS_MODE = 0o600;
/** Values larger than this are refused: a credential, not a file. */
export const SECRET_MAX_BYTES = 64 * 1024;

export type SecretStoreKind = 'file' | 'keychain';

export type SecretsEdit = { op: 'set'; field: string; value: Secret | string } | { op: 'unset'; field: string } | { op: 'remove' };

const tableKey = (name: string): string => `ext:${name}`;
const isTable = (v: unknown): v is TomlTable => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

function corrupt(file: string, why: string, at?: TomlPosition): YepError {
  // No `cause`: a parser error carries a code block that may quote a secret.
  return new YepError('E_STATE', `The secrets file ${file} is unreadable: ${why}.`, {
    hint: `yep-ext will not overwrite it (it may hold credentials of yolop's own connectors too). Fix it, or move it aside (mv "${file}" "${file}.bak") and set your secrets again.`,
    details: { file, line: at?.line ?? null, column: at?.column ?? null },
  });
}

interface SecretsDoc {
  file: string;
  text: string;
  data: TomlTable;
  lines: TomlLine[];
  eol: '\n' | '\r\n';
}

function parseSecrets(text: string, file: string): SecretsDoc {
  return { file, ...parseEditableToml(text, file, (why, at) => corrupt(file, why, at)) };
}

/** The string values of our table; E_STATE if the table holds anything else. */
function ourTable(doc: SecretsDoc, name: string): Record<string, string> {
  const t = doc.data[tableKey(name)];
  if (t === undefined) return {};
  if (!isTable(t) || Object.values(t).some((v) => typeof v !== 'string')) {
    throw corrupt(doc.file, `the ["${tableKey(name)}"] table must hold string values only`);
  }
  return { ...(t as Record<string, string>) };
}

/** Secrets of `name` in connections.toml text (pure). Field names and values, for the caller to protect. */
export function readSecretsFromText(text: string, name: string, file = 'connections.toml'): Record<string, string> {
  return ourTable(parseSecrets(text, file), assertValidName(name));
}

function assertField(field: string): void {
  if (!isValidName(field)) throw new YepError('E_USAGE', `Invalid secret field ${JSON.stringify(field.slice(0, 60))}: fields must match ^[A-Za-z0-9_-]+$.`);
}

/** Apply one edit to connections.toml text (pure); only `["ext:<name>"]` changes, proven by re-parsing. */
export function applySecretsEdit(text: string, name: string, edit: SecretsEdit, file = 'connections.toml'): { text: string; changed: boolean } {
  assertValidName(name);
  const key = tableKey(name);
  const doc = parseSecrets(text, file);
  const current = ourTable(doc, name);
  const headerIdx = doc.lines.findIndex((l) => l.kind === 'header' && l.path[0] === key);
  const header = doc.lines[headerIdx];
  if (header && (header.array || header.path.length !== 1 || doc.lines.filter((l) => l.kind === 'header' && l.path[0] === key).length > 1)) {
    throw new YepError('E_STATE', `In ${file}, ["${key}"] is not a plain table; yep-ext will not rewrite it.`, { hint: `Edit ["${key}"] in ${file} by hand.` });
  }
  if (!header && key in doc.data) {
    throw new YepError('E_STATE', `In ${file}, ${key} is written with dotted keys or inline; yep-ext only rewrites a ["${key}"] table.`, {
      hint: `Rewrite it as a ["${key}"] table with one \`field = "value"\` line per secret.`,
    });
  }
  // Our table runs from its header to its last key/value before the next header.
  let last = headerIdx;
  const kvs: number[] = [];
  if (header) {
    for (let i = headerIdx + 1; i < doc.lines.length && (doc.lines[i] as TomlLine).kind !== 'header'; i++) {
      if ((doc.lines[i] as TomlLine).kind === 'kv') {
        kvs.push(i);
        last = i;
      }
    }
  }
  const fieldLine = (field: string): TomlLine | undefined => kvs.map((i) => doc.lines[i] as TomlLine).find((l) => l.path[0] === field);
  const splices: Splice[] = [];
  let expected: Record<string, string> | undefined = current;

  if (edit.op === 'set') {
    assertField(edit.field);
    const value = revealSecret(edit.value);
    if (current[edit.field] === value) return { text, changed: false };
    const row = `${formatTomlKey(edit.field)} = ${formatTomlString(value)}`;
    const line = fieldLine(edit.field);
    if (line) splices.push({ start: line.valueStart, end: line.valueEnd, text: formatTomlString(value) });
    else if (header) {
      const at = (doc.lines[last] as TomlLine).end;
      const lead = at > 0 && text[at - 1] !== '\n' ? doc.eol : '';
      splices.push({ start: at, end: at, text: lead + row + doc.eol });
    } else splices.push(insertionSplice(text, text.length, doc.eol, `[${formatTomlString(key)}]${doc.eol}${row}${doc.eol}`));
    expected = { ...current, [edit.field]: value };
  } else if (edit.op === 'unset') {
    assertField(edit.field);
    const line = fieldLine(edit.field);
    if (!line) return { text, changed: false };
    const { [edit.field]: _gone, ...rest } = current;
    if (Object.keys(rest).length === 0) {
      splices.push(removalSplice(doc.lines, headerIdx, last));
      expected = undefined;
    } else {
      splices.push({ start: line.start, end: line.end, text: '' });
      expected = rest;
    }
  } else {
    if (!header) return { text, changed: false };
    splices.push(removalSplice(doc.lines, headerIdx, last));
    expected = undefined;
  }

  const next = applySplices(text, splices);
  let parsed: TomlTable;
  try {
    parsed = parseTomlText(next);
  } catch {
    throw unsafeEdit(file, key);
  }
  const strip = (d: TomlTable): TomlTable => {
    const { [key]: _ours, ...rest } = d;
    return rest;
  };
  if (canonicalToml(strip(doc.data)) !== canonicalToml(strip(parsed)) || canonicalToml(parsed[key]) !== canonicalToml(expected)) {
    throw unsafeEdit(file, key);
  }
  return { text: next, changed: next !== text };
}

function unsafeEdit(file: string, key: string): YepError {
  return new YepError('E_STATE', `yep-ext could not edit ["${key}"] in ${file} without disturbing the rest of the file; nothing was written.`, {
    hint: `Edit ["${key}"] in ${file} by hand, or report this as a bug (describe the file's layout; never attach it).`,
  });
}

interface SecretsFileInfo {
  file: string;
  exists: boolean;
  symlink: boolean;
  /** Permission bits of the file (of the target, for a symlink). */
  mode?: number;
  /** Readable or writable by group or others. */
  insecure: boolean;
}

async function inspectSecretsFile(paths: Paths): Promise<SecretsFileInfo> {
  const file = paths.secretsFile;
  const info = inspectRegularFile(file, 'The secrets file', { hint: 'Move it aside; yolop keeps secrets in a plain file there.' });
  if (!info) return { file, exists: false, symlink: false, insecure: false };
  const mode = info.stat.mode & 0o777;
  return { file, exists: true, symlink: info.symlinkTarget !== undefined, mode, insecure: (mode & 0o077) !== 0 };
}

export async function loadSecretsText(paths: Paths): Promise<string> {
  return loadEditableText(paths.secretsFile, (why) => corrupt(paths.secretsFile, why), 'The secrets file');
}

/** Edit connections.toml on disk: refuses symlinks, repairs loose modes (saying so), writes 0600. */
async function editSecretsFile(paths: Paths, name: string, edit: SecretsEdit): Promise<{ changed: boolean; warnings: string[] }> {
  const info = await inspectSecretsFile(paths);
  const file = paths.secretsFile;
  if (info.symlink) {
    throw new YepError('E_STATE', `${file} is a symbolic link; yep-ext will not write secrets through it.`, {
      hint: `Replace the link with the file itself (cp --remove-destination "$(readlink -f "${file}")" "${file}"; chmod 600 "${file}"), then run the command again.`,
    });
  }
  const text = await loadSecretsText(paths);
  const result = applySecretsEdit(text, name, edit, file);
  const warnings: string[] = [];
  const loose = `${file} was readable by other users (mode ${info.mode?.toString(8).padStart(4, '0')}); it is now 0600.`;
  if (!result.changed) {
    // `set-secret` with the value already there (or `--unset` of a field that is not) writes
    // nothing, but it is still the command that looks after this file: a loose mode is
    // repaired here too, or "nothing changed" would leave every secret in it readable.
    if (info.insecure && edit.op !== 'remove') {
      const mode = info.mode?.toString(8).padStart(4, '0');
      warnings.push(
        await chmod(file, SECRETS_MODE).then(
          () => loose,
          (e: unknown) =>
            `${file} is readable by other users (mode ${mode}) and could not be made 0600 (${(e as NodeJS.ErrnoException).code ?? String(e)}): run chmod 600 "${file}".`,
        ),
      );
    }
    return { changed: false, warnings };
  }
  if (info.insecure) warnings.push(loose);
  try {
    await makeDirs(paths.configDir, 0o755);
  } catch (e) {
    throw stateIoError('create', paths.configDir, e);
  }
  assertLockKept(paths);
  // A temp file left by a killed run holds secrets: sweep it before writing.
  await sweepAtomicTemps(file);
  await writeFileAtomic(file, result.text, { mode: SECRETS_MODE, what: 'The secrets file' });
  return { changed: true, warnings };
}

export interface SecretStoreOptions {
  keychain?: KeychainOptions;
}

/**
 * Every secret of `name`: connections.toml, plus fields the keychain index says
 * live in the OS keychain (those the keychain cannot give back are left out).
 * Values are for injection into a server's environment only: never log them.
 */
export async function getSecrets(paths: Paths, name: string, options: SecretStoreOptions = {}): Promise<Record<string, string>> {
  const fromFile = readSecretsFromText(await loadSecretsText(paths), name, paths.secretsFile);
  const inKeychain = (await readKeychainIndex(paths))[name] ?? [];
  const out: Record<string, string> = {};
  for (const field of inKeychain) {
    if (field in fromFile) continue;
    try {
      const v = await keychainGet(name, field, options.keychain);
      if (v !== undefined) out[field] = v;
    } catch (e) {
      if (!(e instanceof KeychainUnavailable)) throw e;
    }
  }
  return { ...out, ...fromFile };
}

export interface SecretWriteResult {
  changed: boolean;
  /** Where the value ended up (a keychain request may fall back to the file). */
  store: SecretStoreKind;
  warnings: string[];
}

/**
 * Both stores are checked before either is written: a keychain index that cannot
 * be read or replaced (a FIFO, a symlink) must not surface after connections.toml
 * already holds the change.
 */
async function preflightKeychainIndex(paths: Paths): Promise<void> {
  await readKeychainIndex(paths);
  assertReplaceable(keychainIndexFile(paths), { what: 'The keychain index' });
}

/** Forget a keychain copy of a field (best effort, with a warning when the keychain is unreachable). */
async function dropKeychainCopy(
  paths: Paths,
  name: string,
  field: string | undefined,
  options: SecretStoreOptions,
): Promise<{ changed: boolean; warnings: string[] }> {
  const index = await readKeychainIndex(paths);
  const fields = index[name] ?? [];
  const gone = field === undefined ? fields : fields.filter((f) => f === field);
  if (gone.length === 0) return { changed: false, warnings: [] };
  // The keychain's entries are shared state as the index is: none is deleted after a lost hold.
  assertLockKept(paths);
  const warnings: string[] = [];
  for (const f of gone) {
    try {
      await keychainDelete(name, f, options.keychain);
    } catch (e) {
      if (!(e instanceof KeychainUnavailable)) throw e;
      warnings.push(`Could not delete ${name}.${f} from the OS keychain (${e.reason}); remove the entry "ext:${name}/${f}" of service "yolop" by hand.`);
    }
  }
  index[name] = fields.filter((f) => !gone.includes(f));
  await writeKeychainIndex(paths, index);
  return { changed: true, warnings };
}

/**
 * Store one secret. `store: 'keychain'` tries the OS keychain and falls back to
 * connections.toml with a warning when no keychain is reachable. Exactly one
 * copy is kept: storing in one place removes the other.
 */
export async function setSecret(
  paths: Paths,
  name: string,
  field: string,
  value: Secret | string,
  options: SecretStoreOptions & { store?: SecretStoreKind } = {},
): Promise<SecretWriteResult> {
  assertValidName(name);
  assertField(field);
  const plain = revealSecret(value);
  if (plain.length === 0)
    throw new YepError('E_USAGE', `Refusing to store an empty value for ${name}.${field}.`, {
      hint: `To remove it, run \`yep-ext set-secret ${name} ${field} --unset\`.`,
    });
  if (Buffer.byteLength(plain) > SECRET_MAX_BYTES) throw new YepError('E_USAGE', `The value for ${name}.${field} is larger than ${SECRET_MAX_BYTES} bytes.`);
  await preflightKeychainIndex(paths);
  const warnings: string[] = [];
  if (options.store === 'keychain') {
    assertLockKept(paths);
    try {
      await keychainSet(name, field, plain, options.keychain);
      const index = await readKeychainIndex(paths);
      const had = (index[name] ?? []).includes(field);
      if (!had) await writeKeychainIndex(paths, { ...index, [name]: [...(index[name] ?? []), field] });
      const fromFile = await editSecretsFile(paths, name, { op: 'unset', field });
      return { changed: true, store: 'keychain', warnings: fromFile.warnings };
    } catch (e) {
      if (!(e instanceof KeychainUnavailable)) throw e;
      warnings.push(`The OS keychain is not reachable (${e.reason}); storing ${name}.${field} in ${paths.secretsFile} (mode 0600) instead.`);
    }
  }
  const written = await editSecretsFile(paths, name, { op: 'set', field, value: plain });
  const dropped = await dropKeychainCopy(paths, name, field, options);
  return { changed: written.changed || dropped.changed, store: 'file', warnings: [...warnings, ...written.warnings, ...dropped.warnings] };
}

/** Remove one secret from wherever it is stored. */
export async function unsetSecret(
  paths: Paths,
  name: string,
  field: string,
  options: SecretStoreOptions = {},
): Promise<{ changed: boolean; warnings: string[] }> {
  assertValidName(name);
  assertField(field);
  await preflightKeychainIndex(paths);
  const file = await editSecretsFile(paths, name, { op: 'unset', field });
  const keychain = await dropKeychainCopy(paths, name, field, options);
  return { changed: file.changed || keychain.changed, warnings: [...file.warnings, ...keychain.warnings] };
}

/** Remove every secret of `name` (used by `remove`); other tables stay byte for byte. */
export async function removeExtensionSecrets(paths: Paths, name: string, options: SecretStoreOptions = {}): Promise<{ changed: boolean; warnings: string[] }> {
  assertValidName(name);
  await preflightKeychainIndex(paths);
  const file = await editSecretsFile(paths, name, { op: 'remove' });
  const keychain = await dropKeychainCopy(paths, name, undefined, options);
  return { changed: file.changed || keychain.changed, warnings: [...file.warnings, ...keychain.warnings] };
}

/**
 * Crash recovery for set-secret's two files: a field that both connections.toml
 * and the keychain index name is the file's (every reader, yolop included, takes
 * the file's value), and a kill between set-secret's two writes leaves exactly
 * that. Dropping such fields from the index makes the files read as before or
 * after byte for byte as well (an orphaned keychain entry may remain: the host
 * never reads it). Returns whether the index changed. Caller holds the installer lock.
 */
export async function dropShadowedKeychainEntries(paths: Paths): Promise<boolean> {
  const index = await readKeychainIndex(paths);
  const names = Object.keys(index);
  if (names.length === 0) return false;
  const doc = parseSecrets(await loadSecretsText(paths), paths.secretsFile);
  let changed = false;
  const next: KeychainIndex = {};
  for (const name of names) {
    const inFile = isValidName(name) ? ourTable(doc, name) : {};
    const kept = (index[name] ?? []).filter((f) => !(f in inFile));
    if (kept.length !== (index[name] ?? []).length) changed = true;
    next[name] = kept;
  }
  if (changed) await writeKeychainIndex(paths, next);
  return changed;
}

export interface SecretStatus {
  /** Fields set in connections.toml (visible to yolop). */
  file: string[];
  /** Fields the index says live in the OS keychain (not visible to yolop). */
  keychain: string[];
  fileInfo: SecretsFileInfo;
}

/** Which secret fields of `name` are set and where: names only, never values, never touches the keychain. */
export async function secretStatus(paths: Paths, name: string): Promise<SecretStatus> {
  const fileInfo = await inspectSecretsFile(paths);
  const fromFile = readSecretsFromText(await loadSecretsText(paths), name, paths.secretsFile);
  const keychain = ((await readKeychainIndex(paths))[name] ?? []).filter((f) => !(f in fromFile));
  return { file: Object.keys(fromFile), keychain, fileInfo };
}

/**
 * Where new secrets go: `--keychain` wins, then YEP_EXT_SECRET_STORE
 * (`file` | `keychain`), else the file yolop reads.
 */
export function chooseSecretStore(env: Record<string, string | undefined>, keychainFlag = false): SecretStoreKind {
  if (keychainFlag) return 'keychain';
  const v = (env.YEP_EXT_SECRET_STORE ?? '').trim().toLowerCase();
  if (v === '' || v === 'file') return 'file';
  if (v === 'keychain') return 'keychain';
  throw new YepError('E_USAGE', `YEP_EXT_SECRET_STORE must be "file" or "keychain", not ${JSON.stringify(v.slice(0, 40))}.`);
}
