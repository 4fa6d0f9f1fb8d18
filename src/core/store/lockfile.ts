/**
 * extensions.lock (host-compat §4): parse, serialise, load and save.
 * Host keys are kept exactly; extra keys (ours or a newer tool's) survive a
 * round trip. An unreadable lock is an error naming the file: it is never reset
 * (the host treats it as empty and overwrites it; we refuse).
 */
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { YepError } from '../errors.js';
import { readRegularFileSync } from '../fs/read-regular-file.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { parseLockTomlFast } from './lock-fast-parse.js';
import { isValidName } from '../package/names.js';
import { arrayTableLine, formatPosition, tomlErrorAt, type TomlPosition } from '../text/toml-position.js';
import { checkRecord, isKind, sourceFor, type LockSource } from '../sources/index.js';
import { recordTable } from '../sources/source.js';

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

/** Parse lock text. Throws E_STATE (naming `file`) on anything unreadable. */
export function parseLock(text: string, file = 'extensions.lock'): Lockfile {
  if (text.trim() === '') throw corrupt(file, 'it is empty (a healthy lock always has a header)');
  if (text.includes('\0')) throw corrupt(file, 'it contains NUL bytes (a torn write?)');
  let doc: Record<string, unknown>;
  try {
    doc = parseLockTomlFast(text) ?? (parseToml(text) as Record<string, unknown>);
  } catch (e) {
    const { reason, at } = tomlErrorAt(e);
    throw corrupt(
      file,
      at ? `invalid TOML at line ${at.line}, column ${at.column} (${formatPosition(file, at)}): ${reason}` : `invalid TOML (${reason})`,
      e,
      at,
    );
  }
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
        source: isKind(source.type) ? sourceFor(source.type).writeRecord(source) : recordTable(source),
      };
    });
  const body = stringifyToml({ ...lock.extra, extensions: entries });
  return LOCK_HEADER + body + (body.endsWith('\n') ? '' : '\n');
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Load the lock; a missing file is an empty lock, anything unreadable (or not a regular file) throws. */
export async function loadLock(file: string): Promise<Lockfile> {
  // Sync: one small file, read by every command; a thread-pool hop buys nothing.
  const bytes = readRegularFileSync(file, 'The lockfile', {
    hint: `yep-ext will not overwrite it. Move it aside (mv "${file}" "${file}.bak") and reinstall your extensions.`,
  });
  if (bytes === undefined) return { entries: [], extra: {} };
  return parseLock(bytes.toString('utf8'), file);
}

/**
 * Write the lock. Never through a symlink: a lock linked to a file outside the
 * store would have the install rewrite that file (connections.toml has the same rule).
 */
export async function saveLock(file: string, lock: Lockfile): Promise<boolean> {
  return writeFileAtomic(file, serializeLock(lock), { what: 'The lockfile' });
}

export function findEntry(lock: Lockfile, name: string): LockEntry | undefined {
  return lock.entries.find((e) => e.name === name);
}

/** A new lock with `entry` inserted or replacing the same name. */
export function upsertEntry(lock: Lockfile, entry: LockEntry): Lockfile {
  return { ...lock, entries: [...lock.entries.filter((e) => e.name !== entry.name), entry] };
}
