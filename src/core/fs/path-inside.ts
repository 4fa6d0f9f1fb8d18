import { isAbsolute, relative, sep } from 'node:path';

/** An absolute POSIX path with no empty, `.` or `..` component and no trailing `/` (but `/` itself). */
const NORMAL_POSIX = /^\/(?:(?!\.\.?(?:\/|$))[^/]+(?:\/(?!\.\.?(?:\/|$))[^/]+)*)?$/;

/**
 * Whether `p` is `root` or below it, both resolved paths. The one test of containment: a name
 * that only starts with two dots (`..notes.md`) is inside, a `..` component is not.
 * Two normal absolute POSIX paths are compared as text: `list` asks this for every PATH
 * directory of every installed server, and path.relative called that often is optimised by
 * V8 on a background thread, work that costs more than the whole comparison.
 */
export function isInside(root: string, p: string): boolean {
  if (sep === '/' && NORMAL_POSIX.test(root) && NORMAL_POSIX.test(p)) {
    return p === root || root === '/' || (p.startsWith(root) && p.charCodeAt(root.length) === 0x2f);
  }
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
