/**
 * An independent model of how yolop reads settings.toml (host-compat §5), and a
 * seeded generator of multi-entry settings files, for the settings property tests.
 *
 * The model is deliberately written from the rules, not from src/: it parses with
 * smol-toml and *applies* the `[[capabilities]]` entries one by one as the host
 * does (yolop's `apply_capability_settings`/`merge_config`): `enabled = false`
 * removes every instance of the ref, `append = true` adds one, any other entry is
 * shallow-merged into the first instance (or adds one). The model itself is checked
 * against the host's own code: test/fixtures/host-settings/table.json holds the
 * oracle's readings of generated files (scripts/host-settings-oracle).
 * yep-ext's documented rule for what `enable` brings back (every entry of the
 * written file stops saying `enabled = false`; a bare entry when nothing runs) is
 * restated here too.
 *
 * The generator records which byte blocks of a file are *not* the subject's
 * entries, so a test can prove every one of them survives a command unchanged.
 */
import { parse } from 'smol-toml';
import { prng } from './prng.js';

type Table = Record<string, unknown>;
const RESERVED = new Set(['ref', 'id', 'enabled', 'append']);

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
/** yolop's `entry.get("ref").or_else(|| entry.get("id")).and_then(as_str)`: a present `ref` that is not a string names nothing. */
const refOfEntry = (t: Table): string | undefined => {
  const raw = 'ref' in t ? t.ref : t.id;
  return typeof raw === 'string' ? raw : undefined;
};
const inlineConfig = (t: Table): Table => Object.fromEntries(Object.entries(t).filter(([k]) => !RESERVED.has(k)));

/**
 * The last texts' entries: one command's checks read the same before and after texts
 * a dozen times. Nothing in this module changes an entry it is given, so they are shared.
 */
const recentEntries = new Map<string, readonly Table[]>();
const RECENT_TEXTS = 8;

/** The capability entries of a document, as the host keeps them (tables with a string ref), in file order. */
function capabilityEntries(text: string): Table[] {
  let entries = recentEntries.get(text);
  if (entries === undefined) {
    const caps = (parse(text) as Table).capabilities;
    entries = Array.isArray(caps) ? caps.filter((c): c is Table => isTable(c) && refOfEntry(c) !== undefined) : [];
    if (recentEntries.size >= RECENT_TEXTS) recentEntries.delete(recentEntries.keys().next().value as string);
    recentEntries.set(text, entries);
  }
  return [...entries];
}

/** Every `[[capabilities]]` entry naming `ext:<name>`, in file order. */
export function subjectEntries(text: string, name: string): Table[] {
  return capabilityEntries(text).filter((c) => refOfEntry(c) === `ext:${name}`);
}

/** One capability instance the host runs. */
export interface Instance {
  ref: string;
  config: Table;
}

/** yolop's walk: every entry in order over one list of instances (all refs). */
export function applyAll(entries: readonly Table[]): Instance[] {
  let list: Instance[] = [];
  for (const e of entries) {
    const ref = refOfEntry(e) as string;
    if (e.enabled === false) {
      list = list.filter((i) => i.ref !== ref);
      continue;
    }
    const config = inlineConfig(e);
    const first = list.find((i) => i.ref === ref);
    if (e.append === true || !first) list.push({ ref, config });
    else first.config = { ...first.config, ...config };
  }
  return list;
}

const replacesBase = (profile: string): boolean => {
  const mode = (parse(profile) as Table).capabilities_mode;
  return typeof mode === 'string' && ['replace', 'only', 'exclusive'].includes(mode);
};

/** The entries the host applies for a home: the base file's then a profile's, or the profile's alone under a replacing mode. */
export function layeredEntries(base: string, profile?: string, edit: (own: Table[]) => Table[] = (own) => own): Table[] {
  if (profile === undefined) return edit(capabilityEntries(base));
  return [...(replacesBase(profile) ? [] : capabilityEntries(base)), ...edit(capabilityEntries(profile))];
}

