/**
 * One locked crate into the mirror: its index line and its `.crate`.
 *
 * The origin's index file is read by the one index reader install uses
 * (crates-io/index-lines.ts), so the line copied is the one the lock was made from,
 * byte for byte (`cksum` and every other field stay the registry's). It must be the
 * locked version's and carry the lock's cksum, and a file holding a line for another
 * crate is refused, in the origin and in the mirror alike. The mirror's index file
 * holds only locked versions, one line each, in the order they were added. The `.crate` is downloaded from the origin (or copied from a
 * `file://` one) and verified against cksum, then streamed into the mirror and
 * hashed again while copied (renamed into place only on a match); a `.crate`
 * already in the mirror is re-hashed (streamed), never trusted by name. A `.crate`
 * is never held whole in memory.
 */
import { join } from 'node:path';
import type { Context } from '../../context.js';
import { YepError } from '../../errors.js';
import { indexFor, type CrateRecord } from '../crates-io.js';
import { downloadVerifiedCrate } from '../crates-io/download.js';
import { fetchIndexFile } from '../crates-io/index-client.js';
import { type IndexEntry, isInstallableCksum, parseIndexFile } from '../crates-io/index-lines.js';
import { loadRegistryConfig } from '../crates-io/registry-config.js';
import { crateFileRel, holdsPinnedFile, indexFileRel } from './mirror-tree.js';
import type { MirrorPlan } from './mirror-plan.js';
import { sanitize } from '../../text/sanitize.js';

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

/** The refusal of an index file that holds a line naming another crate (`where`: whose file it is). */
function strangerError(label: string, where: string, stranger: string, details: Record<string, unknown>): YepError {
  return new YepError(
    'E_INTEGRITY',
    `${label}: ${where} holds a line for another crate (${sanitize(stranger, { max: 80 })}); nothing was written to the mirror.`,
    {
      hint: 'A registry keeps each crate in a file of its own, so the index was altered. Find out how before trusting it; a mirror that was altered is best built again into a new directory.',
      details: { ...details, line_name: stranger },
    },
  );
}

/**
 * The mirror's index file for the crate with the locked line added (write-once per
 * version). Every line already there must name this crate (a line naming another is a
 * tampered mirror: E_INTEGRITY), and a version already there must be the same line.
 * Returns the new text, or undefined when the line is there already.
 */
function withIndexLine(plan: MirrorPlan, rel: string, line: IndexEntry, label: string): Buffer | undefined {
  const existing = plan.read(rel, 64 * 1024 * 1024)?.toString('utf8') ?? '';
  const held = parseIndexFile(existing, line.name, `the mirror's index file ${rel}`);
  if (held.foreign !== undefined) throw strangerError(label, `the mirror's index file ${rel}`, held.foreign, { file: rel, crate: line.name });
  const same = held.entries.find((l) => l.vers === line.vers);
  if (same) {
    if (same.line === line.line) return undefined;
    throw new YepError('E_INTEGRITY', `${label}: the mirror's index line differs from the origin's; a mirrored version is never rewritten.`, {
      hint: 'The origin changed a published index line, or the mirror was altered. Find out which before trusting either.',
      details: { file: rel, mirror: same.line, origin: line.line },
    });
  }
  return Buffer.from(`${existing}${existing === '' || existing.endsWith('\n') ? '' : '\n'}${line.line}\n`);
}

/**
 * Check and stage one locked crate (mirror-plan.ts: nothing is written into the mirror
 * before every entry passed). The origin's line for the locked version must name the
 * locked crate and version and carry the lock's cksum; the `.crate` is downloaded into
 * scratch and verified against that cksum, and hashed again while copied into place.
 */
export async function mirrorCrate(ctx: Context, plan: MirrorPlan, entryName: string, rec: CrateRecord): Promise<MirroredCrate> {
  const origin = indexFor(ctx, rec.index);
  const label = `${entryName} (${rec.crate_name} ${rec.version})`;
  // Read as install reads it (index-lines.ts), so the mirror copies the very line the lock was made from.
  const index = await fetchIndexFile(ctx, origin, rec.crate_name);
  if (index?.foreign !== undefined) {
    throw strangerError(label, `the origin's index file for ${rec.crate_name}`, index.foreign, { crate: rec.crate_name, version: rec.version, index: origin });
  }
  const line = index?.entries.find((l) => l.vers === rec.version);
  if (!line) {
    throw new YepError('E_NOT_FOUND', `${label}: the origin index ${origin} has no line for the locked version.`, {
      details: { crate: rec.crate_name, version: rec.version, index: origin },
    });
  }
  if (!isInstallableCksum(line.cksum)) throw new YepError('E_INTEGRITY', `${label}: the origin's index line has no valid cksum.`);
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
  // in 1 MiB reads, a new one is verified in scratch now and hashed again while copied in.
  let added = false;
  if (!(await holdsPinnedFile(plan.root, fileRel, cksum, label))) {
    const config = await loadRegistryConfig(ctx, origin);
    const base = join(plan.scratch, `${line.name}-${line.vers}`);
    const verified = await downloadVerifiedCrate(ctx, config, { name: line.name, vers: line.vers, cksum }, base);
    plan.stageCopy(fileRel, verified.file, cksum, label);
    added = true;
  }
  // The index line after the .crate (the place phase writes .crates first): a mirror never names a .crate it does not hold.
  const text = withIndexLine(plan, indexRel, line, label);
  if (text !== undefined) plan.stageFile(indexRel, text);
  return { name: entryName, crate: line.name, version: line.vers, cksum, origin, index_file: indexRel, file: fileRel, added };
}
