/**
 * The one error type of yep-ext. Every failure a user can cause or meet carries a
 * stable `code`; the CLI maps the code to an exit status through EXIT_CODES, and
 * `--json` prints `{"error": {"code", "message", "hint"}}`. Anything that is not a
 * YepError reaching the CLI is a bug and is reported as one.
 */

/** Stable error codes. Never rename one: scripts match on them. */
export const ERROR_CODES = {
  E_USAGE: 2, // bad flags, arguments or spec text
  E_NAME: 2, // a name that breaks ^[A-Za-z0-9_-]+$
  E_NOT_INSTALLED: 3, // an extension name that is not in the store
  E_NOT_FOUND: 3, // a crate, version, path, ref or file that does not exist
  E_MANIFEST: 4, // plugin.json missing, unparsable or against the host's rules
  E_UNSAFE_PACKAGE: 4, // an archive or tree that breaks the unpack policy
  E_ENGINES: 4, // the package's engines.yolop excludes the installed agent
  E_INTEGRITY: 5, // checksum or content-hash mismatch
  E_NETWORK: 6, // HTTP failures, timeouts, caps, refused redirects
  E_GIT: 6, // git failed (clone, fetch, auth)
  E_STATE: 7, // a state file (lock/settings/secrets) is corrupt or unwritable
  E_LOCKED: 7, // another yep-ext holds the installer lock for too long, or took it over while this one held it
  E_CONFLICT: 7, // the store holds something else under that name
  E_CONSENT_REQUIRED: 8, // a grant widens and nobody approved it
  E_DOCTOR_FAILED: 9, // at least one doctor check failed
  E_SETUP_INCOMPLETE: 10, // required config/secrets still missing after enable
  E_PARTIAL: 11, // several operations, some failed (each reported)
  E_UNSUPPORTED: 12, // a feature or platform yep-ext does not handle
  E_POLICY: 13, // refused by the administrator's policy file or a release-age cooldown
  E_OUTDATED: 14, // not a failure: `outdated --exit-code` found a newer version
  E_INTERRUPTED: 130, // Ctrl-C
  E_INTERNAL: 70, // a bug in yep-ext
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface YepErrorOptions {
  /** What the user can do next. */
  hint?: string;
  /** The underlying error (never printed in full unless debugging). */
  cause?: unknown;
  /** Structured data for --json consumers (wanted/got, culprit lists...). */
  details?: Record<string, unknown>;
}

export class YepError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: YepErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'YepError';
    this.code = code;
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.details !== undefined) this.details = options.details;
  }

  get exitCode(): number {
    return ERROR_CODES[this.code];
  }

  /** The `--json` error body: every key present, `null` when there is nothing to say (docs/json.md). */
  toJSON(): { code: ErrorCode; message: string; hint: string | null; details: Record<string, unknown> | null } {
    return { code: this.code, message: this.message, hint: this.hint || null, details: this.details ?? null };
  }
}

export function isYepError(e: unknown): e is YepError {
  return e instanceof YepError;
}

/** What a run stopped by its signal (Ctrl-C) ends with: the signal's reason when it is a YepError, else E_INTERRUPTED. */
function interruptedError(signal: AbortSignal): YepError {
  return signal.reason instanceof YepError ? signal.reason : new YepError('E_INTERRUPTED', 'Interrupted.');
}

/**
 * The one check before anything is committed (the installer lock taken, a package placed, a
 * build started): after Ctrl-C nothing new starts, and what was in flight ends here, rolled
 * back by its own cleanup (its staging removed). A transaction already under way is not
 * stopped halfway: it is short, and completes or rolls back as one.
 */
export function stopIfInterrupted(signal: AbortSignal): void {
  if (signal.aborted) throw interruptedError(signal);
}

/** Exit status for any thrown value: YepError codes, everything else is a bug (70). */
export function exitCodeFor(e: unknown): number {
  return isYepError(e) ? e.exitCode : ERROR_CODES.E_INTERNAL;
}

/** A Node system error code (ENOENT, EACCES...) if there is one. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof (e as { code: unknown }).code === 'string' ? (e as { code: string }).code : undefined;
}

/** Where a path's directory ends: the part before its last separator (errors.ts stays free of imports). */
function parentOf(file: string): string {
  const at = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return at > 0 ? file.slice(0, at) : file;
}

/** The errno codes of a full disk (or a used-up quota): the disk's state, never a network or git failure. */
export const DISK_FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/**
 * The one mapping of a filesystem failure to a YepError (E_STATE, exit 7) that says what
 * to do: every read or write of a home, a store, a cache, staging or a download goes
 * through here, whoever hit the error (our own write, git's checkout, a download). `dir`
 * is the directory a full disk is named by (default: the file's own; callers with a
 * Context pass `knownDirOf(ctx.paths, file)`, the store or cache a person knows).
 */
export function stateIoError(action: string, file: string, e: unknown, dir: string = parentOf(file)): YepError {
  const code = errnoCode(e);
  const hint =
    code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
      ? `Check that ${file} and its directory are writable by you (set YOLOP_CONFIG_DIR to use another location).`
      : code !== undefined && DISK_FULL_CODES.has(code)
        ? `The disk holding ${dir} is full${code === 'EDQUOT' ? ' (your disk quota is used up)' : ''}: free some space there and run the command again. Nothing was changed.`
        : code === 'EISDIR'
          ? `${file} is a directory; move it aside and run again.`
          : code === 'ENOTDIR'
            ? `${file}, or a directory above it, is a file where a directory belongs (a lock left by another tool?); move it aside and run again.`
            : undefined;
  return new YepError('E_STATE', `Could not ${action} ${file}: ${code ?? (e as Error)?.message ?? String(e)}`, {
    cause: e,
    ...(hint ? { hint } : {}),
    ...(code !== undefined && DISK_FULL_CODES.has(code) ? { details: { file, dir, errno: code } } : {}),
  });
}
