/**
 * cargo-binstall metadata (`[package.metadata.binstall]` in the crate's
 * Cargo.toml, SUPPORT.md and SIGNING.md of cargo-binstall): `pkg-url`,
 * `pkg-fmt`, `bin-dir`, `signing`, and per-target `overrides` (exact triples
 * first, then `cfg(...)` keys in file order, as binstall merges them). Reading
 * is pure and never throws on odd metadata: it returns a reason instead, so a
 * broken section costs the binary, never the package.
 */
import { parse as parseToml } from 'smol-toml';
import { targetInfo, type TargetInfo } from './target.js';

const PKG_FMTS = ['tgz', 'tar', 'zip', 'bin', 'txz', 'tbz2', 'tzstd'] as const;
export type PkgFmt = (typeof PKG_FMTS)[number];
/** The formats yep-ext unpacks (the others get a clear note). */
export const SUPPORTED_FMTS: readonly PkgFmt[] = ['tgz', 'tar', 'zip', 'bin'];

export interface SigningMeta {
  algorithm: string;
  pubkey: string;
  /** Template for the signature URL; default `{ url }.sig`. */
  file?: string;
}

export interface BinstallMeta {
  pkgUrl?: string;
  pkgFmt?: PkgFmt;
  binDir?: string;
  signing?: SigningMeta;
}

/** What the crate's Cargo.toml says that binary provisioning needs. */
export interface CargoFacts {
  crateName?: string;
  version?: string;
  repository?: string;
  /** Names of the `[[bin]]` targets. */
  bins: string[];
  /** `package.autobins` (default true): whether src/main.rs and src/bin/* are binaries. */
  autobins: boolean;
  /** Present when the crate has a [package.metadata.binstall] table. */
  binstall?: { base: BinstallMeta; overrides: Array<{ key: string; meta: BinstallMeta }> };
  /** Problems in the binstall table (reported as notes when it is used). */
  problems: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

function readMeta(raw: Obj, where: string, problems: string[]): BinstallMeta {
  const out: BinstallMeta = {};
  const str = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      problems.push(`${where}.${key} must be a string`);
      return undefined;
    }
    return v;
  };
  const pkgUrl = str('pkg-url');
  if (pkgUrl !== undefined) out.pkgUrl = pkgUrl;
  const binDir = str('bin-dir');
  if (binDir !== undefined) out.binDir = binDir;
  const fmt = str('pkg-fmt');
  if (fmt !== undefined) {
    const lower = fmt.toLowerCase();
    if ((PKG_FMTS as readonly string[]).includes(lower)) out.pkgFmt = lower as PkgFmt;
    else problems.push(`${where}.pkg-fmt ${JSON.stringify(fmt)} is not one of ${PKG_FMTS.join(', ')}`);
  }
  const signing = raw.signing;
  if (signing !== undefined) {
    if (!isObj(signing) || typeof signing.algorithm !== 'string' || typeof signing.pubkey !== 'string') {
      problems.push(`${where}.signing needs string "algorithm" and "pubkey"`);
      // A declared but unreadable key still means "this crate signs": keep it so it refuses.
      out.signing = { algorithm: isObj(signing) && typeof signing.algorithm === 'string' ? signing.algorithm : '?', pubkey: '' };
    } else {
      out.signing = { algorithm: signing.algorithm, pubkey: signing.pubkey, ...(typeof signing.file === 'string' ? { file: signing.file } : {}) };
    }
  }
  return out;
}

/** Read the facts binary provisioning needs from Cargo.toml text. Never throws. */
export function cargoFacts(text: string): CargoFacts {
  let doc: Obj;
  try {
    doc = parseToml(text) as Obj;
  } catch (e) {
    return { bins: [], autobins: true, problems: [`Cargo.toml is not valid TOML (${(e as Error).message.split('\n')[0]})`] };
  }
  const pkg = isObj(doc.package) ? doc.package : {};
  const bins = Array.isArray(doc.bin) ? doc.bin.flatMap((b) => (isObj(b) && typeof b.name === 'string' ? [b.name] : [])) : [];
  const facts: CargoFacts = { bins, autobins: pkg.autobins !== false, problems: [] };
  if (typeof pkg.name === 'string') facts.crateName = pkg.name;
  if (typeof pkg.version === 'string') facts.version = pkg.version;
  if (typeof pkg.repository === 'string') facts.repository = pkg.repository;
  const meta = isObj(pkg.metadata) ? pkg.metadata : undefined;
  const raw = meta?.binstall;
  if (raw === undefined) return facts;
  if (!isObj(raw)) {
    facts.problems.push('[package.metadata.binstall] must be a table');
    return facts;
  }
  const base = readMeta(raw, 'binstall', facts.problems);
  const overrides: Array<{ key: string; meta: BinstallMeta }> = [];
  if (raw.overrides !== undefined) {
    if (!isObj(raw.overrides)) facts.problems.push('binstall.overrides must be a table');
    else {
      for (const [key, value] of Object.entries(raw.overrides)) {
        if (!isObj(value)) facts.problems.push(`binstall.overrides.${key} must be a table`);
        else overrides.push({ key, meta: readMeta(value, `binstall.overrides.${key}`, facts.problems) });
      }
    }
  }
  facts.binstall = { base, overrides };
  return facts;
}

