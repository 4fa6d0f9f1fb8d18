/**
 * Percent-decoding as Rust's `percent_decode` and git do it: each valid `%XX` is its byte, an
 * invalid escape (`%zz`, a trailing `%`) stays as written. decodeURIComponent throws on the
 * invalid escape instead, which made text from a manifest or a URL end in an internal error.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `text` decoded; undefined when the decoded bytes are not UTF-8. */
export function percentDecoded(text: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i]!, 'utf8'));
  }
  try {
    return utf8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}
