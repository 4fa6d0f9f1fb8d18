/**
 * The contribution-summary line about a package's server binary. Apart from
 * binary-step.ts (which re-exports it) so install and update planning do not
 * load the binary provisioner and its tar extractor to print one line.
 */
import type { BinaryStep } from './binary-step.js';

/** The contribution-summary line about the server binary, if there is one to say. */
export function describeBinaryStep(step: BinaryStep | undefined): string | undefined {
  if (!step) return undefined;
  if (step.build && step.consent === 'given')
    return `server binary: will be BUILT FROM SOURCE with cargo (you consented: the crate's build scripts and proc-macros run on this machine)`;
  if (step.build)
    return `server binary: no prebuilt fits this machine; building it from source runs the crate's build scripts and proc-macros here, so you will be asked first (--allow-build consents, --no-build skips it)`;
  const r = step.outcome?.record;
  if (!r) return undefined;
  const how =
    r.binary_digest_source === 'crate'
      ? 'a digest inside the crate'
      : r.binary_digest_source === 'signature'
        ? "the crate's minisign key"
        : "the release host's .sha256 only (weaker)";
  return `server binary: prebuilt ${r.binary_target ?? ''} from ${step.outcome?.url ?? '?'}, verified with ${how}${r.binary_signature && r.binary_digest_source === 'crate' ? ' and a minisign signature' : ''}`;
}