/** The metadata in force for `target`: exact-triple overrides, then matching cfg() ones in order, then the base. */
export function binstallFor(binstall: NonNullable<CargoFacts['binstall']>, target: string): BinstallMeta {
  const info = targetInfo(target);
  const matching = [
    ...binstall.overrides.filter((o) => o.key === target),
    ...binstall.overrides.filter((o) => o.key.startsWith('cfg(') && evalCfg(o.key, info) === true),
  ].map((o) => o.meta);
  const pick = <K extends keyof BinstallMeta>(k: K): BinstallMeta[K] => matching.find((m) => m[k] !== undefined)?.[k] ?? binstall.base[k];
  const out: BinstallMeta = {};
  for (const k of ['pkgUrl', 'pkgFmt', 'binDir', 'signing'] as const) {
    const v = pick(k);
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

// ------------------------------------------------------------ cfg() expressions

type Tok = { t: 'id'; v: string } | { t: 'str'; v: string } | { t: 'p'; v: '(' | ')' | ',' | '=' };

function tokenize(s: string): Tok[] | undefined {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (/\s/.test(c)) i++;
    else if ('(),='.includes(c)) {
      out.push({ t: 'p', v: c as '(' | ')' | ',' | '=' });
      i++;
    } else if (c === '"') {
      const end = s.indexOf('"', i + 1);
      if (end === -1) return undefined;
      out.push({ t: 'str', v: s.slice(i + 1, end) });
      i = end + 1;
    } else {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(i));
      if (!m) return undefined;
      out.push({ t: 'id', v: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

/** Evaluate cargo's `cfg(...)` against a target; undefined when the text is not a cfg we can read. */
export function evalCfg(text: string, info: TargetInfo): boolean | undefined {
  const toks = tokenize(text);
  if (!toks) return undefined;
  let pos = 0;
  const peek = (): Tok | undefined => toks[pos];
  const expect = (v: string): boolean => {
    const t = toks[pos];
    if (t && t.t === 'p' && t.v === v) {
      pos++;
      return true;
    }
    return false;
  };
  const values: Record<string, string> = {
    target_os: info.os,
    target_arch: info.arch,
    target_env: info.env,
    target_vendor: info.vendor,
    target_family: info.family,
  };
  const expr = (): boolean | undefined => {
    const t = toks[pos++];
    if (t?.t !== 'id') return undefined;
    if (t.v === 'all' || t.v === 'any') {
      if (!expect('(')) return undefined;
      const items: boolean[] = [];
      while (!expect(')')) {
        const v = expr();
        if (v === undefined) return undefined;
        items.push(v);
        if (!expect(',') && !(peek()?.t === 'p' && peek()?.v === ')')) return undefined;
      }
      return t.v === 'all' ? items.every(Boolean) : items.some(Boolean);
    }
    if (t.v === 'not') {
      if (!expect('(')) return undefined;
      const v = expr();
      return v === undefined || !expect(')') ? undefined : !v;
    }
    if (expect('=')) {
      const s = toks[pos++];
      if (s?.t !== 'str') return undefined;
      return values[t.v] === s.v;
    }
    if (t.v === 'unix' || t.v === 'windows') return info.family === t.v;
    return false;
  };
  if (!(peek()?.t === 'id' && (peek() as { v: string }).v === 'cfg')) return undefined;
  pos++;
  if (!expect('(')) return undefined;
  const v = expr();
  if (v === undefined || !expect(')') || pos !== toks.length) return undefined;
  return v;
}

/** File suffixes a format may carry (binstall's PkgFmt::extensions), in the order tried. */
export function fmtSuffixes(fmt: PkgFmt, windows: boolean): string[] {
  switch (fmt) {
    case 'tgz':
      return ['.tgz', '.tar.gz'];
    case 'tar':
      return ['.tar'];
    case 'zip':
      return ['.zip'];
    case 'bin':
      return windows ? ['.bin', '', '.exe'] : ['.bin', ''];
    case 'txz':
      return ['.txz', '.tar.xz'];
    case 'tbz2':
      return ['.tbz2', '.tar.bz2', '.tbz', '.tar.bz'];
    case 'tzstd':
      return ['.tzstd', '.tzst', '.tar.zst'];
  }
}

/** binstall's guess of the format from a URL's ending (used when pkg-fmt is absent). */
export function guessFmt(url: string): PkgFmt | undefined {
  const path = url.split(/[?#]/)[0]?.toLowerCase() ?? '';
  const table: Array<[string, PkgFmt]> = [
    ['.tar.gz', 'tgz'],
    ['.tgz', 'tgz'],
    ['.tar.xz', 'txz'],
    ['.txz', 'txz'],
    ['.tar.bz2', 'tbz2'],
    ['.tbz2', 'tbz2'],
    ['.tar.zst', 'tzstd'],
    ['.tzst', 'tzstd'],
    ['.tar', 'tar'],
    ['.zip', 'zip'],
    ['.exe', 'bin'],
    ['.bin', 'bin'],
  ];
  return table.find(([suffix]) => path.endsWith(suffix))?.[1];
}
