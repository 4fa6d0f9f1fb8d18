/**
 * plugin.json validated with the zod schemas (manifest-schema.ts), synchronously:
 * the library API (`validateManifest`, `parseManifest`) and the path a manifest
 * takes when the quick verdict of manifest.ts rejects it (loaded lazily there, so a
 * valid store never loads zod). Same verdict either way: test/unit/manifest-schema.test.ts.
 */
import { manifestError, manifestOf, manifestValue, type Manifest } from './manifest.js';
import { manifestProblems } from './manifest-schema.js';

/**
 * Validate a parsed plugin.json value. Returns the manifest, or the problems (at
 * most MAX_PROBLEMS of them) and how many there are in all.
 */
export function validateManifest(value: unknown): { manifest: Manifest } | { problems: string[]; total: number } {
  const { problems, total } = manifestProblems(value);
  return total > 0 ? { problems, total } : { manifest: manifestOf(value) };
}

/** The manifest of a parsed value, or E_MANIFEST listing every problem. `where` names the package. */
function manifestFromValue(value: unknown, where: string): Manifest {
  const result = validateManifest(value);
  if ('problems' in result) throw manifestError(where, result.problems, result.total);
  return result.manifest;
}

/** Parse plugin.json text; throws E_MANIFEST listing every problem. `where` names the package. */
export function parseManifest(text: string, where: string): Manifest {
  return manifestFromValue(manifestValue(text, where), where);
}
