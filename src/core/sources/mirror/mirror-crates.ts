/**
 * One locked crate into the mirror: its index line and its `.crate`.
 *
 * The line is copied byte-for-byte from the origin's index file (so `cksum` and
 * every other field stay the registry's) and must name the locked crate and
 * version and carry the lock's cksum; the
 * mirror's index file holds only locked versions, one line each, in the order they
 * were added. The `.crate` is downloaded from the origin (or copied from a
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
import { fetchIndexText } from '../crates-io/index-client.js';
import { CKSUM_RE } from '../crates-io/index-lines.js';
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

/** Whether two spellings name one crate (crates.io: case-insensitive, `-` and `_` alike). */
function sameCrate(a: string, b: string): boolean {
  const norm = (n: string): string => n.toLowerCase().replace(/_/g, '-');
  return norm(a) === norm(b);
}

/**
 * The mirror's index file for the crate with the locked line added (write-once per
 * version). Every line already there must name this crate (a line naming another is a
 * tampered mirror: E_INTEGRITY), and a version already there must be the same line.
 * Returns the new text, or undefined when the line is there already.
 */
function withIndexLine(plan: MirrorPlan, rel: string, crate: string, line: IndexLine, label: string): Buffer | undefined {
  const existing = plan.read(rel, 64 * 1024 * 1024)?.toString('utf8') ?? '';
  const lines = splitLines(existing);
  const stranger = lines.find((l) => !sameCrate(l.name, crate));
  if (stranger) {
    throw new YepError(
      'E_INTEGRITY',
      `${label}: the mirror's index file ${rel} holds a line for another crate (${sanitize(stranger.name, { max: 80 })}); nothing was written.`,
      {
        hint: 'The mirror was altered. Find out how before trusting it; build the mirror into a new directory to start over.',
        details: { file: rel, crate, line: stranger.text },
      },
    );
  }
  const same = lines.find((l) => l.vers === line.vers);
  if (same) {
    if (same.text === line.text) return undefined;
    throw new YepError('E_INTEGRITY', `${label}: the mirror's index line differs from the origin's; a mirrored version is never rewritten.`, {
      hint: 'The origin changed a published index line, or the mirror was altered. Find out which before trusting either.',
      details: { file: rel, mirror: same.text, origin: line.text },
    });
  }
  return Buffer.from(`${existing}${existing === '' || existing.endsWith('\n') ? '' : '\n'}${line.text}\n`);
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
  const fetched = await fetchIndexText(ctx, origin, rec.crate_name);
  const lines = fetched ? splitLines(fetched.body).filter((l) => l.vers === rec.version) : [];
  const line = lines[0];
  if (!line) {
    throw new YepError('E_NOT_FOUND', `${label}: the origin index ${origin} has no line for the locked version.`, {
      details: { crate: rec.crate_name, version: rec.version, index: origin },
    });
  }
  // The line is placed in the locked crate's index file and names the .crate to fetch: it must be that
  // crate's (as the registry spells it; crates.io names match without case, `-` and `_` alike).
  if (!sameCrate(line.name, rec.crate_name)) {
    throw new YepError(
      'E_INTEGRITY',
      `${label}: the origin's index line for ${rec.crate_name} ${rec.version} names another crate (${sanitize(line.name, { max: 80 })}); nothing was written to the mirror.`,
      {
        hint: 'Do not trust this index: a registry never lists one crate under another name. Check the registry or the mirror you mirror from.',
        details: { crate: rec.crate_name, version: rec.version, line_name: line.name, index: origin },
      },
    );
  }
  // Two different lines for one version: which one is the published crate cannot be told, and a mirror copies one line byte for byte.
  if (lines.some((l) => l.text !== line.text)) {
    throw new YepError(
      'E_INTEGRITY',
      `${label}: the origin index lists ${rec.crate_name} ${rec.version} more than once, with different lines; a published version has one. Nothing was written to the mirror.`,
      {
        hint: 'Do not trust this index: a registry never publishes a version twice. Check the registry or the mirror you mirror from.',
        details: { crate: rec.crate_name, version: rec.version, lines: lines.length, index: origin },
      },
    );
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
  const text = withIndexLine(plan, indexRel, line.name, line, label);
  if (text !== undefined) plan.stageFile(indexRel, text);
  return { name: entryName, crate: line.name, version: line.vers, cksum, origin, index_file: indexRel, file: fileRel, added };
}
