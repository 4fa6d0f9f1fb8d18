/**
 * The contract every source kind implements (pacote's shape): one object per kind
 * owns everything kind-specific, from fetching a parsed spec into staging to the
 * keys it records in the lock, and the table in `./index.ts` is the only place a
 * kind is selected. Operations ask the Source; they never test `type === '…'`.
 *
 * Every fetch returns `Fetched`: the package tree plus the lock record of exactly
 * what was fetched. Only the one pipeline (operations/prepare) reads the manifest,
 * hashes and places the tree. Methods take `ctx: Context` so the outside world
 * (http, git, spawn, clock) can be injected through it without changing them.
 */
import type { Context } from '../context.js';
import type { MirrorPlan } from './mirror/mirror-plan.js';

/** The kind-specific table under `[extensions.source]`; unknown keys round-trip. */
export interface RecordBase<K extends string = string> {
  type: K;
  [extra: string]: unknown;
}

/** What a fetch returns: a package tree and exactly what the lock records for it. */
export interface Fetched<R extends RecordBase = RecordBase> {
  /**
   * Root of the package tree: `into` for a tree yep-ext owns (the pipeline
   * renames it into the store), the user's canonical directory for a linked kind.
   */
  dir: string;
  /** What gets written under [extensions.source] in the lock. */
  source: R;
  /**
   * The content hash of `dir` computed while the fetch wrote it (a crate's
   * extractor); absent, the pipeline hashes the tree. Only for a tree nothing
   * else writes into before the pipeline reads it.
   */
  content_hash?: string;
  /** Human notes to show after install (warnings already went to the logger). */
  notes?: string[];
}

/** What `Source.candidates` returns: records best first, and notes for the install's outcome. */
export interface Candidates<R> {
  records: R[];
  notes?: string[];
}

/** `fetched` with `notes` added after its own (none: unchanged). */
export function withNotes<R extends RecordBase>(fetched: Fetched<R>, notes: readonly string[] | undefined): Fetched<R> {
  if (!notes || notes.length === 0) return fetched;
  return { ...fetched, notes: [...(fetched.notes ?? []), ...notes] };
}

/** A lock table read back: the typed record, or why it is unusable (the lock then fails to load). */
export type RecordCheck<R> = { record: R } | { problem: string };

/** The two things "same pin, same bytes" compares. */
interface PinnedEntry<R> {
  content_hash: string;
  source: R;
}

/**
 * One source kind. `K` is its kind name (the parser's `spec.kind` and the lock's
 * `source.type`), `S` its parsed spec, `R` its lock record. Declared with method
 * syntax on purpose: a `Source<'git', GitSpec, GitRecord>` is then usable where a
 * `Source<Kind, ValidSpec, LockSource>` is expected (the table's dispatch).
 */
export interface Source<K extends string, S extends { kind: K }, R extends RecordBase<K>> {
  readonly kind: K;
  /**
   * True when the store entry is a symlink to the user's own directory (edited in
   * place, re-hashed on every check, never written into); false when it is a tree
   * yep-ext owns (verified once, may receive a provisioned binary).
   */
  readonly linked: boolean;
  /**
   * True when the fetched tree is a published cargo package whose server binary
   * may be built from it with `cargo install` (docs/binaries.md): crates only.
   */
  readonly buildable: boolean;

  /**
   * The record keys yep-ext writes for this kind (besides `type` and the binary
   * record's keys). A lock table of this kind without one of `required` (each a
   * string) is unusable (sources/index.ts, `checkRecord`); every key is written as a
   * plain TOML value (`recordTable`). Any other key under [extensions.source] is a
   * newer tool's or the host's, and every rewrite of the entry keeps it
   * (`withUnknownRecordKeys`).
   */
  readonly recordKeys: { readonly required: readonly string[]; readonly optional: readonly string[] };

