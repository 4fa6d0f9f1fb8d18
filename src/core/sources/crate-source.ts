/**
 * The crate kind: a crate in a sparse cargo index (crates.io by default), pinned
 * by version and the index's cksum. `candidates` resolves the requirement the user
 * typed, `upstream` the recorded one, `fetchExactly` downloads the locked version
 * and verifies it against the locked cksum. The heavy half (http, the .crate
 * unpacker) lives in ./crates-io.ts and loads only on a fetch.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { YepError } from '../errors.js';
import { DEFAULT_INDEX_URL, normalizeIndexUrl } from '../context.js';
import { CRATE_PREFIX } from '../package/names.js';
import type { CrateRecord } from './crates-io.js';
import type { Source } from './source.js';
import { holdsManifest, type CrateSpec } from './spec.js';
import { compareVersions, parseCargoRequirement, parseCargoVersion } from './crates-io/cargo-version.js';
import { indexFor } from './crates-io/index-for.js';
import { requirementSelects } from './crates-io/pick-version.js';
import { sha256Hex } from '../fs/hash.js';

export type { CrateRecord };

const crates = () => import('./crates-io.js');

/** The record when `rec` is a crate install (search marks installed results with it). */
export function asCrateRecord(rec: { type: string }): CrateRecord | undefined {
  return rec.type === crateSource.kind ? (rec as CrateRecord) : undefined;
}

const foldCrate = (name: string): string => name.toLowerCase().replace(/_/g, '-');

