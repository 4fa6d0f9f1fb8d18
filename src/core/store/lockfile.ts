/**
 * extensions.lock (host-compat §4): parse, serialise, load and save: the one reader
 * of a lock (smol-toml, then the checks in `parseLock`). Host keys are kept exactly;
 * extra keys (ours or a newer tool's) survive a round trip. An unreadable lock is an
 * error naming the file: it is never reset (the host treats it as empty and
 * overwrites it; we refuse).
 *
 * The store's lock is read by every command, and smol-toml parsing a lock of 50
 * entries in a fresh process (its code not yet compiled by V8's optimising tiers)
 * costs about as much as the rest of `list`. So the store's lock keeps a memo:
 * when yep-ext writes it, it also writes what that text parses to, as JSON, beside
 * its stat signatures (`<store>/.yep-state/extensions.lock.json`, with the text it
 * is of); a reader uses the memo only for exactly that text (what the host or a
 * hand edit wrote is parsed). The memo is never a second parser: it is this
 * reader's own result, kept.
 */
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { readRegularFileSync, readRegularTextSync } from '../fs/read-regular-file.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { makeOwnedDir } from '../fs/custody.js';
import { storeCustody, type Paths } from '../paths.js';
import { isValidName } from '../package/names.js';
import { arrayTableLine, formatPosition, tomlErrorAt, type TomlPosition } from '../text/toml-position.js';
import { checkRecord, type LockSource } from '../sources/index.js';
import { recordTable } from '../sources/source.js';
import { assertLockKept } from '../fs/lock-hold.js';

export type { LockSource };

export interface LockEntry {
  name: string;
  content_hash: string;
  /** The manifest version; omitted when the manifest has none. */
  version?: string;
  source: LockSource;
  /** Fingerprint of the approved grant (`sha256:…`), see grants. */
  grant?: string;
  [extra: string]: unknown;
}

export interface Lockfile {
  entries: LockEntry[];
  /** Top-level keys other than `extensions`, kept verbatim. */
  extra: Record<string, unknown>;
}

export const LOCK_HEADER =
  '# extensions.lock: what is installed, pinned by content hash.\n# Written by yep-ext (and read by yolop). Edit with `yep-ext`, not by hand.\n\n';

const HASH_RE = /^sha256:[0-9a-f]{64}$/;

