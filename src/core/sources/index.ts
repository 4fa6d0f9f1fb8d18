/**
 * The one table from source kind to Source (see ./source.ts): the only place,
 * with the spec parser, where a kind is named. Adding a kind = one module
 * implementing Source + one line here (+ its case in the parser); the compiler
 * then checks the table covers every kind the parser produces.
 */
import { crateSource } from './crate-source.js';
import { gitSource } from './git-source.js';
import { isFullSha } from './git-url.js';
import { pathSource } from './path-source.js';
import type { Context } from '../context.js';
import { BINARY_RECORD_KEYS, type FetchPlace, type OriginFacts, type RecordBase, type RecordCheck, type Source } from './source.js';

export type { FetchPlace, OriginFacts } from './source.js';
import type { Spec } from './spec.js';

/** A parse result that names a kind (the parser's `invalid` is not one). */
export type ValidSpec = Exclude<Spec, { kind: 'invalid' }>;
export type Kind = ValidSpec['kind'];

export const SOURCES = {
  crate: crateSource,
  git: gitSource,
  path: pathSource,
} satisfies { [K in Kind]: Source<K, Extract<ValidSpec, { kind: K }>, RecordBase<K>> };

type RecordOf<X> = X extends Source<string, never, infer R> ? R : never;

/** Any lock record: the union of every kind's record, derived from the table. */
export type LockSource = { [K in Kind]: RecordOf<(typeof SOURCES)[K]> }[Kind];

/** A Source whose methods accept any kind's spec or record: pass it only its own kind's. */
export type AnySource = Source<Kind, ValidSpec, LockSource>;

/** Every kind name, for policy files and their messages (nothing else spells them). */
export const KINDS = Object.keys(SOURCES) as Kind[];

export function isKind(value: unknown): value is Kind {
  return typeof value === 'string' && Object.hasOwn(SOURCES, value);
}

/** The Source for a kind (a spec's `kind` or a record's `type`). */
export function sourceFor(kind: Kind): AnySource {
  return SOURCES[kind];
}

/**
 * Validate a lock's [extensions.source] table: a known kind with that kind's required
 * keys, each a string. Every key is kept as read (unknown ones round-trip).
 */
export function checkRecord(table: unknown): RecordCheck<LockSource> {
  if (typeof table !== 'object' || table === null || Array.isArray(table)) return { problem: 'missing [extensions.source]' };
  const t = table as Record<string, unknown>;
  if (!isKind(t.type)) return { problem: `unknown source type ${JSON.stringify(t.type)}` };
  const { required } = sourceFor(t.type).recordKeys;
  if (required.some((k) => typeof t[k] !== 'string')) return { problem: `${t.type} source without ${required.map((k) => `\`${k}\``).join('/')}` };
  return { record: t as LockSource };
}

/** One line for people: where a locked package comes from. */
export function describeSource(rec: LockSource): string {
  return sourceFor(rec.type).describe(rec);
}

/** Where a package comes from, for people (`list`, `info`, `install`'s summary, outcome and replacement messages): another index than crates.io is named by its host, never passed off as crates.io. */
export function sourceLabel(rec: LockSource): string {
  const source = sourceFor(rec.type);
  return source.label ? source.label(rec) : source.describe(rec);
}

/** Same kind and same origin (the pin aside). */
export function sameOrigin(a: LockSource, b: LockSource): boolean {
  return a.type === b.type && sourceFor(a.type).sameOrigin(a, b);
}

/** Same kind, same origin and the same pin. */
export function samePin(a: LockSource, b: LockSource): boolean {
  return sameOrigin(a, b) && sourceFor(a.type).pin(a) === sourceFor(b.type).pin(b);
}

/** Same pin, followed through the same ref or requirement (what `update` moves along). */
export function samePinAndFollow(a: LockSource, b: LockSource): boolean {
  return samePin(a, b) && sourceFor(a.type).follows(a) === sourceFor(b.type).follows(b);
}

/** `rec` following what `like` follows (same kind): the lock record of a re-pin through another ref or requirement. */
export function withFollows(rec: LockSource, like: LockSource): LockSource {
  return rec.type === like.type ? (sourceFor(rec.type) as AnySource).withFollows(rec, like) : rec;
}

/**
 * A note when the same pin is now reached through another ref or requirement: what
 * `update` follows moved. None otherwise.
 */
export function followNote(previous: LockSource | undefined, next: LockSource): string[] {
  if (!previous || !samePin(previous, next) || samePinAndFollow(previous, next)) return [];
  const label = (rec: LockSource): string => {
    const f = sourceFor(rec.type).follows(rec);
    return f === '' ? 'the newest' : `\`${f}\``;
  };
  return [`\`yep-ext update\` now follows ${label(next)} (it followed ${label(previous)}).`];
}

/**
 * The commit a record is pinned to, for the kinds pinned to one (git): updates show
 * `e76da27 → e87d0a2`. A pin that is a full commit id is one; no other kind's pin (a
 * version, a directory's "") can be 40 hex digits.
 */
export function pinnedCommit(rec: LockSource): string | undefined {
  const pin = sourceFor(rec.type).pin(rec);
  return isFullSha(pin) ? pin : undefined;
}

/** True when the store entry for this record links to the user's directory. */
export function isLinked(rec: LockSource): boolean {
  return sourceFor(rec.type).linked;
}

/** Whether a package from this record may have its server built with cargo (crates). */
export function isBuildable(rec: LockSource): boolean {
  return sourceFor(rec.type).buildable;
}

/** Where a record comes from, in a policy file's terms (index root, git host). */
export function originFacts(rec: LockSource): OriginFacts {
  return sourceFor(rec.type).originFacts?.(rec) ?? {};
}

/**
 * `next` (a record just fetched for the same entry) with the keys of `previous`
 * that yep-ext does not write for that kind: a newer host's or another tool's
 * keys under [extensions.source] survive update, reinstall and `install --force`,
 * as unknown entry keys do. Nothing is carried across kinds.
 */
export function withUnknownRecordKeys(next: LockSource, previous: LockSource | undefined): LockSource {
  if (!previous || previous.type !== next.type) return next;
  const { required, optional } = sourceFor(next.type).recordKeys;
  const known = new Set<string>(['type', ...required, ...optional, ...BINARY_RECORD_KEYS]);
  const carried = Object.entries(previous).filter(([k]) => !known.has(k) && !Object.hasOwn(next, k));
  return carried.length === 0 ? next : ({ ...next, ...Object.fromEntries(carried) } as LockSource);
}

/** Where this run takes a record's bytes from besides its origin (a git mirror, the run's index). */
export function fetchPlaces(ctx: Context, rec: LockSource): FetchPlace[] {
  return sourceFor(rec.type).fetchPlaces?.(ctx, rec) ?? [];
}

/** A spec's origin and the other places this run would take its bytes from, before it is resolved. */
export function specPlaces(ctx: Context, spec: ValidSpec): { origin: OriginFacts; via: FetchPlace[] } {
  return sourceFor(spec.kind).specPlaces?.(ctx, spec) ?? { origin: {}, via: [] };
}
