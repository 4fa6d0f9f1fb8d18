/**
 * yep-ext's custody record of each lock entry, kept where the host does not
 * rewrite it: `<store>/.yep-grants/<name>.lock.json`, the entry exactly as
 * yep-ext last wrote it to extensions.lock (grant, cksum, binary digests, the
 * requirement or ref it follows, and any other key). The host's lock writer
 * re-serialises every entry with four fields (host-compat §4), so after any host
 * install, remove or upsert the lock alone no longer says what was approved.
 *
 * An entry is "reduced" when it is its record with keys taken away and nothing
 * changed (every key it has, top level and under [extensions.source], equals the
 * record's): the host rewrote it, the content is the one yep-ext pinned, and the
 * keys are restored (`restoreCustody`, one lock write under the installer lock).
 * An entry without a grant whose content hash or source differs from its record
 * was "replaced" by the host (another version, another source): nothing is
 * restored, and `verify` reports it.
 */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import type { Context } from '../context.js';
import { makeOwnedDir, removeOwned } from '../fs/custody.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { assertValidName } from '../package/names.js';
import { join } from 'node:path';
import { storeCustody } from '../paths.js';
import { loadStoreLock, saveStoreLock, storeLockIsOwnWrite, type LockEntry, type Lockfile } from './lockfile.js';
import { assertLockKept } from '../fs/lock-hold.js';

/** `<store>/.yep-grants/<name>.lock.json` (a name never holds a dot, so it cannot be a grant file's name). */
function custodyFile(ctx: Context, name: string): string {
  return join(ctx.paths.grantsDir, `${assertValidName(name)}.lock.json`);
}

interface CustodyRecord {
  format: 1;
  entry: LockEntry;
}

/** Record `entry` as yep-ext wrote it to the lock. Best effort after the lock commit: a missing record costs only the restore. */
export async function saveCustody(ctx: Context, entry: LockEntry): Promise<void> {
  assertLockKept(ctx.paths);
  const record: CustodyRecord = { format: 1, entry };
  try {
    await makeOwnedDir(storeCustody(ctx.paths, 'grants'), 0o755);
    await writeFileAtomic(custodyFile(ctx, entry.name), `${JSON.stringify(record, null, 2)}\n`, { what: 'The custody record' });
  } catch {
    // The lock is committed; the next write records it again.
  }
}

export async function removeCustody(ctx: Context, name: string): Promise<void> {
  await removeOwned(storeCustody(ctx.paths, 'grants'), `${assertValidName(name)}.lock.json`);
}

