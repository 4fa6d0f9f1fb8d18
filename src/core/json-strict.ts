/**
 * Strict JSON for manifests: JSON.parse silently keeps the last of duplicate keys
 * and accepts absurd nesting. A manifest is what the user approves, so ambiguity
 * is refused: BOM, NUL, duplicate keys and nesting deeper than MAX_DEPTH are errors.
 */
export const MAX_DEPTH = 64;

export class StrictJsonError extends Error {}

/** Parse `text` as strict JSON; throws StrictJsonError with a short reason. */
export function parseStrictJson(text: string): unknown {
  if (text.charCodeAt(0) === 0xfeff) throw new StrictJsonError('starts with a byte-order mark (save it as UTF-8 without BOM)');
  if (text.includes('\0')) throw new StrictJsonError('contains NUL bytes');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new StrictJsonError(`invalid JSON: ${(e as Error).message}`);
  }
  scanStructure(text);
  return value;
}

/** One pass over already-valid JSON text: duplicate keys per object, depth. */
function scanStructure(text: string): void {
  const stack: (Set<string> | null)[] = []; // Set for objects, null for arrays
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.has(key)) throw new StrictJsonError(`duplicate key ${JSON.stringify(key)}`);
        top.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      stack.push(c === '{' ? new Set() : null);
      if (stack.length > MAX_DEPTH) throw new StrictJsonError(`nested deeper than ${MAX_DEPTH} levels`);
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      expectKey = stack[stack.length - 1] instanceof Set;
    }
  }
}
