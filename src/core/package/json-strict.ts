/**
 * Strict JSON for manifests: JSON.parse silently keeps the last of duplicate keys
 * and accepts absurd nesting. A manifest is what the user approves, so ambiguity
 * is refused: BOM, NUL, duplicate keys and nesting deeper than MAX_DEPTH are errors.
 * An array or object of more than MAX_ENTRIES entries is refused too, before any
 * validation walks it (hardening D28: huge arrays cost bounded time and memory).
 */
const MAX_DEPTH = 64;
const MAX_ENTRIES = 10_000;

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

/**
 * One pass over already-valid JSON text: duplicate keys per object, depth.
 * Char codes, not one-character strings, and a key is decoded with JSON.parse
 * only when it holds an escape: `list` runs this over every installed manifest.
 */
function scanStructure(text: string): void {
  const stack: (Set<string> | null)[] = []; // Set for objects, null for arrays
  const commas: number[] = []; // per level: entries after the first, for arrays
  const names: string[] = []; // per level: where the container sits (`yolop.tools`), for messages
  let lastKey = ''; // the key of the entry being read in the innermost object
  let expectKey = false;
  const tooMany = (): StrictJsonError =>
    new StrictJsonError(`${names[names.length - 1] || 'the top level'} holds more than ${MAX_ENTRIES} entries (the limit for any list or map)`);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      for (;;) {
        const d = text.charCodeAt(j);
        if (d === 0x22) break;
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else j += 1;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        if (top.has(key)) throw new StrictJsonError(`duplicate key ${JSON.stringify(key)}`);
        top.add(key);
        lastKey = key;
        if (top.size > MAX_ENTRIES) throw tooMany();
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack.length - 1;
      const outer = names[parent] ?? '';
      names.push(parent < 0 ? '' : stack[parent] ? (outer ? `${outer}.${lastKey}` : lastKey) : `${outer}[${commas[parent]}]`);
      stack.push(c === 0x7b ? new Set() : null);
      commas.push(0);
      if (stack.length > MAX_DEPTH) throw new StrictJsonError(`nested deeper than ${MAX_DEPTH} levels`);
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      commas.pop();
      names.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] instanceof Set;
      if (!expectKey && ++commas[commas.length - 1]! >= MAX_ENTRIES) throw tooMany();
    }
  }
}
