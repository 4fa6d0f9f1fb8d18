/**
 * Download a `.crate` and prove it is the one the index names: the bytes go to
 * a `.partial` file while being hashed, the SHA-256 is compared with the
 * validated `cksum`, and only a match is renamed to `.crate` for unpacking.
 * Nothing is ever unpacked from a stream (hardening B10 and "Runtime traps").
 */
import { removeWork } from '../../fs/custody.js';
import { renameSync } from 'node:fs';
import { cacheKey, readCachedInto, storeInCache } from '../../cache/download-cache.js';
import type { Context } from '../../context.js';
import { YepError } from '../../errors.js';
import { downloadUrl } from '../../net/transport.js';
import { buildDownloadUrl } from './dl-url.js';
import { isInstallableCksum } from './index-lines.js';
import type { RegistryConfig } from './registry-config.js';

/** crates.io caps uploads at 10 MiB; mirrors may hold bigger crates, but not this big. */
const DEFAULT_MAX_CRATE_BYTES = 512 * 1024 * 1024;

export interface VerifiedCrate {
  file: string;
  size: number;
  url: string;
}

export interface CrateRef {
  name: string;
  vers: string;
  cksum: string;
}

function maxCrateBytes(env: Record<string, string | undefined>): number {
  const n = Number(env.YEP_EXT_MAX_CRATE_BYTES);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : DEFAULT_MAX_CRATE_BYTES;
}

/**
 * Download `crate` into `${base}.crate` (via `${base}.crate.partial`) and verify it.
 * Throws E_INTEGRITY on a mismatch (the partial file is removed).
 */
export async function downloadVerifiedCrate(ctx: Context, config: RegistryConfig, crate: CrateRef, base: string): Promise<VerifiedCrate> {
  const label = `${crate.name} ${crate.vers}`;
  if (!isInstallableCksum(crate.cksum)) {
    // Never "install unverified": a missing or malformed cksum ends it here (B11).
    throw new YepError('E_INTEGRITY', `${label} has no valid checksum (expected 64 lowercase hex digits); refusing to install it unverified.`, {
      details: { crate: crate.name, version: crate.vers },
    });
  }
  const url = buildDownloadUrl(config.dl, crate);
  const partial = `${base}.crate.partial`;
  const file = `${base}.crate`;
  // The shared download cache, keyed by the pinned digest (cache/download-cache.ts).
  const cached = await readCachedInto(ctx, crate.cksum, file);
  if (cached !== undefined) return { file, size: cached, url: 'cache' };
  try {
    const got = await downloadUrl(ctx, url, partial, {
      what: `Downloading ${label}`,
      maxBytes: maxCrateBytes(ctx.env),
      progressLabel: `Downloading ${label}`,
    });
    if (got.sha256 !== crate.cksum) {
      throw new YepError('E_INTEGRITY', `${label}: the download does not match the registry checksum; nothing was unpacked.`, {
        hint: 'The file was corrupted in transit or replaced on the server. Try again; if it persists, report it to the registry.',
        details: { crate: crate.name, version: crate.vers, url: got.url, wanted: crate.cksum, got: got.sha256, size: got.size },
      });
    }
    // Both in this run's own stage: the verified download takes its final name.
    renameSync(partial, file);
    // Linked, not copied: the .crate is only read (unpacked) and then deleted.
    await storeInCache(ctx, crate.cksum, file, cacheKey(crate.cksum), 'link');
    return { file, size: got.size, url: got.url };
  } catch (e) {
    await removeWork(partial);
    throw e;
  }
}
