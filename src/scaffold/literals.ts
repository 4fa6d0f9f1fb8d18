/**
 * String literals for the generated sources. User text (the `--prompt` value)
 * is embedded in Python, JavaScript and Rust code, so each language gets its own
 * encoder that emits pure ASCII: the literal means exactly the text, whatever
 * quotes, backslashes, newlines or non-Latin characters it holds, and the source
 * file stays valid whatever encoding an editor assumes.
 */

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

const SIMPLE_ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A single-quoted JavaScript string literal (the generated code's quote style). */
export function jsString(text: string): string {
  let out = "'";
  // By UTF-16 code unit: a surrogate pair becomes two \u escapes, which JavaScript reads back as one character.
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const unit = text.charCodeAt(i);
    if (ch === "'") out += "\\'";
    else if (SIMPLE_ESCAPES[ch] && ch !== '"') out += SIMPLE_ESCAPES[ch];
    else if (unit < 0x20 || unit === 0x7f) out += `\\x${hex(unit, 2)}`;
    else if (unit < 0x7f) out += ch;
    else out += `\\u${hex(unit, 4)}`;
  }
  return `${out}'`;
}

/** A double-quoted Python 3 str literal. */
export function pyString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (SIMPLE_ESCAPES[ch]) out += SIMPLE_ESCAPES[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x7f) out += ch;
    // Python does not pair \ud83d\ude00 into one character: astral code points need \U.
    else if (cp <= 0xffff) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

/** A Rust string literal (&'static str). */
export function rustString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (SIMPLE_ESCAPES[ch]) out += SIMPLE_ESCAPES[ch];
    else if (cp < 0x20 || cp >= 0x7f) out += `\\u{${cp.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}
