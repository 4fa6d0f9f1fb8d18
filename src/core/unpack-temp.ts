/**
 * TEMPORARY STAND-IN — DROP AT MERGE. The real `src/core/unpack.ts` (branch
 * `unpack`) owns safe archive unpacking; this minimal version exists only so the
 * crates branch can run its end-to-end tests before that branch lands. Same
 * signature as the real one; after the merge, import `unpackCrate` from
 * `../unpack.js` in sources/crates-io.ts and delete this file.
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { YepError } from './errors.js';

export interface UnpackOptions {
  crateName: string;
  version: string;
  compressedSize: number;
  signal?: AbortSignal;
}

export async function unpackCrate(archiveFile: string, into: string, opts: UnpackOptions): Promise<void> {
  const prefix = `${opts.crateName}-${opts.version}/`;
  const problems: string[] = [];
  tar.t({
    file: archiveFile,
    sync: true,
    strict: true,
    onReadEntry: (e) => {
      const p = e.path;
      if (e.type !== 'File' && e.type !== 'Directory') problems.push(`${p}: ${e.type} entries are not allowed`);
      else if (!p.startsWith(prefix)) problems.push(`${p}: outside ${prefix}`);
      else if (p.split('/').includes('..') || p.includes('\\')) problems.push(`${p}: unsafe path`);
    },
  });
  if (problems.length > 0) throw new YepError('E_UNSAFE_PACKAGE', `${opts.crateName} ${opts.version}: ${problems[0]}.`);
  mkdirSync(into, { mode: 0o755 });
  tar.x({ file: archiveFile, cwd: into, sync: true, strict: true, strip: 1, filter: (p) => p !== `${prefix}.cargo-ok` });
  normalizeModes(into);
}

function normalizeModes(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) {
      chmodSync(p, 0o755);
      normalizeModes(p);
    } else chmodSync(p, st.mode & 0o111 ? 0o755 : 0o644);
  }
}
