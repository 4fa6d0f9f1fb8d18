import { isAbsolute, relative, sep } from 'node:path';

/**
 * Whether `p` is `root` or below it, both resolved paths. The one test of containment: a name
 * that only starts with two dots (`..notes.md`) is inside, a `..` component is not.
 */
export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
