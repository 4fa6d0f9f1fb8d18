/**
 * Build tar / .crate archives byte by byte, including the hostile ones no tar tool
 * will write (links, devices, `..`, bad checksums, negative sizes, NUL in PAX...).
 *
 *   buildCrate(crateEntries('lsp', '0.3.1', { 'plugin.json': '{...}', 'bin/server': { content: '#!/bin/sh', mode: 0o755 } }))
 *
 * makes a gzip'd GNU tar shaped like `cargo package` output (files only, root
 * `lsp-0.3.1/`, GNU long names); crateEntriesFromDir does the same for a source
 * tree on disk. Lower level: TarEntry fields override single header fields
 * (typeflag, size field, checksum, PAX records), tarHeader/paxRecord build raw
 * blocks, and TarOptions.trailing appends arbitrary bytes.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

type TarEntryType = 'file' | 'dir' | 'symlink' | 'hardlink' | 'char' | 'block' | 'fifo' | 'contiguous' | 'sparse';

const TYPE_FLAGS: Record<TarEntryType, string> = {
  file: '0',
  hardlink: '1',
  symlink: '2',
  char: '3',
  block: '4',
  dir: '5',
  fifo: '6',
  contiguous: '7',
  sparse: 'S',
};

export interface TarEntry {
  /** Full path inside the archive (root included). */
  path: string;
  /** Default 'file'. */
  type?: TarEntryType;
  /** Raw typeflag character, overriding `type` (e.g. 'K', 'V', 'g', '\0'). */
  typeflag?: string;
  content?: string | Uint8Array;
  /** Default 0o644 (files) / 0o755 (dirs). */
  mode?: number;
  linkpath?: string;
  /** How a path longer than 100 bytes is carried: GNU `././@LongLink` (default for gnu format), a PAX header (default for ustar) or the ustar prefix field. */
  longName?: 'gnu' | 'pax' | 'prefix';
  /** Extra PAX records in an `x` header before this entry (values written verbatim). */
  pax?: Record<string, string | Uint8Array>;
  /** A PAX `x` header body written verbatim (for malformed records). */
  paxRaw?: Uint8Array;
  /** Overrides the 12-byte size field: a number (octal), 'negative' (base-256 -1) or raw bytes. The body is still `content`. */
  sizeField?: number | 'negative' | Uint8Array;
  /** Write a wrong header checksum. */
  badChecksum?: boolean;
  /** Header format of this entry (default from the archive options). */
  format?: 'gnu' | 'ustar';
}

export interface TarOptions {
  /** Default 'gnu' (what cargo writes). */
  format?: 'gnu' | 'ustar';
  /** Write the two zero blocks that end an archive (default true). */
  end?: boolean;
  /** Bytes appended after everything else. */
  trailing?: Uint8Array;
}

export interface CrateFile {
  content: string | Uint8Array;
  mode?: number;
}

const BLOCK = 512;

function bytes(v: string | Uint8Array | undefined): Buffer {
  if (v === undefined) return Buffer.alloc(0);
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v);
}

function pad(data: Buffer): Buffer {
  const rest = data.length % BLOCK;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(BLOCK - rest)]);
}

function octal(buf: Buffer, off: number, width: number, value: number): void {
  buf.write(`${value.toString(8).padStart(width - 1, '0')}\0`, off, width, 'latin1');
}

export interface HeaderFields {
  name: Buffer;
  mode?: number;
  size: number;
  typeflag: string;
  linkname?: Buffer;
  format?: 'gnu' | 'ustar';
  prefix?: Buffer;
  sizeField?: TarEntry['sizeField'];
  badChecksum?: boolean;
}

/** One 512-byte header block. */
export function tarHeader(f: HeaderFields): Buffer {
  const h = Buffer.alloc(BLOCK);
  f.name.copy(h, 0, 0, Math.min(100, f.name.length));
  octal(h, 100, 8, f.mode ?? 0o644);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  if (f.sizeField === 'negative') {
    h.fill(0xff, 124, 136);
  } else if (f.sizeField instanceof Uint8Array) {
    Buffer.from(f.sizeField).copy(h, 124, 0, 12);
  } else {
    octal(h, 124, 12, f.sizeField ?? f.size);
  }
  octal(h, 136, 12, 1_700_000_000);
  h.write(f.typeflag, 156, 1, 'latin1');
  f.linkname?.copy(h, 157, 0, Math.min(100, f.linkname.length));
  if ((f.format ?? 'gnu') === 'gnu') {
    h.write('ustar  \0', 257, 8, 'latin1');
  } else {
    h.write('ustar\u000000', 257, 8, 'latin1');
    f.prefix?.copy(h, 345, 0, Math.min(155, f.prefix.length));
  }
  h.write('root', 265, 'latin1');
  h.write('root', 297, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  if (f.badChecksum) sum += 1;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return h;
}

/** A PAX record `<len> key=value\n` with the self-counting length. */
export function paxRecord(key: string, value: string | Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(` ${key}=`, 'utf8'), bytes(value), Buffer.from('\n')]);
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len++;
  return Buffer.concat([Buffer.from(String(len)), body]);
}

