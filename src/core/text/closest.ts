/**
 * "Did you mean …?": the candidates a mistyped word was probably meant to be
 * (commands, flags, installed extension names). Edit distance from
 * fastest-levenshtein, as @oclif/plugin-not-found uses; a candidate counts only
 * within a typo's reach of the word, so an unrelated word gets no suggestion
 * rather than a random one.
 */
import { distance } from 'fastest-levenshtein';

/** How far a word of this length may be from a candidate and still be a typo of it. */
function reach(word: string): number {
  return word.length < 4 ? 1 : word.length < 9 ? 2 : 3;
}

/**
 * Candidates close to `word`, nearest first (ties keep the candidates' order),
 * at most `limit`. A candidate that starts with the word (`inst` → `install`)
 * counts as close when the word has at least three characters.
 */
export function closestMatches(word: string, candidates: Iterable<string>, limit = 1): string[] {
  const w = word.toLowerCase();
  if (w === '') return [];
  const scored: Array<{ c: string; d: number; i: number }> = [];
  let i = 0;
  for (const c of new Set(candidates)) {
    const lc = c.toLowerCase();
    if (lc === w) continue;
    const d = distance(w, lc);
    if (d <= reach(w) || (w.length >= 3 && lc.startsWith(w))) scored.push({ c, d, i: i++ });
  }
  return scored
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, limit)
    .map((s) => s.c);
}
