/**
 * YEP framing: one JSON object per `\n`-terminated UTF-8 line, classified by its
 * fields (host-compat §8). We split bytes ourselves because readline buffers a
 * line without limit (hardening F41); a line longer than the cap is reported
 * once and then skipped up to its newline, so memory stays bounded.
 */
import { truncateRedacted } from '../text/redact.js';

/** Default cap on one protocol line (bytes, without the newline). */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

/** How much of a bad line is kept for reports. */
export const SNIPPET_CHARS = 200;

export interface LineSplitterEvents {
  line(bytes: Buffer): void;
  /** The current line passed `max` bytes; called once per oversized line. */
  overflow(seenBytes: number): void;
}

/** Incremental byte splitter on `\n` with a per-line cap. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly max: number,
    private readonly on: LineSplitterEvents,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (this.skipping) {
        if (nl === -1) return;
        this.skipping = false;
      } else {
        const piece = chunk.subarray(start, end);
        if (this.size + piece.length > this.max) {
          // Drop what we hold; keep skipping until the line ends.
          const seen = this.size + piece.length;
          this.parts = [];
          this.size = 0;
          this.skipping = nl === -1;
          this.on.overflow(seen);
        } else if (nl === -1) {
          this.parts.push(piece);
          this.size += piece.length;
        } else {
          const line = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
          this.parts = [];
          this.size = 0;
          this.on.line(line);
        }
      }
      if (nl === -1) return;
      start = nl + 1;
    }
  }

  /** Bytes of an unterminated line still held (reported at EOF). */
  takeRest(): Buffer | undefined {
    if (this.size === 0) return undefined;
    const rest = Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    return rest;
  }
}

export type Classified =
  | { kind: 'request'; method: string; id: number; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: number; ok: true; result: unknown }
  | { kind: 'response'; id: number; ok: false; error: unknown }
  | { kind: 'malformed'; reason: string };

export type ParsedLine = { kind: 'blank' } | (Classified & { value?: Record<string, unknown>; problems: string[] });

const decoder = new TextDecoder('utf-8', { fatal: true });
const snippetOf = (text: string, max: number, secrets: readonly string[]): string => snippet(text, max, secrets);

/**
 * A short, single-line excerpt of a bad line for reports. `secrets` are redacted
 * from the whole line before it is cut, and what the cut leaves of one is masked
 * (text/redact.ts): a report redacted later would no longer find a cut secret.
 */
export function snippet(text: string, max = SNIPPET_CHARS, secrets: readonly string[] = []): string {
  return truncateRedacted(text.replace(/[\r\n]+/g, ' '), max, secrets);
}

/**
 * JSON.parse with `__proto__` keys removed. JSON.parse itself keeps such a key as
 * an own property, but any later copy (`{...v}`, Object.assign, a schema library
 * building its output by assignment) would turn it into a prototype swap.
 */
export function parseJsonSafely(text: string): { value: unknown; protoKeys: number } {
  let protoKeys = 0;
  const value: unknown = JSON.parse(text, function reviver(key, v) {
    if (key === '__proto__') {
      protoKeys++;
      return undefined;
    }
    return v;
  });
  return { value, protoKeys };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Classify a parsed message by its fields (never by direction or pipe). */
export function classifyMessage(value: unknown): Classified {
  if (!isObject(value))
    return { kind: 'malformed', reason: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}` };
  const hasId = 'id' in value && value.id !== null && value.id !== undefined;
  if ('method' in value) {
    const method = value.method;
    if (typeof method !== 'string' || method === '') return { kind: 'malformed', reason: '`method` must be a non-empty string' };
    if (!hasId) return { kind: 'notification', method, params: value.params };
    if (!Number.isSafeInteger(value.id)) return { kind: 'malformed', reason: `request id ${JSON.stringify(value.id)} is not an integer` };
    return { kind: 'request', method, id: value.id as number, params: value.params };
  }
  if (hasId) {
    if (!Number.isSafeInteger(value.id)) return { kind: 'malformed', reason: `response id ${JSON.stringify(value.id)} is not an integer` };
    const id = value.id as number;
    if ('error' in value && value.error !== null && value.error !== undefined) return { kind: 'response', id, ok: false, error: value.error };
    return { kind: 'response', id, ok: true, result: 'result' in value ? value.result : null };
  }
  return { kind: 'malformed', reason: 'neither `method` nor `id`: not a request, notification or response' };
}

/** Decode, parse and classify one line (without its `\n`). Never throws. `secrets` never appear in the excerpts it quotes. */
export function parseLine(bytes: Buffer, secrets: readonly string[] = []): ParsedLine {
  const snippet = (text: string): string => snippetOf(text, SNIPPET_CHARS, secrets);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { kind: 'malformed', reason: `invalid UTF-8: ${snippet(bytes.toString('utf8'))}`, problems: [] };
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return { kind: 'blank' };
  let parsed: { value: unknown; protoKeys: number };
  try {
    parsed = parseJsonSafely(text);
  } catch {
    return { kind: 'malformed', reason: `not JSON: ${snippet(text)}`, problems: [] };
  }
  const problems = parsed.protoKeys > 0 ? [`\`__proto__\` key removed (${parsed.protoKeys}x): ${snippet(text)}`] : [];
  const classified = classifyMessage(parsed.value);
  if (classified.kind === 'malformed') return { ...classified, reason: `${classified.reason}: ${snippet(text)}`, problems };
  return { ...classified, value: parsed.value as Record<string, unknown>, problems };
}

/** Serialize one outbound message as a line. Our own lines never carry `jsonrpc`. */
export function encodeMessage(message: Record<string, unknown>): string {
  return `${JSON.stringify(message)}\n`;
}
