/**
 * "Nothing on disk changed": every path under a home's config directory as sorted
 * lines (`dir/ mode`, `link -> text`, `file mode sha256`), the download cache aside
 * (and so the store directory itself, which the cache creates in an empty home).
 * Stricter than home-state.ts on purpose: the stat signatures and empty
 * dot-directories count too (a dry run or a refusal must not make them).
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

export function configTree(dir: string, rel = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      if (r === 'extensions/.yep-cache') return [];
      const st = lstatSync(p);
      if (st.isSymbolicLink()) return [`${r} -> ${readlinkSync(p)}`];
      if (st.isDirectory()) return [...(r === 'extensions' ? [] : [`${r}/ ${(st.mode & 0o777).toString(8)}`]), ...configTree(p, r)];
      return [`${r} ${(st.mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`];
    });
}
