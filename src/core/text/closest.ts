/**
 * "Did you mean …?": the candidates a mistyped word was probably meant to be
 * (commands, flags, installed extension names). Edit distance from
 * fastest-levenshtein, as @oclif/plugin-not-found uses, except that two
 * neighbouring letters typed the wrong way round (`zhs`, `isntall`) are one
 * typo, not two (as cargo's and git's suggestions count them); a candidate
 * counts only within a typo's reach of the word, so an unrelated word gets no
 * suggestion rather than a random one.
 */
import { distance as levenshtein } from 'fastest-levenshtein';

/** Levenshtein distance, with one swap of adjacent characters counted as one edit. */
function distance(a: string, b: string): number {
  const d = levenshtein(a, b);
  if (d !== 2 || a.length !== b.length) return d;
  const diff: number[] = [];
  for (let i = 0; i < a.length && diff.length <= 2; i++) if (a[i] !== b[i]) diff.push(i);
  const [i, j] = diff;
  return diff.length === 2 && j === i! + 1 && a[i!] === b[j] && a[j] === b[i!] ? 1 : d;
}

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
