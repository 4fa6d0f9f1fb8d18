/**
 * An independent model of how yolop reads settings.toml (host-compat §5), and a
 * seeded generator of multi-entry settings files, for the settings property tests.
 *
 * The model is deliberately written from the rules, not from src/: it parses with
 * smol-toml and *applies* the `[[capabilities]]` entries one by one as the host
 * does (an entry without `enabled = false` adds the capability, replacing one of
 * the same ref, with that entry's inline config; `enabled = false` removes it).
 * yep-ext's own documented rule for "the config the user set" (last enabled entry
 * holding config, else last entry holding config) is restated here too.
 *
 * The generator records which byte blocks of a file are *not* the subject's
 * entries, so a test can prove every one of them survives a command unchanged.
 */
import { parse } from 'smol-toml';

type Table = Record<string, unknown>;
const RESERVED = new Set(['ref', 'id', 'enabled', 'append']);

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Gen {
  constructor(readonly next: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const refOfEntry = (t: Table): unknown => (typeof t.ref === 'string' ? t.ref : t.id);
const inlineConfig = (t: Table): Table => Object.fromEntries(Object.entries(t).filter(([k]) => !RESERVED.has(k)));

/** Every `[[capabilities]]` entry naming `ext:<name>`, in file order. */
export function subjectEntries(text: string, name: string): Table[] {
  const caps = (parse(text) as Table).capabilities;
  return Array.isArray(caps) ? caps.filter((c): c is Table => isTable(c) && refOfEntry(c) === `ext:${name}`) : [];
}

/** What the host runs for `ext:<name>`: apply the entries in order, as the host does. */
export function hostRuns(text: string, name: string): { enabled: boolean; config: Table } {
  const caps = (parse(text) as Table).capabilities;
  const loaded = new Map<unknown, Table>();
  for (const c of Array.isArray(caps) ? caps : []) {
    if (!isTable(c)) continue;
    if (c.enabled === false) loaded.delete(refOfEntry(c));
    else loaded.set(refOfEntry(c), inlineConfig(c));
  }
  const config = loaded.get(`ext:${name}`);
  return config ? { enabled: true, config } : { enabled: false, config: {} };
}

/** The config the user set (docs/configuration.md): last enabled entry holding config, else last entry holding config. */
export function userConfig(text: string, name: string): Table {
  const holding = subjectEntries(text, name).filter((e) => Object.keys(inlineConfig(e)).length > 0);
  const chosen = holding.filter((e) => e.enabled !== false).at(-1) ?? holding.at(-1);
  return chosen ? inlineConfig(chosen) : {};
}

/** Config the file keeps that the host does not apply: the user's config unless it is the one in effect. */
export function keptConfig(text: string, name: string): Table {
  const user = userConfig(text, name);
  const runs = hostRuns(text, name);
  return JSON.stringify(sortKeys(user)) === JSON.stringify(sortKeys(runs.config)) ? {} : user;
}

export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isTable(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys(v[k])]),
    );
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}

/** The parsed document without any entry naming `ext:<name>` (what must never change). */
export function withoutSubject(text: string, name: string): unknown {
  const data = parse(text) as Table;
  if (Array.isArray(data.capabilities)) {
    data.capabilities = data.capabilities.filter((c) => !(isTable(c) && refOfEntry(c) === `ext:${name}`));
    if ((data.capabilities as unknown[]).length === 0) delete data.capabilities;
  }
  return sortKeys(data);
}

export interface GeneratedFile {
  seed: number;
  text: string;
  /** Every byte block that is not one of the subject's entries, in order (blank lines between blocks excluded). */
  others: string[];
}

/** Config keys the generator writes; the first ones are declared by SUBJECT_SCHEMA. */
export const DECLARED_KEYS = ['endpoint', 'port', 'ratio', 'verbose', 'tags', 'opts', 'label'] as const;

export const SUBJECT_SCHEMA = {
  type: 'object',
  properties: {
    endpoint: { type: 'string' },
    port: { type: 'integer' },
    ratio: { type: 'number' },
    verbose: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    opts: { type: 'object' },
    label: { type: 'string' },
  },
};

