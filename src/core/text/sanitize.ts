/**
 * Strings from packages and servers reach a terminal only through here: control
 * characters (ANSI escapes, BEL, backspace, bidi overrides, zero-width and other invisible
 * characters) are shown as visible escapes, and so are look-alike letters inside a Latin
 * word, so a manifest cannot repaint, hide or disguise what the user approves (hardening D29).
 * Its cut is the one of text/redact.ts: `secrets` and credentials in URLs are
 * redacted from the whole text first, and what the cut leaves of a secret is masked.
 */
import { redactText, truncateRedacted } from './redact.js';

/**
 * The Unicode expressions, built on first use (building one of property classes this large
 * costs more than most runs spend on printable ASCII, which never needs them):
 * - control: what a terminal does not show as itself: controls (but tab and newline), format
 *   characters (bidi overrides and marks, zero-width joiners), every default-ignorable code
 *   point (soft hyphen, Hangul fillers, variation selectors, the tag characters U+E0000-E007F
 *   that spell ASCII only a model reads), line and paragraph separators, private-use,
 *   unassigned and lone surrogate code points;
 * - word: a run of letters, marks, digits: a word whose scripts are judged together;
 * - lookalike: scripts with letters that look like Latin ones (UTS #39 confusables): `Grееts`
 *   with Cyrillic е.
 */
let unicode: { control: RegExp; word: RegExp; lookalike: RegExp; latin: RegExp } | undefined;
function unicodeExpressions(): NonNullable<typeof unicode> {
  unicode ??= {
    control: /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cs}\p{Cn}]/gu,
    word: /[\p{L}\p{M}\p{N}]+/gu,
    lookalike: /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\p{Script=Coptic}\p{Script=Lisu}]/gu,
    latin: /\p{Script=Latin}/u,
  };
  return unicode;
}
const PRINTABLE_ASCII_RE = /^[\t\n\x20-\x7e]*$/;

const escapeChar = (c: string): string => {
  const cp = c.codePointAt(0) as number;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
};

/** In a word that mixes Latin letters with look-alike letters of another script, the look-alikes are shown escaped. */
const unmask = (word: string): string => {
  const { latin, lookalike } = unicodeExpressions();
  return latin.test(word) && word.search(lookalike) >= 0 ? word.replace(lookalike, escapeChar) : word;
};

export function sanitize(text: string, options: { keepNewlines?: boolean; max?: number; secrets?: readonly string[] } = {}): string {
  const secrets = options.secrets ?? [];
  let s = redactText(text, secrets);
  // Printable ASCII holds no character either pass changes (a control is below 0x20 or 0x7f, a
  // look-alike letter is not ASCII): most text skips them, and their Unicode tables are built only for the rest.
  if (!PRINTABLE_ASCII_RE.test(s)) s = s.replace(unicodeExpressions().control, escapeChar).replace(unicodeExpressions().word, unmask);
  if (!options.keepNewlines) s = s.replace(/\n/g, '\\n');
  return truncateRedacted(s, options.max ?? 2000, secrets, { marker: (total, kept) => `…(${total - kept} more)` });
}
