/**
 * Where a TOML document failed to parse, for messages that point at the spot
 * (`extensions.lock:3:5`, as compilers print it, so terminals make it a link)
 * and for `--json` error details. smol-toml's TomlError carries the line and
 * column (1-based); its message's first line is the reason. The rest of that
 * message (a code frame quoting the document) is never used: users paste
 * tokens into these files.
 */

export interface TomlPosition {
  line: number;
  column: number;
}

/** The reason (first line, without smol-toml's prefix) and, when known, the position. */
export function tomlErrorAt(e: unknown): { reason: string; at?: TomlPosition } {
  const err = e as { line?: unknown; column?: unknown; message?: unknown };
  const message = typeof err?.message === 'string' ? err.message : String(e);
  const reason = (message.split('\n')[0] ?? '').replace(/^Invalid TOML document: /, '') || 'invalid TOML';
  if (typeof err?.line !== 'number') return { reason };
  return { reason, at: { line: err.line, column: typeof err.column === 'number' ? err.column : 1 } };
}

/** `file:line:column`. */
export function formatPosition(file: string, at: TomlPosition): string {
  return `${file}:${at.line}:${at.column}`;
}

/** The 1-based line of the `n`-th (1-based) `[[table]]` header, when there is one (semantic errors point at it). */
export function arrayTableLine(text: string, table: string, n: number): number | undefined {
  const header = new RegExp(`^[ \\t]*\\[\\[[ \\t]*${table}[ \\t]*\\]\\]`);
  let seen = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (header.test(lines[i]!) && ++seen === n) return i + 1;
  }
  return undefined;
}
