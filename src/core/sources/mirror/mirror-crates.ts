/**
 * One locked crate into the mirror: its index line and its `.crate`.
 *
 * The line is copied byte-for-byte from the origin's index file (so `cksum` and
 * every other field stay the registry's) and must carry the lock's cksum; the
 * mirror's index file holds only locked versions, one line each, in the order they
 * were added. The `.crate` is downloaded from the origin (or copied from a
 * `file://` one) and verified against cksum, then streamed into the mirror and
 * hashed again while copied (renamed into place only on a match); a `.crate`
 * already in the mirror is re-hashed (streamed), never trusted by name. A `.crate`
 * is never held whole in memory.
 */
import { removeWork } from '../../fs/custody.js';
import { dirname, join } from 'node:path';
import type { Context } from '../../context.js';
import { YepError } from '../../errors.js';
import { indexFor, type CrateRecord } from '../crates-io.js';
import { downloadVerifiedCrate } from '../crates-io/download.js';
import { fetchIndexText } from '../crates-io/index-client.js';
import { CKSUM_RE } from '../crates-io/index-lines.js';
import { loadRegistryConfig } from '../crates-io/registry-config.js';
import { copyPinnedFile, crateFileRel, holdsPinnedFile, indexFileRel, readMirrorFile } from './mirror-tree.js';
import { ensureDir, writeFileAtomic } from '../../fs/fs-atomic.js';

export interface MirroredCrate {
  name: string;
  crate: string;
  version: string;
  cksum: string;
  /** The origin index it was copied from. */
  origin: string;
  index_file: string;
  file: string;
  /** True when this run added the `.crate` (false: it was already there, re-verified). */
  added: boolean;
}

interface IndexLine {
  text: string;
  name: string;
  vers: string;
  cksum: unknown;
}

function splitLines(body: string): IndexLine[] {
  const out: IndexLine[] = [];
  for (const text of body.split('\n')) {
    if (text.trim() === '') continue;
    try {
      const o = JSON.parse(text) as { name?: unknown; vers?: unknown; cksum?: unknown };
      if (typeof o.name === 'string' && typeof o.vers === 'string') out.push({ text, name: o.name, vers: o.vers, cksum: o.cksum });
    } catch {
      // A line yep-ext cannot read is not copied (the origin's other lines are not ours to judge).
    }
  }
  return out;
}

/** Add the locked line to the mirror's index file for the crate (write-once per version). */
async function addIndexLine(root: string, rel: string, line: IndexLine, label: string): Promise<void> {
  const existing = readMirrorFile(root, rel, 64 * 1024 * 1024)?.toString('utf8') ?? '';
  const lines = splitLines(existing);
  const same = lines.find((l) => l.vers === line.vers);
  if (same) {
    if (same.text === line.text) return;
    throw new YepError('E_INTEGRITY', `${label}: the mirror's index line differs from the origin's; a mirrored version is never rewritten.`, {
      hint: 'The origin changed a published index line, or the mirror was altered. Find out which before trusting either.',
      details: { file: rel, mirror: same.text, origin: line.text },
    });
  }
  const text = `${existing}${existing === '' || existing.endsWith('\n') ? '' : '\n'}${line.text}\n`;
  await ensureDir(dirname(join(root, rel)));
  await writeFileAtomic(join(root, rel), text, { mode: 0o644, what: 'The mirror index file' });
}

export async function mirrorCrate(ctx: Context, root: string, entryName: string, rec: CrateRecord, scratch: string): Promise<MirroredCrate> {
  const origin = indexFor(ctx, rec.index);
  const label = `${entryName} (${rec.crate_name} ${rec.version})`;
  const fetched = await fetchIndexText(ctx, origin, rec.crate_name);
  const line = fetched ? splitLines(fetched.body).find((l) => l.vers === rec.version) : undefined;
  if (!line) {
    throw new YepError('E_NOT_FOUND', `${label}: the origin index ${origin} has no line for the locked version.`, {
      details: { crate: rec.crate_name, version: rec.version, index: origin },
    });
  }
  if (typeof line.cksum !== 'string' || !CKSUM_RE.test(line.cksum)) throw new YepError('E_INTEGRITY', `${label}: the origin's index line has no valid cksum.`);
  if (rec.cksum !== undefined && rec.cksum !== line.cksum) {
    throw new YepError(
      'E_INTEGRITY',
      `${label}: the origin index now gives cksum ${line.cksum.slice(0, 16)}…, but the lock pins ${rec.cksum.slice(0, 16)}…. A published version must never change.`,
      {
        details: { wanted: rec.cksum, got: line.cksum },
      },
    );
  }
  const cksum = line.cksum;
  const fileRel = crateFileRel(line.name, line.vers);
  const indexRel = indexFileRel(line.name);

  // Streamed both ways (a .crate may be large): a copy already in the mirror is re-hashed
  // in 1 MiB reads, a new one is hashed while it is copied in (mirror-tree.ts).
  let added = false;
  if (!(await holdsPinnedFile(root, fileRel, cksum, label))) {
    const config = await loadRegistryConfig(ctx, origin);
    const base = join(scratch, `${line.name}-${line.vers}`);
    const verified = await downloadVerifiedCrate(ctx, config, { name: line.name, vers: line.vers, cksum }, base);
    try {
      await copyPinnedFile(root, fileRel, verified.file, cksum, label);
      added = true;
    } finally {
      await removeWork(verified.file);
    }
  }
  // The index line last: a mirror never names a .crate it does not hold.
  await addIndexLine(root, indexRel, line, label);
  return { name: entryName, crate: line.name, version: line.vers, cksum, origin, index_file: indexRel, file: fileRel, added };
}