  /** One line for people: `crates.io:yolop-extension-lsp@0.3.1`, `https://h/r.git#abc123…`, `/home/me/ext`. */
  describe(rec: R): string;
  /**
   * `describe` for tables that show where each package lives (`list`'s source
   * column, `info`): names a non-default origin (a crate from a mirror's index
   * shows that index's host, not `crates.io:`). Without it, `describe`.
   */
  label?(rec: R): string;
  /** Same place, ignoring the pin: reinstalling from another origin asks first. */
  sameOrigin(a: R, b: R): boolean;
  /** What the record pins within its origin (version, commit; "" when nothing is pinned). A full commit id is read as a commit (`pinnedCommit`). */
  pin(rec: R): string;
  /** The user asked for exactly this pin, so `update` will not move it. */
  pinnedExactly(rec: R): boolean;
  /**
   * True when `yep-ext update` of the installed `previous`, as recorded, would move it
   * forward toward `next`'s pin, as far as the two records tell without a request: the
   * same origin, what `previous` follows admits `next`, and `next` is ahead. A refused
   * replacement suggests `update` only then (never for a downgrade or another ref).
   */
  updateReaches(previous: R, next: R): boolean;
  /**
   * What `update` follows within the origin, as the user last asked for it (git: the
   * requested ref; crates: the version requirement; "" for none). Installing the same pin
   * through another one is a re-pin that records it, never "unchanged".
   */
  follows(rec: R): string;
  /** `rec` following what `like` follows (its ref or requirement), every other field kept. */
  withFollows(rec: R, like: R): R;
  /**
   * Same pin must mean same bytes: throw E_INTEGRITY when `next` pins what
   * `previous` pinned and the bytes differ (a republished crate, an altered checkout).
   */
  checkRepin(previous: PinnedEntry<R>, next: PinnedEntry<R>, name: string): void;

  /**
   * Where the record comes from, in the terms a policy file restricts
   * (docs/policy.md): the sparse index root of a registry kind, the host of a git
   * kind. A kind without either (a local path) leaves it out.
   */
  originFacts?(rec: R): OriginFacts;
  /**
   * Where this run takes the bytes of `rec` from besides its origin, in the same
   * terms: a git mirror (ctx.gitMirror), an index chosen for this run over the
   * recorded one. The policy admits each (operations/policy-gate.ts).
   */
  fetchPlaces?(ctx: Context, rec: R): FetchPlace[];
  /** Before `spec` is resolved: its origin and the other places this run would take its bytes from. */
  specPlaces?(ctx: Context, spec: S): { origin: OriginFacts; via: FetchPlace[] };

  /** Warnings (through ctx.log) or refusals before anything is created for `spec`. */
  preflight?(ctx: Context, spec: S, cwd: string): void;
  /**
   * Refusals of the spec's own text, before anything is read or requested (a crate
   * requirement cargo refuses, `lsp@^^1`): a typo is a usage error, never a network one.
   */
  checkSpec?(spec: S): void;
  /**
   * Whether the installed `rec` is what `spec` names (`info .` in a directory installed in
   * place; `info crates.io:<crate>` of that installed crate). Kinds without it never match.
   */
  namesInstalled?(spec: S, rec: R): boolean;
  /**
   * Install, for a kind without `candidates` (it resolves by fetching: a git ref, a
   * directory): resolve `spec` and fetch it into `into` (which must not exist; its
   * parent does). A kind with `candidates` is installed as `fetchExactly` of them.
   */
  fetch?(ctx: Context, spec: S, into: string): Promise<Fetched<R>>;
  /**
   * Fetch exactly what `rec` pins into `into`, never resolving anything newer:
   * `install --frozen`, and the base of reinstall, verify/repair and mirroring.
   * The returned record is `rec`'s pin (fields the lock lacked, such as a crate's
   * cksum, filled in). The caller compares the content hash with the lock entry:
   * use `prepareExactly` (operations/prepare) to get both in one call.
   */
  fetchExactly(ctx: Context, rec: R, into: string): Promise<Fetched<R>>;

  /**
   * Kinds with several versions to choose from (crates): every record `spec` could
   * install, best first, from the kind's one set of resolve rules; `fetchExactly`
   * of the first is the install, and what --ignore-engines takes. The
   * `engines.yolop` walk (operations/agent-walk) tries them in turn, since a
   * version's agent requirement is known only after its download. `notes` belong
   * to the install's outcome whichever candidate is kept (a cooldown's skip). A
   * kind without it has one candidate: what `fetch` returns.
   */
  candidates?(ctx: Context, spec: S): Promise<Candidates<R>>;
  /**
   * Kinds without candidates whose pin can be resolved without a download (git: one
   * `ls-remote`): the record `spec` would install now, asked only when `installed`
   * (the lock's entries) holds one of the same origin, so `install` can say "already
   * installed" before fetching (operations/install-already). Undefined: not asked.
   */
  installedPin?(ctx: Context, spec: S, installed: readonly { source: { type: string } }[]): Promise<R | undefined>;
  /** What one of this kind is, for messages: "That git repository is not installed". */
  readonly noun: string;
  /**
   * `info` for a spec that is not installed: what its registry lists, without
   * installing (crates). A kind without a registry has none.
   */
  registryInfo?(ctx: Context, spec: S): Promise<{ name: string; registry: RegistryListing }>;
  /**
   * `yep-ext mirror` (docs/fleet.md): fetch and verify what `rec` pins, stage it in
   * `target` (placed only when every entry passed), and say where it is listed; or
   * why it is not mirrored (a path is local by definition). Without it, entries of
   * the kind are skipped.
   */
  mirror?(ctx: Context, target: MirrorTarget, name: string, rec: R): Promise<MirrorOutcome>;
  /**
   * `update`, `outdated` and `info`: what the origin offers now, read without
   * downloading a package (one index read, one ls-remote), as the kind's one set of
   * resolve rules decides it (crates: crates-io/pick-version.ts); `update` fetches its
   * `candidates`. A kind without it (a linked directory) has nothing to ask: `update`
   * re-reads the recorded pin, and the content hash decides whether anything changed.
   */
  upstream?(ctx: Context, rec: R): Promise<Upstream<R>>;
}