function metaEntry(typeflag: string, name: string, body: Buffer, format: 'gnu' | 'ustar'): Buffer {
  return Buffer.concat([tarHeader({ name: Buffer.from(name), size: body.length, typeflag, format }), pad(body)]);
}

/** The blocks of one entry (with any GNU long-name or PAX header in front). */
function tarEntry(e: TarEntry, defaults: TarOptions = {}): Buffer {
  const format = e.format ?? defaults.format ?? 'gnu';
  const type = e.type ?? 'file';
  const typeflag = e.typeflag ?? TYPE_FLAGS[type];
  const name = Buffer.from(e.path, 'utf8');
  const body = bytes(e.content);
  const parts: Buffer[] = [];
  const pax: Buffer[] = [];
  let headerName = name;
  let prefix: Buffer | undefined;
  if (name.length > 100) {
    const how = e.longName ?? (format === 'gnu' ? 'gnu' : 'pax');
    const cut = name.lastIndexOf(0x2f, name.length - 2);
    if (how === 'prefix' && format === 'ustar' && cut > 0 && cut <= 155 && name.length - cut - 1 <= 100) {
      prefix = name.subarray(0, cut);
      headerName = name.subarray(cut + 1);
    } else if (how === 'gnu') {
      parts.push(metaEntry('L', '././@LongLink', Buffer.concat([name, Buffer.alloc(1)]), format));
    } else {
      pax.push(paxRecord('path', name));
    }
    if (!prefix) headerName = name.subarray(0, 100);
  }
  for (const [k, v] of Object.entries(e.pax ?? {})) pax.push(paxRecord(k, v));
  if (e.paxRaw) pax.push(Buffer.from(e.paxRaw));
  if (pax.length > 0) parts.push(metaEntry('x', `PaxHeaders/${e.path.slice(0, 80)}`, Buffer.concat(pax), format));
  parts.push(
    tarHeader({
      name: headerName,
      mode: e.mode ?? (type === 'dir' ? 0o755 : 0o644),
      size: body.length,
      typeflag,
      linkname: e.linkpath === undefined ? undefined : Buffer.from(e.linkpath, 'utf8'),
      format,
      ...(prefix ? { prefix } : {}),
      ...(e.sizeField !== undefined ? { sizeField: e.sizeField } : {}),
      ...(e.badChecksum ? { badChecksum: true } : {}),
    }),
  );
  if (body.length > 0) parts.push(pad(body));
  return Buffer.concat(parts);
}

/** An uncompressed tar. */
export function buildTar(entries: TarEntry[], options: TarOptions = {}): Buffer {
  const parts = entries.map((e) => tarEntry(e, options));
  if (options.end !== false) parts.push(Buffer.alloc(2 * BLOCK));
  if (options.trailing) parts.push(Buffer.from(options.trailing));
  return Buffer.concat(parts);
}

/** A gzip'd tar, as a `.crate` is. */
export function buildCrate(entries: TarEntry[], options: TarOptions = {}): Buffer {
  return gzipSync(buildTar(entries, options));
}

/** Entries for the files of crate `name@version` under `{name}-{version}/`, files only (as cargo writes them). */
export function crateEntries(name: string, version: string, files: Record<string, string | Uint8Array | CrateFile>): TarEntry[] {
  return Object.entries(files).map(([rel, f]) => {
    const file: CrateFile = typeof f === 'string' || f instanceof Uint8Array ? { content: f } : f;
    return { path: `${name}-${version}/${rel}`, content: file.content, mode: file.mode ?? 0o644 };
  });
}

/**
 * Entries for a source tree on disk (a fixture directory in the repo), files only,
 * sorted, keeping each file's execute bit: `buildCrate(crateEntriesFromDir(dir, 'lsp', '0.3.1'))`.
 */
export function crateEntriesFromDir(dir: string, name: string, version: string): TarEntry[] {
  const files: Record<string, CrateFile> = {};
  const walk = (abs: string, rel: string): void => {
    for (const e of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const p = join(abs, e.name);
      if (e.isDirectory()) walk(p, r);
      else if (e.isFile()) files[r] = { content: readFileSync(p), mode: statSync(p).mode & 0o111 ? 0o755 : 0o644 };
    }
  };
  walk(dir, '');
  return crateEntries(name, version, files);
}