export const crateSource: Source<'crate', CrateSpec, CrateRecord> = {
  kind: 'crate',
  noun: 'crate',
  linked: false,
  buildable: true,

  recordKeys: { required: ['crate_name', 'version'], optional: ['cksum', 'requirement', 'index'] },

  describe: (rec) => `crates.io:${rec.crate_name}@${rec.version}`,
  label(rec) {
    const index = normalizeIndexUrl(typeof rec.index === 'string' ? rec.index : DEFAULT_INDEX_URL);
    if (index === DEFAULT_INDEX_URL) return crateSource.describe(rec);
    // The index's host (a local mirror directory: its path), so a mirror install does not pass for crates.io.
    let where = index;
    try {
      const url = new URL(index);
      where = url.host || url.pathname.replace(/\/$/, '');
    } catch {
      // Not a URL: shown as recorded.
    }
    return `${where}:${rec.crate_name}@${rec.version}`;
  },
  // crates.io treats names case-insensitively.
  sameOrigin: (a, b) => a.crate_name.toLowerCase() === b.crate_name.toLowerCase(),
  pin: (rec) => rec.version,
  originFacts: (rec) => ({ index_url: normalizeIndexUrl(typeof rec.index === 'string' ? rec.index : DEFAULT_INDEX_URL) }),
  fetchPlaces(ctx, rec) {
    const used = indexFor(ctx, typeof rec.index === 'string' ? rec.index : undefined);
    return used === crateSource.originFacts!(rec).index_url
      ? []
      : [{ index_url: used, through: `the index chosen for this run (--index / YEP_EXT_INDEX) ${used}` }];
  },
  // A crate is resolved in the run's index, which its record then names.
  specPlaces: (ctx) => ({ origin: { index_url: ctx.indexUrl }, via: [] }),
  // A bare or `=` version; cargo would read `1.2.3` as `^1.2.3`, the host reads it as exact.
  pinnedExactly: (rec) => /^=?\d/.test(rec.requirement ?? '='),
  follows: (rec) => rec.requirement ?? '',
  withFollows: ({ requirement: _old, ...rec }, like) => (like.requirement !== undefined ? { ...rec, requirement: like.requirement } : rec),
  updateReaches(previous, next) {
    if (!crateSource.sameOrigin(previous, next) || crateSource.pinnedExactly(previous)) return false;
    // `update` asks the index the crate came from: a version from another index (a mirror) is a change of source.
    const indexOf = (rec: CrateRecord) => normalizeIndexUrl(typeof rec.index === 'string' ? rec.index : DEFAULT_INDEX_URL);
    if (indexOf(previous) !== indexOf(next)) return false;
    const [from, to] = [parseCargoVersion(previous.version), parseCargoVersion(next.version)];
    if (!from || !to || compareVersions(to, from) <= 0) return false;
    // The picker's own "within the requirement" rule (no requirement: the newest stable).
    try {
      return requirementSelects(previous.requirement === undefined ? undefined : parseCargoRequirement(previous.requirement), to);
    } catch {
      return false;
    }
  },
  checkRepin(previous, next, name) {
    // crates.io versions are immutable: the same crate at the same version with other
    // bytes means a republish, a tampered mirror or a compromised registry.
    const [a, b] = [previous.source, next.source];
    if (!crateSource.sameOrigin(a, b) || a.version !== b.version) return;
    if (a.cksum !== undefined && b.cksum !== undefined && a.cksum !== b.cksum) {
      throw new YepError(
        'E_INTEGRITY',
        `${name}: ${b.crate_name} ${b.version} now has checksum ${b.cksum.slice(0, 16)}…, but it was installed with ${a.cksum.slice(0, 16)}…. A published version must never change.`,
        {
          hint: 'Do not trust this registry answer: check the registry or mirror. If the change is legitimate, remove the extension and install it again.',
          details: { wanted: a.cksum, got: b.cksum },
        },
      );
    }
  },

  checkSpec(spec) {
    if (spec.requirement !== undefined) parseCargoRequirement(spec.requirement);
  },
  // The crate's name as cargo compares it (case and - / _ folded).
  namesInstalled: (spec, rec) => foldCrate(spec.crate) === foldCrate(rec.crate_name),

  preflight(ctx, spec, cwd) {
    // Host flaw fixed: a bare word is a crate, but say so when a same-named directory exists.
    const text = spec.raw.trim();
    if (text.startsWith('crates.io:')) return;
    const word = text.split('@')[0] ?? text;
    const crate = word.startsWith(CRATE_PREFIX) ? word : `${CRATE_PREFIX}${word}`;
    try {
      if (!statSync(join(cwd, word)).isDirectory()) return;
      // Only a directory that is a package is offered as one; one holding packages (`./examples`) offers those.
      if (holdsManifest(join(cwd, word))) {
        ctx.log.warn(`"${word}" means the crate ${crate}, not the directory ./${word}. To install the directory, run \`yep-ext install ./${word}\`.`);
        return;
      }
      const inside = packagesIn(join(cwd, word));
      if (inside.length > 0) {
        ctx.log.warn(
          `"${word}" means the crate ${crate}; the directory ./${word} holds packages: install one by its path, e.g. ${inside.map((p) => `\`yep-ext install ./${word}/${p}\``).join(', ')}.`,
        );
      }
    } catch {
      // No such directory, or not readable: nothing to say.
    }
  },
  fetchExactly: async (ctx, rec, into) => (await crates()).fetchCrateExact(ctx, rec, into),
  candidates: async (ctx, spec) => (await crates()).crateCandidates(ctx, spec),
  upstream: async (ctx, rec) => (await crates()).crateUpstream(ctx, rec),
  registryInfo: async (ctx, spec) => ({ name: spec.crate, registry: await (await crates()).crateRegistryInfo(ctx, spec.crate) }),
  async mirror(ctx, target, name, rec) {
    // The locked index line byte-for-byte and the verified .crate (mirror/mirror-crates.ts).
    const { mirrorCrate } = await import('./mirror/mirror-crates.js');
    const m = await mirrorCrate(ctx, target, name, rec);
    return {
      section: 'crates',
      report: m,
      record: { crate: m.crate, version: m.version, cksum: m.cksum, file: m.file, index_file: m.index_file, origin: m.origin },
      same: (c) => c.file === m.file,
      files: { [m.file]: m.cksum, [m.index_file]: sha256Hex(target.read(m.index_file)!) },
    };
  },
};

/** Up to three package directories (holding a plugin.json) directly inside `dir`, by name. */
function packagesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && holdsManifest(join(dir, e.name)))
    .map((e) => e.name)
    .sort()
    .slice(0, 3);
}
