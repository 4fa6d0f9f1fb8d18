/**
 * `--accept` (install, update): each value must be a whole grant fingerprint,
 * `sha256:<64 hex>`, as printed after `grant` in the summary; anything else is a
 * usage error instead of the same refusal as no --accept at all. When a value is
 * well-formed but is not the new grant's, the refusal says so and prints the
 * full fingerprint to paste.
 */
import { YepError } from '../core/errors.js';
import { sanitize } from '../core/text/sanitize.js';

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

/** The --accept values, checked (lower-cased hex accepted as typed in upper case). */
export function parseAccept(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((v) => {
    const t = v.trim().toLowerCase();
    if (FINGERPRINT.test(t)) return t;
    throw new YepError('E_USAGE', `--accept takes a grant fingerprint, sha256: and 64 hex digits, not ${JSON.stringify(sanitize(v, { max: 80 }))}.`, {
      hint: 'Copy the whole fingerprint printed after `grant` in the summary (or in the refusal), e.g. --accept sha256:3f1c…(64 digits).',
    });
  });
}

/**
 * The sentence for a refusal when --accept was given but names another grant (another
 * rewording is another grant). The refusal's hint names the new fingerprint: once.
 */
export function acceptMismatch(accepted: readonly string[], fingerprint: string): string | undefined {
  if (accepted.length === 0 || accepted.includes(fingerprint)) return undefined;
  const passed = accepted.map((a) => `${a.slice(0, 'sha256:'.length + 12)}…`).join(', ');
  return `the fingerprint you passed (${passed}) is not the new grant's`;
}
