/**
 * Conformance and leniency over the protocol types. `payloadProblems` says what
 * in a payload breaks the v1 schema (doctor reports it); `decodeLenient` reads
 * a payload the way the protocol asks peers to: a field of the wrong type is
 * treated as missing and defaulted, the rest is kept.
 */
import type { z } from 'zod';
import { ErrorObject, findMethod } from './protocol.js';

/** Human lines for a zod failure: `path: message`. */
function describeIssues(error: z.ZodError, max = 8): string[] {
  const lines = error.issues.slice(0, max).map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  if (error.issues.length > max) lines.push(`…and ${error.issues.length - max} more`);
  return lines;
}

/** Problems of `value` against `schema` (empty when it conforms). */
export function schemaProblems(schema: z.ZodType, value: unknown): string[] {
  const r = schema.safeParse(value);
  return r.success ? [] : describeIssues(r.error);
}

/**
 * Problems of a method payload against the v1 schema. Methods outside the
 * vocabulary and parts without a schema (a tool result) are not checked here.
 */
export function payloadProblems(method: string, part: 'params' | 'result', value: unknown): string[] {
  const schema = findMethod(method)?.[part];
  if (!schema) return [];
  // An absent params member is an empty params object.
  return schemaProblems(schema, part === 'params' && value === undefined ? {} : value);
}

/** Problems of an `error` member against ErrorObject. */
export function errorProblems(value: unknown): string[] {
  return schemaProblems(ErrorObject, value);
}

type Path = PropertyKey[];

function removeAt(root: unknown, path: Path): boolean {
  if (path.length === 0) return false;
  let parent: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return false;
    parent = (parent as Record<PropertyKey, unknown>)[key];
  }
  const last = path[path.length - 1] as PropertyKey;
  if (Array.isArray(parent) && typeof last === 'number') {
    if (last >= parent.length) return false;
    parent.splice(last, 1);
    return true;
  }
  if (typeof parent === 'object' && parent !== null && Object.hasOwn(parent, last)) {
    delete (parent as Record<PropertyKey, unknown>)[last];
    return true;
  }
  return false;
}

/**
 * Parse `value` with `schema`, dropping what does not conform: each offending
 * field is removed (and so defaulted); when the field is required, the object
 * (or array item) holding it goes instead. Returns the decoded value and what
 * was dropped. Falls back to the schema's defaults for a hopeless value.
 */
export function decodeLenient<T extends z.ZodType>(schema: T, value: unknown): { value: z.output<T>; dropped: string[] } {
  const first = schema.safeParse(value);
  if (first.success) return { value: first.data, dropped: [] };
  const dropped = describeIssues(first.error);
  const work: unknown = structuredClone(value);
  let issues = first.error.issues;
  for (let round = 0; round < 32; round++) {
    // Remove deepest paths first so earlier indexes stay valid.
    const paths = issues.map((i) => i.path).sort((a, b) => b.length - a.length);
    let changed = false;
    for (const path of paths) {
      for (let depth = path.length; depth > 0 && !changed; depth--) changed = removeAt(work, path.slice(0, depth));
      if (changed) break;
    }
    if (!changed) break;
    const r = schema.safeParse(work);
    if (r.success) return { value: r.data, dropped };
    issues = r.error.issues;
  }
  const empty = schema.safeParse({});
  if (empty.success) return { value: empty.data, dropped };
  throw new Error('decodeLenient: schema has no defaults for an empty object');
}