const ESCAPED_STRINGS = ['"plain"', '"quote \\" and backslash \\\\"', '"caf\\u00e9 \\t tab"', '"line\\nbreak"', '"hash # not a comment"', '"ext:alpha"', '""'];
const LITERAL_STRINGS = ["'C:\\path\\raw'", '\'literal "dq" ok\'', "'# still a string'", "''", "'ext:alpha'"];

function value(g: Gen, key: string, n: number): string {
  switch (key) {
    case 'port':
      return g.pick([String(g.int(1, 65535)), `${g.int(1, 9)}_000`, '0x1F90', '"8080"']);
    case 'ratio':
      return g.pick(['0.5', '1e-3', '-0.0', '3.14', 'inf']);
    case 'verbose':
      return g.pick(['true', 'false']);
    case 'tags':
      return g.pick(['[]', '["a", \'b\']', '[\n  "x", # comment inside\n  "y",\n]', `["t${n}"]`]);
    case 'opts':
      return g.pick(['{}', '{ deep = 1, "odd key" = true }', `{ k = "v${n}" }`]);
    default:
      return g.chance(0.5) ? g.pick(ESCAPED_STRINGS) : g.pick(LITERAL_STRINGS);
  }
}

const eolOf = (crlf: boolean): string => (crlf ? '\r\n' : '\n');

/** One `[[capabilities]]` entry for `ext:<name>`: ref or id, quoted in several ways, maybe disabled, some config. */
function subjectEntry(g: Gen, name: string, n: number): string[] {
  const header = g.pick(['[[capabilities]]', '[[capabilities]]', '[[ capabilities ]]   # ours', '[[capabilities]] # entry']);
  const key = g.pick(['ref', 'ref', 'id', '"ref"', "'id'"]);
  const refText = g.pick([`"ext:${name}"`, `'ext:${name}'`, `"ext:\\u0061${name.slice(1)}"`, `"\\u0065xt:${name}"`]);
  const rows = [header, `${key} = ${refText}${g.chance(0.2) ? '   # which one' : ''}`];
  const body: string[] = [];
  const enabled = g.pick(['', '', 'enabled = false', 'enabled = false # paused', 'enabled = true']);
  if (enabled) body.push(enabled);
  const keys = [...DECLARED_KEYS, 'undeclared_key'].filter(() => g.chance(0.3));
  for (const k of keys) {
    body.push(`${k === 'label' && g.chance(0.5) ? '"label"' : k} = ${value(g, k, n)}${g.chance(0.2) ? ' # note' : ''}`);
  }
  // Shuffle the body so `enabled` is not always right after ref.
  for (let i = body.length - 1; i > 0; i--) {
    const j = g.int(0, i);
    [body[i], body[j]] = [body[j] as string, body[i] as string];
  }
  // A comment inside the entry sits before one of its keys: one after the last key
  // could as well be about whatever follows, and yep-ext leaves such comments alone.
  if (body.length > 0 && g.chance(0.2)) body.splice(g.int(0, body.length - 1), 0, `# a comment inside entry ${n}`);
  rows.push(...body);
  // Sometimes `opts` as a sub-table of the entry instead of an inline value.
  if (!keys.includes('opts') && g.chance(0.15)) rows.push('[capabilities.opts]', `nested = ${g.pick(ESCAPED_STRINGS)}`);
  return rows;
}

/** A block the subject's commands must leave alone. */
function otherBlock(g: Gen, name: string, n: number): string[] {
  switch (g.int(0, 6)) {
    case 0:
      return [`# comment ${n}: [[capabilities]] ref = "ext:${name}" is only text here`];
    case 1:
      return ['[[capabilities]]', `ref = "lsp-${n}"`, 'servers = [', '  "rust-analyzer", # comment', '  "pyright ] [ tricky",', ']'];
    case 2:
      return ['[[capabilities]]', `id = "ext:${name}2"`, `note = "ext:${name} look-alike ${n}"`];
    case 3:
      return ['[[capabilities]]', `ref = "ext:beta"`, g.pick(['enabled = false', 'level = 3', "label = 'beta'"]), `n = ${n}`];
    case 4:
      return [`[profiles.p${n}]`, `model = "big-${n}"`, `notes = """`, '[[capabilities]]', `ref = "ext:${name}"`, '"""'];
    case 5:
      return [`[[profiles.p${n}.capabilities]]`, `ref = "ext:${name}"`, 'endpoint = "profile-level, not ours"'];
    default:
      return ['[[capabilities]]', `ref = "fs-${n}"`, '[capabilities.overrides]', `timeout = ${n}`];
  }
}

