/**
 * When two archive paths are "the same name" on some file system a user installs
 * on. Refusing a colliding pair is always safe (a legitimate crate holding one is
 * vanishingly rare), so the rule is a superset of every case-insensitive file
 * system we know of (docs/unpack.md "Collisions"):
 *
 *   key(name) = NFD(fold(NFD(upper(NFD(name)))))
 *
 * where `fold` is full Unicode case folding, CaseFolding.txt status C and F (from
 * `unicode-case-folding`, Unicode 17; `ß`, `ẞ` and `ss` are one name, as are `ſ`
 * and `s`, `ς` and `σ`, `ϐ` and `β`), NFD around each step makes it
 * normalisation-insensitive (APFS, HFS+) and canonical-caseless in Unicode's sense
 * (D145), and the upper-casing first adds what Windows' NTFS upcase table joins
 * and full folding does not (dotless `ı` with `I` and `i`). scripts/check-fold-superset.mjs
 * checks that claim against the UCD files.
 */
import { caseFold } from 'unicode-case-folding';

const ASCII = /^[\x00-\x7f]*$/;

/** The collision key of a path or path component (see the module comment). */
export function foldName(path: string): string {
  // Every ASCII name folds to its lower case; most crate paths are ASCII.
  if (ASCII.test(path)) return path.toLowerCase();
  return caseFold(path.normalize('NFD').toUpperCase().normalize('NFD')).normalize('NFD');
}