/** The recorded entry for `name`, or undefined (none, unreadable, or naming another entry). */
function loadCustody(ctx: Context, name: string): LockEntry | undefined {
  let text: string | undefined;
  try {
    text = readRegularTextSync(custodyFile(ctx, name), 'The custody record');
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as CustodyRecord;
    return record.format === 1 && record.entry?.name === name ? record.entry : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Keys of `record` that `entry` lacks, top level and under `source` (`source.<key>`). */
function missingKeys(entry: LockEntry, record: LockEntry): string[] {
  const top = Object.keys(record).filter((k) => k !== 'source' && !Object.hasOwn(entry, k));
  const source = Object.keys(record.source).filter((k) => !Object.hasOwn(entry.source, k));
  return [...top, ...source.map((k) => `source.${k}`)];
}

/** Every key `entry` has equals the record's (the entry is the record, with keys taken away). */
function isSubset(entry: LockEntry, record: LockEntry): boolean {
  for (const [k, v] of Object.entries(entry)) {
    if (k === 'source') continue;
    if (!Object.hasOwn(record, k) || !same(v, record[k])) return false;
  }
  if (!isObject(entry.source) || !isObject(record.source)) return false;
  for (const [k, v] of Object.entries(entry.source)) if (!Object.hasOwn(record.source, k) || !same(v, record.source[k])) return false;
  return true;
}

export type CustodyState =
  | { state: 'intact' | 'none' }
  /** The host rewrote the entry; `record` is what yep-ext wrote, `keys` what the lock lost. */
  | { state: 'reduced'; record: LockEntry; keys: string[] }
  /** The host put another package under the name (content hash or source differs); the record no longer applies. */
  | { state: 'replaced'; record: LockEntry };

/** What the lock entry is to yep-ext's record of it. */
export function custodyOf(ctx: Context, entry: LockEntry): CustodyState {
  const record = loadCustody(ctx, entry.name);
  if (!record) return { state: 'none' };
  const keys = missingKeys(entry, record);
  if (keys.length === 0) return { state: 'intact' };
  if (isSubset(entry, record)) return { state: 'reduced', record, keys };
  // Only an entry yep-ext could not have written (no grant: the host's) was replaced; a yep-ext entry it changed itself is the record's to follow.
  return typeof entry.grant === 'string' ? { state: 'intact' } : { state: 'replaced', record };
}

export interface CustodyReport {
  /** Entries whose lost keys were written back, and which keys. */
  restored: { name: string; keys: string[] }[];
  /** Entries the host replaced: the record was not applied. */
  replaced: { name: string; recorded_hash: string; content_hash: string }[];
}

/**
 * What restoreCustody did in this run (verify and `install --frozen` report it in --json).
 * Keyed by the run's paths object, which a Context makes once and the contexts an operation
 * derives from it share: one command run, however many runs one process holds (a library
 * caller's, in-process tests'), so a run never reports what an earlier one restored.
 */
const reports = new WeakMap<Context['paths'], CustodyReport>();

/** Custody restored or found replaced in this store by this run so far. */
export function custodyReport(ctx: Context): CustodyReport {
  return reports.get(ctx.paths) ?? { restored: [], replaced: [] };
}

/** `lock` with each reduced entry replaced by its record (the same object when none is reduced); `seen` hears every entry's state. */
function asRecorded(ctx: Context, lock: Lockfile, seen: (entry: LockEntry, c: CustodyState) => void = () => {}): Lockfile {
  let changed = false;
  const entries = lock.entries.map((entry) => {
    const c = custodyOf(ctx, entry);
    seen(entry, c);
    if (c.state !== 'reduced') return entry;
    changed = true;
    return c.record;
  });
  return changed ? { ...lock, entries } : lock;
}

/**
 * The store's lock as yep-ext's records say it, for a command that reads it and writes
 * nothing (list, info, outdated, `policy check`, `lock export`, `mirror`): an entry the host's
 * writer reduced is read with the keys it lost (the index it came from, the requirement it
 * follows, its cksum and grant), so such a command decides as `restoreCustody` will have
 * the next writer decide (outdated offers what update would take; an export or a mirror keeps
 * the registry the package came from), not from a four-field entry whose origin defaults to
 * crates.io. Nothing is written: the next command that takes the installer lock restores it.
 */
export async function loadLockAsRecorded(ctx: Context, options: { notice?: boolean } = {}): Promise<Lockfile> {
  const lock = await loadStoreLock(ctx.paths);
  if (!lockWrittenSinceRecords(ctx)) return lock;
  const reduced: { name: string; keys: string[] }[] = [];
  const recorded = asRecorded(ctx, lock, (entry, c) => {
    if (c.state === 'reduced') reduced.push({ name: entry.name, keys: c.keys });
  });
  // `list` says what it read that the lock no longer holds, and what puts it back.
  if (options.notice && reduced.length > 0) {
    ctx.log.warn(
      `a yolop lock write dropped ${reduced.map((r) => `${r.name}'s ${r.keys.join(', ')}`).join('; ')} from extensions.lock; shown as yep-ext recorded them (the content is the one recorded). \`yep-ext verify\` writes them back.`,
    );
  }
  return recorded;
}

/**
 * Write back the keys the host's lock writer dropped from entries whose content is
 * still the one recorded (one lock write), and name the entries it replaced.
 * Caller holds the installer lock (recovery runs it for every command that does).
 */
export async function restoreCustody(ctx: Context): Promise<CustodyReport> {
  const report: CustodyReport = { restored: [], replaced: [] };
  if (!lockWrittenSinceRecords(ctx)) return report;
  let lock: Awaited<ReturnType<typeof loadStoreLock>>;
  try {
    lock = await loadStoreLock(ctx.paths);
  } catch {
    return report; // an unreadable lock is the command's to report
  }
  const recorded = asRecorded(ctx, lock, (entry, c) => {
    if (c.state === 'reduced') report.restored.push({ name: entry.name, keys: c.keys });
    if (c.state === 'replaced') report.replaced.push({ name: entry.name, recorded_hash: c.record.content_hash, content_hash: entry.content_hash });
  });
  if (recorded !== lock) await saveStoreLock(ctx.paths, recorded);
  const all = custodyReport(ctx);
  reports.set(ctx.paths, { restored: [...all.restored, ...report.restored], replaced: report.replaced });
  return report;
}

/**
 * Whether anything may have rewritten the lock since yep-ext last recorded an entry:
 * yep-ext writes each record right after its lock write, so a lock older than the
 * newest record was written by yep-ext, and the lock is not read again (every command
 * that takes the installer lock runs this; stat calls only). File times are as coarse
 * as the kernel's clock tick, so a lock written just after a record (by yolop, or a
 * second yep-ext run) may carry the record's very time: then the lock is yep-ext's own
 * only if it holds the text yep-ext wrote (its memo, lockfile.ts).
 */
function lockWrittenSinceRecords(ctx: Context): boolean {
  const lock = statSync(ctx.paths.lockFile, { bigint: true, throwIfNoEntry: false });
  if (!lock) return false;
  let names: string[];
  try {
    names = readdirSync(ctx.paths.grantsDir).filter((n) => n.endsWith('.lock.json'));
  } catch {
    return false; // no record at all: nothing to restore
  }
  let newest = -1n;
  for (const n of names) {
    const st = lstatSync(join(ctx.paths.grantsDir, n), { bigint: true, throwIfNoEntry: false });
    if (st?.isFile() && st.mtimeNs > newest) newest = st.mtimeNs;
  }
  if (newest < 0n) return false;
  if (lock.mtimeNs !== newest) return lock.mtimeNs > newest;
  return !storeLockIsOwnWrite(ctx.paths);
}

/** One line per restored entry, for `Recovered: …`. */
export function describeRestored(report: CustodyReport): string[] {
  return report.restored.map(
    (r) => `restored ${r.name}'s ${r.keys.join(', ')} in extensions.lock, which a yolop lock write had dropped (the content is the one yep-ext recorded)`,
  );
}
