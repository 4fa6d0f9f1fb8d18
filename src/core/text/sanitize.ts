/**
 * Strings from packages and servers reach a terminal only through here: control
 * characters (ANSI escapes, BEL, backspace, bidi overrides, zero-width characters) are shown as visible
 * escapes so a manifest cannot repaint or hide what the user approves (hardening D29).
 * Its cut is the one of text/redact.ts: `secrets` and credentials in URLs are
 * redacted from the whole text first, and what the cut leaves of a secret is masked.
 */
import { redactText, truncateRedacted } from './redact.js';

const CONTROL_RE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

export function sanitize(text: string, options: { keepNewlines?: boolean; max?: number; secrets?: readonly string[] } = {}): string {
  const secrets = options.secrets ?? [];
  let s = redactText(text, secrets).replace(CONTROL_RE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (!options.keepNewlines) s = s.replace(/\n/g, '\\n');
  return truncateRedacted(s, options.max ?? 2000, secrets, { marker: (total, kept) => `…(${total - kept} more)` });
}
