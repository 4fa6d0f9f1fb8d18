/**
 * The `.crate` download URL from config.json's `dl` (crates-io.md "Sparse index"):
 * five markers, and with none present `/{crate}/{version}/download` is appended.
 * Values are substituted raw, as cargo does (`+build` stays `+`).
 */
const MARKERS = ['{crate}', '{version}', '{prefix}', '{lowerprefix}', '{sha256-checksum}'] as const;
import { dirPrefix } from './index-path.js';

export interface DownloadTarget {
  /** Name as written in the index line. */
  name: string;
  /** Raw `vers`. */
  vers: string;
  cksum: string;
}

function hasDlMarkers(dl: string): boolean {
  return MARKERS.some((m) => dl.includes(m));
}

export function buildDownloadUrl(dl: string, target: DownloadTarget): string {
  if (!hasDlMarkers(dl)) return `${dl.replace(/\/$/, '')}/${target.name}/${target.vers}/download`;
  return dl
    .replaceAll('{crate}', target.name)
    .replaceAll('{version}', target.vers)
    .replaceAll('{prefix}', dirPrefix(target.name))
    .replaceAll('{lowerprefix}', dirPrefix(target.name.toLowerCase()))
    .replaceAll('{sha256-checksum}', target.cksum);
}
