/**
 * YEP versions are `MAJOR.MINOR`; two peers are compatible when their majors
 * match (minors are additive). A bare `MAJOR` is read as `MAJOR.0`.
 */
import { PROTOCOL_VERSION } from './protocol.js';

export interface ProtocolVersion {
  major: number;
  minor: number;
}

const VERSION_RE = /^(\d{1,9})(?:\.(\d{1,9}))?$/;

/** Parse `MAJOR.MINOR` (or `MAJOR`); undefined for anything else. */
export function parseProtocolVersion(text: string): ProtocolVersion | undefined {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: m[2] === undefined ? 0 : Number(m[2]) };
}

export type Compatibility = { compatible: true; ours: ProtocolVersion; theirs: ProtocolVersion; note?: string } | { compatible: false; reason: string };

/**
 * Whether a peer speaking `theirs` can talk to us (`ours`, default the v1 we
 * implement). A newer minor is compatible (unknown fields are ignored); a
 * different major is not.
 */
export function checkCompatibility(theirs: string, ours: string = PROTOCOL_VERSION): Compatibility {
  const t = parseProtocolVersion(theirs);
  const o = parseProtocolVersion(ours);
  if (!o) return { compatible: false, reason: `our version ${JSON.stringify(ours)} is not MAJOR.MINOR` };
  if (!t) return { compatible: false, reason: `${JSON.stringify(theirs)} is not a MAJOR.MINOR version` };
  if (t.major !== o.major) return { compatible: false, reason: `major ${t.major} differs from ours (${o.major}.x)` };
  if (t.minor > o.minor) return { compatible: true, ours: o, theirs: t, note: `newer minor ${t.major}.${t.minor}; fields we do not know are ignored` };
  return { compatible: true, ours: o, theirs: t };
}