/** A settings file: a preamble, then subject entries and other blocks interleaved, blank lines in between. */
export function generateFile(seed: number, name: string): GeneratedFile {
  const g = new Gen(prng(seed));
  const eol = eolOf(g.chance(0.15));
  const blocks: { text: string; subject: boolean }[] = [];
  const line = (rows: string[]): string => rows.map((r) => r + eol).join('');
  if (g.chance(0.7)) {
    blocks.push({
      text: line([
        g.pick(['# my settings — keep this comment', '\ufeff# starts with a BOM', '# settings']),
        'theme = "dark"   # trailing',
        "model.name = 'big'",
        `seed = ${seed}`,
      ]),
      subject: false,
    });
  }
  const subjects = g.int(0, 4);
  const others = g.int(1, 5);
  const kinds = [...Array(subjects).fill(true), ...Array(others).fill(false)] as boolean[];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = g.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j] as boolean, kinds[i] as boolean];
  }
  kinds.forEach((subject, n) => blocks.push({ text: line(subject ? subjectEntry(g, name, n) : otherBlock(g, name, n)), subject }));
  let text = '';
  for (const [i, b] of blocks.entries()) {
    if (i > 0) text += eol.repeat(g.int(0, 2));
    text += b.text;
  }
  if (g.chance(0.1) && text.endsWith(eol)) text = text.slice(0, -eol.length);
  return { seed, text, others: blocks.filter((b) => !b.subject).map((b) => b.text.replace(/\r?\n$/, '')) };
}

/**
 * Proof that a command left every other block alone: each appears byte for byte,
 * in order, and what lies between them parses to nothing but the subject's
 * entries (blank lines and the subject's own tables, comments inside them).
 * Returns a description of the first violation, or undefined.
 */
export function othersUntouched(file: GeneratedFile, after: string, name: string): string | undefined {
  let pos = 0;
  const gaps: string[] = [];
  for (const block of file.others) {
    const at = after.indexOf(block, pos);
    if (at < 0) return `block not found after position ${pos}: ${JSON.stringify(block.slice(0, 80))}`;
    gaps.push(after.slice(pos, at));
    pos = at + block.length;
  }
  gaps.push(after.slice(pos));
  for (const gap of gaps) {
    const body = gap.replace(/^\ufeff/, '');
    let data: Table;
    try {
      data = parse(body) as Table;
    } catch (e) {
      return `a gap between other blocks is not TOML on its own: ${JSON.stringify(body.slice(0, 120))} (${(e as Error).message.split('\n')[0]})`;
    }
    const keys = Object.keys(data);
    if (keys.some((k) => k !== 'capabilities')) return `a gap holds something other than entries: ${JSON.stringify(body.slice(0, 120))}`;
    const caps = (data.capabilities ?? []) as Table[];
    if (caps.some((c) => refOfEntry(c) !== `ext:${name}`)) return `a gap holds another entry: ${JSON.stringify(body.slice(0, 120))}`;
    // Outside the subject's tables only blank lines may sit in a gap (a comment there would be one
    // moved or made up), and comments that were inside a subject entry: an entry spans its header to
    // its last key, so once an edit drops the key after such a comment the comment trails the entry,
    // and yep-ext keeps a comment it cannot attribute rather than delete it.
    const lines = body.split('\n');
    let inSubject = false;
    for (const raw of lines) {
      const l = raw.trim();
      if (/^\[\[\s*capabilities\s*\]\]/.test(l)) inSubject = true;
      if (!inSubject && l !== '' && !/^# a comment inside entry \d+$/.test(l))
        return `a gap holds a stray line outside the subject's entries: ${JSON.stringify(raw)}`;
    }
  }
  return undefined;
}
