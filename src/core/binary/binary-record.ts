/**
 * What the lock says about a provisioned server binary (keys on
 * `[extensions.source]`, docs/formats.md), and the pure wording of how strong
 * its verification was, for `list` problems and `info`.
 *
 *   binary_sha256        SHA-256 of the artifact as downloaded and verified (for a
 *                        cargo build: of the built file). The host-compatible key.
 *   binary_file_sha256   SHA-256 of the file placed at bin/<command> (drift checks).
 *   binary_source        "prebuilt" | "cargo"
 *   binary_digest_source "crate" (digest inside the checksummed crate) |
 *                        "release-host" (a .sha256 beside the artifact) |
 *                        "signature" (no digest; a minisign signature by the crate's key)
 *   binary_signature     "minisign" when a signature by the crate's key was verified
 *   binary_target        the Rust target triple the binary was provisioned for
 */
import { isLinked } from '../sources/index.js';
import { BINARY_RECORD_KEYS } from '../sources/source.js';
import type { LockSource } from '../store/lockfile.js';

export type DigestSource = 'crate' | 'release-host' | 'signature';
type BinarySource = 'prebuilt' | 'cargo';

export interface BinaryRecord {
  binary_sha256: string;
  binary_file_sha256: string;
  binary_source: BinarySource;
  binary_digest_source?: DigestSource;
  binary_signature?: 'minisign';
  binary_target?: string;
}

/** `source` with any earlier binary record replaced by `record` (or removed when undefined). */
export function withBinaryRecord<S extends LockSource>(source: S, record: BinaryRecord | undefined): S {
  const out: Record<string, unknown> = { ...source };
  for (const k of BINARY_RECORD_KEYS) delete out[k];
  return { ...out, ...(record ?? {}) } as S;
}

/** The binary record `source` carries, or undefined when it records none. */
export function binaryRecordOf(source: LockSource): BinaryRecord | undefined {
  if (typeof source.binary_sha256 !== 'string') return undefined;
  return Object.fromEntries(BINARY_RECORD_KEYS.filter((k) => source[k] !== undefined).map((k) => [k, source[k]])) as unknown as BinaryRecord;
}

export type BinaryTrust = 'crate-digest' | 'crate-key' | 'release-host' | 'local-build' | 'unrecorded';

/** How the installed binary was verified, from its lock record. */
export function binaryTrust(source: LockSource): BinaryTrust | undefined {
  if (isLinked(source) || typeof source.binary_sha256 !== 'string') return undefined;
  if (source.binary_source === 'cargo') return 'local-build';
  if (source.binary_digest_source === 'crate') return 'crate-digest';
  if (source.binary_signature === 'minisign' || source.binary_digest_source === 'signature') return 'crate-key';
  if (source.binary_digest_source === 'release-host') return 'release-host';
  // Written by the host or an older yep-ext: only the .sha256 form existed then.
  return 'unrecorded';
}

/** One line for humans: what vouches for the binary, strongest first. */
export function describeBinaryTrust(trust: BinaryTrust): string {
  switch (trust) {
    case 'crate-digest':
      return 'prebuilt binary verified against a digest inside the checksummed crate';
    case 'crate-key':
      return "prebuilt binary verified by a minisign signature from the crate's key";
    case 'local-build':
      return 'server binary built locally from the verified crate with cargo';
    case 'release-host':
      return 'weak binary digest: the prebuilt binary was checked only against a .sha256 from the same release host (whoever controls that host controls both); ask the author to put per-target digests in the crate';
    case 'unrecorded':
      return "weak binary digest: the lock does not say where the prebuilt binary's digest came from (installed by the host or an older yep-ext: a .sha256 from the release host); reinstall to record it";
  }
}

/** The `list` problem for a binary whose digest is the weaker kind, if any. */
export function weakBinaryProblem(source: LockSource): string | undefined {
  const trust = binaryTrust(source);
  return trust === 'release-host' || trust === 'unrecorded' ? describeBinaryTrust(trust) : undefined;
}