/** `--json` gets `details: {file, line, column}` (line/column null when the problem has no one place). */
function corrupt(file: string, why: string, cause?: unknown, at?: TomlPosition): YepError {
  return new YepError('E_STATE', `The lockfile ${file} is unreadable: ${why}.`, {
    hint: `yep-ext will not overwrite it. Fix it, or move it aside (mv "${file}" "${file}.bak") and reinstall your extensions.`,
    ...(cause !== undefined ? { cause } : {}),
    details: { file, line: at?.line ?? null, column: at?.column ?? null },
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Whether parsed lock text is a lock at all: it pins something, or has an `extensions`
 * table or key. Any TOML parses (a Cargo.toml given by mistake parses to no entries):
 * `install --frozen --lockfile` and `lock export` refuse what is not one.
 */
export function holdsLock(text: string, lock: Lockfile): boolean {
  return lock.entries.length > 0 || /^\s*(\[\[\s*extensions\s*\]\]|extensions\s*=)/m.test(text);
}

/** Parse lock text. Throws E_STATE (naming `file`) on anything unreadable. */
export function parseLock(text: string, file = 'extensions.lock'): Lockfile {
  return checkLock(text, file, parseDocument(text, file));
}

/** The TOML document of lock text (smol-toml). Throws E_STATE (naming `file`) on anything that is not TOML. */
function parseDocument(text: string, file: string): Record<string, unknown> {
  if (text.trim() === '') throw corrupt(file, 'it is empty (a healthy lock always has a header)');
  if (text.includes('\0')) throw corrupt(file, 'it contains NUL bytes (a torn write?)');
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const { reason, at } = tomlErrorAt(e);
    throw corrupt(
      file,
      at ? `invalid TOML at line ${at.line}, column ${at.column} (${formatPosition(file, at)}): ${reason}` : `invalid TOML (${reason})`,
      e,
      at,
    );
  }
}

/** The lock a parsed document holds: every entry checked (names, content hashes, each kind's record keys). */
function checkLock(text: string, file: string, doc: Record<string, unknown>): Lockfile {
  const { extensions = [], ...extra } = doc;
  if (!Array.isArray(extensions)) throw corrupt(file, '`extensions` is not an array of tables');
  const seen = new Set<string>();
  const entries = extensions.map((raw, i): LockEntry => {
    // A problem in one entry points at its [[extensions]] header.
    const bad = (why: string) => {
      const line = arrayTableLine(text, 'extensions', i + 1);
      const at = line !== undefined ? { line, column: 1 } : undefined;
      return corrupt(file, at ? `${why} (${formatPosition(file, at)})` : why, undefined, at);
    };
    if (!isRecord(raw)) throw bad(`entry ${i + 1} is not a table`);
    const name = raw.name;
    if (typeof name !== 'string' || !isValidName(name)) throw bad(`entry ${i + 1} has an invalid name ${JSON.stringify(name)}`);
    if (seen.has(name)) throw bad(`"${name}" appears twice`);
    seen.add(name);
    if (typeof raw.content_hash !== 'string' || !HASH_RE.test(raw.content_hash)) {
      throw bad(`"${name}" has no valid content_hash`);
    }
    // The kind's Source validates its own keys (sources/index.ts).
    const checked = checkRecord(raw.source);
    if ('problem' in checked) throw bad(`"${name}": ${checked.problem}`);
    return raw as LockEntry;
  });
  return { entries, extra };
}

/** Serialise with entries sorted by name (byte order), host keys first. */
export function serializeLock(lock: Lockfile): string {
  const entries = [...lock.entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, content_hash, version, source, ...rest }) => {
      return {
        name,
        content_hash,
        ...(version !== undefined ? { version } : {}),
        ...dropUndefined(rest),
        // A library caller may hand us a kind we do not know: keep its keys as they are.
        source: recordTable(source),
      };
    });
  const body = stringifyToml({ ...lock.extra, extensions: entries });
  return LOCK_HEADER + body + (body.endsWith('\n') ? '' : '\n');
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** The text of a lock file; undefined when there is none, anything unreadable (or not a regular file) throws. */
function readLockText(file: string): string | undefined {
  // Sync: one small file, read by every command; a thread-pool hop buys nothing.
  return readRegularFileSync(file, 'The lockfile', {
    hint: `yep-ext will not overwrite it. Move it aside (mv "${file}" "${file}.bak") and reinstall your extensions.`,
  })?.toString('utf8');
}

/** Load a lock file (a project's, an export); a missing file is an empty lock, anything unreadable (or not a regular file) throws. */
export async function loadLock(file: string): Promise<Lockfile> {
  const text = readLockText(file);
  return text === undefined ? { entries: [], extra: {} } : parseLock(text, file);
}

/** Load the store's lock (`paths.lockFile`), through its memo when the memo is of exactly this text. */
export async function loadStoreLock(paths: Paths): Promise<Lockfile> {
  const file = paths.lockFile;
  const text = readLockText(file);
  if (text === undefined) return { entries: [], extra: {} };
  return checkLock(text, file, readMemo(paths, text) ?? parseDocument(text, file));
}

/**
 * Write a lock file (an export). Never through a symlink: a lock linked to a file outside the
 * store would have the install rewrite that file (connections.toml has the same rule).
 */
export async function saveLock(file: string, lock: Lockfile): Promise<boolean> {
  return writeFileAtomic(file, serializeLock(lock), { what: 'The lockfile' });
}

/** Write the store's lock (`paths.lockFile`) as `saveLock` does, and its memo. */
export async function saveStoreLock(paths: Paths, lock: Lockfile): Promise<boolean> {
  // Only while this run still holds the store's lock (fs/lock-hold.ts).
  assertLockKept(paths);
  const text = serializeLock(lock);
  const written = await writeFileAtomic(paths.lockFile, text, { what: 'The lockfile' });
  if (written) await writeMemo(paths, text);
  return written;
}

/**
 * Whether the store's lock holds exactly the text yep-ext last wrote there (its memo's); false
 * when that cannot be told (no lock, no memo): the caller then treats the lock as another's.
 */
export function storeLockIsOwnWrite(paths: Paths): boolean {
  const text = readLockText(paths.lockFile);
  return text !== undefined && readMemo(paths, text) !== undefined;
}

const MEMO_FORMAT = 1;
const memoFile = (paths: Paths): string => join(paths.stateDir, 'extensions.lock.json');

/** The document the memo holds for `text`, or undefined (none, another text, unreadable: the caller parses). */
function readMemo(paths: Paths, text: string): Record<string, unknown> | undefined {
  try {
    const memo = readRegularTextSync(memoFile(paths), 'The lockfile memo', { followSymlinks: false, maxBytes: 64 * 1024 * 1024 });
    if (memo === undefined) return undefined;
    const m = JSON.parse(memo) as { format?: unknown; text?: unknown; doc?: unknown };
    if (m.format !== MEMO_FORMAT || m.text !== text || !isRecord(m.doc)) return undefined;
    return asParsed(m.doc) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Keep what `text` parses to. A cache: a failed write costs the next reader a parse. A
 * document JSON cannot carry exactly (a date, a float JSON does not spell, -0) gets no memo.
 */
async function writeMemo(paths: Paths, text: string): Promise<void> {
  try {
    const doc = parseToml(text) as Record<string, unknown>;
    if (!jsonExact(doc)) return;
    await makeOwnedDir(storeCustody(paths, 'state'), 0o700);
    await writeFileAtomic(memoFile(paths), `${JSON.stringify({ format: MEMO_FORMAT, text, doc })}\n`, {
      what: 'The lockfile memo',
      mode: 0o600,
      durable: false,
    });
  } catch {
    // Next time costs a parse, and the lock is not taken for yep-ext's own write (its entries are checked once more).
  }
}

/** Whether JSON gives back exactly `value` (strings, booleans, finite numbers other than -0, arrays and plain tables of them). */
function jsonExact(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(jsonExact);
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== null) return false;
  return Object.values(value).every(jsonExact);
}

/** A JSON value with its tables made as smol-toml makes them (no prototype), so the memo reads back what the parser returned. */
function asParsed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asParsed);
  if (typeof value !== 'object' || value === null) return value;
  const table = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(value)) table[k] = asParsed(v);
  return table;
}

export function findEntry(lock: Lockfile, name: string): LockEntry | undefined {
  return lock.entries.find((e) => e.name === name);
}

/** A new lock with `entry` inserted or replacing the same name. */
export function upsertEntry(lock: Lockfile, entry: LockEntry): Lockfile {
  return { ...lock, entries: [...lock.entries.filter((e) => e.name !== entry.name), entry] };
}