/** Every instance the host runs for `ext:<name>`, in order: its config (more than one only with `append = true`). */
export function hostInstances(text: string, name: string, profile?: string): Table[] {
  return applyAll(layeredEntries(text, profile))
    .filter((i) => i.ref === `ext:${name}`)
    .map((i) => i.config);
}

/** What the host runs for `ext:<name>`: whether it runs, and the first instance's config (the one plain entries merge into). */
export function hostRuns(text: string, name: string, profile?: string): { enabled: boolean; config: Table } {
  const instances = hostInstances(text, name, profile);
  return { enabled: instances.length > 0, config: instances[0] ?? {} };
}

/**
 * The config `yep-ext enable` gives (docs/configuration.md, "Several tables for one
 * extension"), over the entries of the file it writes (the profile's when one is
 * given; the base file's are read, never switched):
 * - disabled: the file's last entry for it, when it is the one that says
 *   `enabled = false` (the one disable marked), is switched back on, nothing else; with
 *   no such entry, a bare entry is added;
 * - enabled: entries saying `enabled = false` are switched back on, the last first, for
 *   as long as only bare entries (no config, no `append = true`) follow them; and only
 *   when that changes the config.
 */
export function configWhenEnabled(text: string, name: string, profile?: string): Table {
  const ref = `ext:${name}`;
  const base = profile === undefined ? [] : replacesBase(profile) ? [] : capabilityEntries(text);
  const own = capabilityEntries(profile ?? text);
  const mine = (e: Table) => refOfEntry(e) === ref;
  const on = (e: Table): Table => {
    const { enabled: _e, ...rest } = e;
    return rest;
  };
  const runs = (entries: Table[]) => applyAll([...base, ...entries]).find((i) => i.ref === ref);
  let entries = own;
  if (!runs(own)) {
    const lastMine = own.map(mine).lastIndexOf(true);
    if (lastMine >= 0 && own[lastMine]?.enabled === false) entries = own.map((e, i) => (i === lastMine ? on(e) : e));
    else entries = [...own, { ref }];
  } else {
    const bare = (e: Table) => !(e.append === true && e.enabled !== false) && Object.keys(inlineConfig(e)).length === 0;
    let next = own;
    for (;;) {
      const r = next.findLastIndex((e) => mine(e) && e.enabled === false);
      if (
        r < 0 ||
        !next
          .slice(r + 1)
          .filter(mine)
          .every(bare)
      )
        break;
      next = next.map((e, i) => (i === r ? on(e) : e));
    }
    if (JSON.stringify(sortKeys(runs(next)?.config)) !== JSON.stringify(sortKeys(runs(own)?.config))) entries = next;
  }
  return runs(entries)?.config ?? {};
}

/** Config the file keeps that the host does not apply now and enable would bring back (keys enable adds or changes). */
export function keptConfig(text: string, name: string, profile?: string): Table {
  const now = hostRuns(text, name, profile).config;
  const later = configWhenEnabled(text, name, profile);
  return Object.fromEntries(Object.entries(later).filter(([k, v]) => !(k in now) || JSON.stringify(sortKeys(now[k])) !== JSON.stringify(sortKeys(v))));
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
  const enabled = g.pick(['', '', '', 'enabled = false', 'enabled = false # paused', 'enabled = true', 'enabled = "no"']);
  if (enabled) body.push(enabled);
  // Another instance of its own (`append = true`); a non-boolean `append` the host ignores.
  const append = g.pick(['', '', '', '', 'append = true', 'append = true # second server', 'append = false', 'append = 1']);
  if (append) body.push(append);
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
  switch (g.int(0, 7)) {
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
    case 6:
      // A present `ref` that is not a string names nothing for the host, whatever `id` says.
      return ['[[capabilities]]', `ref = ${n}`, `id = "ext:${name}"`, 'endpoint = "not an entry the host reads"'];
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
  for (const [n, subject] of kinds.entries()) blocks.push({ text: line(subject ? subjectEntry(g, name, n) : otherBlock(g, name, n)), subject });
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
