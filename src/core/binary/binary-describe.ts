/**
 * The contribution-summary line about a package's server binary. Apart from
 * binary-step.ts (which re-exports it) so install and update planning do not
 * load the binary provisioner and its archive reader to print one line.
 */
import type { DigestSource } from './binary-record.js';
import type { BinaryStep } from './binary-step.js';

/** What a prebuilt binary's digest was checked against, for people (the summary and the install's line say it alike). */
export function verifiedWith(source: DigestSource | undefined): string {
  if (source === 'crate') return 'a digest inside the crate';
  if (source === 'signature') return "the crate's minisign key";
  return "the release host's .sha256 only (weaker: same host as the binary)";
}

/** The contribution-summary line about the server binary, if there is one to say. */
export function describeBinaryStep(step: BinaryStep | undefined): string | undefined {
  if (!step) return undefined;
  if (step.build && step.consent === 'given')
    return `server binary: will be BUILT FROM SOURCE with cargo (you consented: the crate's build scripts and proc-macros run on this machine)`;
  if (step.build)
    return `server binary: no prebuilt fits this machine; building it from source runs the crate's build scripts and proc-macros here, so you will be asked first (--allow-build consents, --no-build skips it)`;
  const r = step.outcome?.record;
  if (!r) return undefined;
  return `server binary: prebuilt ${r.binary_target ?? ''} from ${step.outcome?.url ?? '?'}, verified with ${verifiedWith(r.binary_digest_source)}${r.binary_signature && r.binary_digest_source === 'crate' ? ' and a minisign signature' : ''}`;
}
