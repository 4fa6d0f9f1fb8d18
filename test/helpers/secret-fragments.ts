/** Leak detection for redaction tests: a secret leaks when any 6-character piece of it is shown. */

/** Every 6-character piece of `secret` found in `text` (a secret leaks if any is). */
export function secretFragments(text: string, secret: string, min = 6): string[] {
  const found = new Set<string>();
  for (let i = 0; i + min <= secret.length; i++) {
    const piece = secret.slice(i, i + min);
    if (text.includes(piece)) found.add(piece);
  }
  return [...found];
}
