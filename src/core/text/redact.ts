/**
 * Secret values never reach output (hardening E37): anything a server echoes
 * (stderr, error messages, tool results) passes through here before a report
 * is built.
 */
export const REDACTED = '[redacted]';

/** Replace every occurrence of each secret value in `text`. Longest first, so a secret containing another is fully hidden. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].filter((v) => v.length > 0).sort((a, b) => b.length - a.length)) out = out.split(s).join(REDACTED);
  return out;
}

/** Deep copy of a JSON-like value with every string redacted. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    // fromEntries defines own properties: a `__proto__` key stays a plain key.
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, secrets), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