/**
 * What the origin offers now, for `outdated` and `info` (no download): the pin the
 * recorded intent selects (`wanted`) and the newest pin at all (`latest`).
 */
export interface Upstream<R extends RecordBase = RecordBase> {
  /** What `update` would move to now (a version, a commit); the installed pin when nothing newer. */
  wanted: string | null;
  /** The newest any command moves to: `outside` when there is one, else `wanted` (git: = wanted). */
  latest: string | null;
  /** `wanted` is newer than the pin: `yep-ext update` moves it. */
  update: boolean;
  /** A release outside the recorded intent is newer than `wanted` (`outside`): only an install of it reaches it. */
  beyond: boolean;
  /**
   * The records `update` fetches, best first (the `engines.yolop` walk tries them in
   * turn; --ignore-engines takes the first); empty = nothing to move to.
   */
  candidates: R[];
  /**
   * The one "newer outside the requirement" answer (crates): the newest installable
   * release the recorded requirement does not select, when newer than `wanted`; null otherwise.
   */
  outside: { version: string; requirement: string } | null;
  /** What people should hear about the answer (a cooldown's skipped versions); said once by the operation. */
  notes: string[];
  /** Git: the recorded ref is this tag (people read `v1.2.0`, not its commit). */
  tag?: string;
  /** The versions the registry lists, newest first, yanked ones marked (crates; [] for other kinds). */
  versions: { version: string; yanked: boolean }[];
  /**
   * Crates: every installable pin newer than the installed one, newest first, as
   * records `fetchExactly` fetches; `within` = the recorded intent selects it (`update`
   * reaches it). `outdated` downloads them to read their `engines.yolop`. Absent: no walk.
   */
  newer?: { source: RecordBase; within: boolean }[];
}

/** What a registry lists for a package that is not installed (`info`). */
export interface RegistryListing {
  crate: string;
  /** The registry, for people (`crates.io` or the index URL). */
  index: string;
  latest: string | null;
  versions: Upstream['versions'];
}

/**
 * Where `Source.mirror` stages what it mirrors (sources/mirror/mirror-plan.ts): checked
 * and fetched into scratch now, placed in the mirror only after every entry passed.
 */
type MirrorTarget = MirrorPlan;

/**
 * What mirroring one lock entry did: skipped (why), or added under `section` of
 * the command's report and of the mirror's manifest.json (`crates`: index lines
 * and .crates; `git`: bare repositories). `record` is the manifest item, listed
 * once (`same` says an existing item is it); `files` are the mirror files written,
 * by path in the mirror, with their sha256 (manifest.json `files`).
 */
type MirrorOutcome =
  | { skipped: string }
  | {
      section: string;
      report: object;
      record: Record<string, unknown>;
      same(existing: Record<string, unknown>): boolean;
      files: Record<string, string>;
    };

/** What `originFacts` reports. */
export interface OriginFacts {
  /** Sparse index root, normalised (ending in `/`, no `sparse+`). */
  index_url?: string;
  /** Lower-cased host of a git URL (`file` for a local repository). */
  git_host?: string;
}

/** The keys of a provisioned server binary's record (binary/binary-record.ts), in any kind's record. */
export const BINARY_RECORD_KEYS = [
  'binary_sha256',
  'binary_file_sha256',
  'binary_source',
  'binary_digest_source',
  'binary_signature',
  'binary_target',
] as const;

/** A place bytes come from other than the origin, and what it is (`the git mirror file:///srv/git/`). */
export interface FetchPlace extends OriginFacts {
  through: string;
}

/** The lock table of a record: `type` first, then its keys as plain TOML values, undefined dropped, order kept. */
export function recordTable(rec: RecordBase): Record<string, unknown> {
  const { type, ...rest } = rec;
  return { type, ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) };
}
