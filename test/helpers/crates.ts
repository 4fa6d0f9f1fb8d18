/**
 * Real `.crate` files for tests: gzip'd GNU tar shaped like `cargo package`
 * output (regular files only, root `{name}-{version}/`, `././@LongLink` for long
 * names, uid/gid 0, exec bit kept), built from a source tree under
 * test/fixtures/crates/ or from an in-memory file map. `entries` appends raw
 * entries (links, devices, `..`, absolute paths, bad checksums) that no tar tool
 * would write, for the hostile-archive tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from './home.js';

export const FIXTURE_CRATES = join(REPO_ROOT, 'test', 'fixtures', 'crates');
export const PACKAGED_CRATES = join(REPO_ROOT, 'test', 'fixtures', 'packaged');

export type TarType = 'file' | 'dir' | 'symlink' | 'hardlink' | 'char' | 'block' | 'fifo';
const TYPEFLAG: Record<TarType, string> = { file: '0', hardlink: '1', symlink: '2', char: '3', block: '4', dir: '5', fifo: '6' };

export interface RawEntry {
  /** Full path inside the archive (root included). */
  path: string;
  type?: TarType;
  content?: string | Buffer;
  mode?: number;
  linkpath?: string;
  /** Write a wrong header checksum. */
  badChecksum?: boolean;
}

export type FileSpec = string | Buffer | { content: string | Buffer; mode?: number };

export interface CrateOptions {
  name: string;
  version: string;
  /** A source tree to pack (every regular file, modes kept). */
  dir?: string;
  /** Files relative to the crate root (override `dir` files of the same path). */
  files?: Record<string, FileSpec>;
  /** Raw entries appended after the regular ones. */
  entries?: RawEntry[];
  /** Cut the archive (uncompressed) to this many bytes before gzip. */
  truncateTarAt?: number;
}

const BLOCK = 512;

function octal(h: Buffer, off: number, len: number, n: number): void {
  h.write(`${n.toString(8).padStart(len - 1, '0')}\0`, off, len, 'latin1');
}

function header(name: string, type: string, size: number, mode: number, linkpath = '', badChecksum = false): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, 1153704088); // cargo's fixed mtime (2006-07-24)
  h.write(type, 156, 1, 'latin1');
  h.write(linkpath, 157, 100, 'utf8');
  h.write('ustar  \0', 257, 8, 'latin1'); // GNU magic + version, as tar-rs writes for cargo
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  if (badChecksum) sum += 7;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return h;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [data] : [data, Buffer.alloc(BLOCK - rest)];
}

/** Encode one entry (with GNU long-name/long-link records when needed). */
export function tarEntry(e: RawEntry): Buffer {
  const type = e.type ?? 'file';
  const content = e.content === undefined ? Buffer.alloc(0) : Buffer.from(e.content);
  const out: Buffer[] = [];
  const nameBytes = Buffer.from(e.path, 'utf8');
  if (nameBytes.length > 100) {
    const long = Buffer.concat([nameBytes, Buffer.from([0])]);
    out.push(header('././@LongLink', 'L', long.length, 0o644), ...padded(long));
  }
  const link = e.linkpath ?? '';
  if (Buffer.byteLength(link) > 100) {
    const long = Buffer.concat([Buffer.from(link), Buffer.from([0])]);
    out.push(header('././@LongLink', 'K', long.length, 0o644), ...padded(long));
  }
  const size = type === 'file' ? content.length : 0;
  out.push(header(nameBytes.subarray(0, 100).toString('utf8'), TYPEFLAG[type], size, e.mode ?? (type === 'dir' ? 0o755 : 0o644), link.slice(0, 100), e.badChecksum));
  if (size > 0) out.push(...padded(content));
  return Buffer.concat(out);
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...walk(p));
    else if (st.isFile()) out.push(p);
  }
  return out;
}

/** The file map of a source tree: relative path -> {content, mode}. */
export function readTree(dir: string): Record<string, { content: Buffer; mode: number }> {
  const files: Record<string, { content: Buffer; mode: number }> = {};
  for (const file of walk(dir)) {
    const rel = relative(dir, file).split(sep).join('/');
    files[rel] = { content: readFileSync(file), mode: statSync(file).mode & 0o111 ? 0o755 : 0o644 };
  }
  return files;
}

/** A gzip'd `.crate` for `name`@`version`. */
export function buildCrate(o: CrateOptions): Buffer {
  const root = `${o.name}-${o.version}`;
  const files: Record<string, FileSpec> = { ...(o.dir ? readTree(o.dir) : {}), ...o.files };
  const parts: Buffer[] = [];
  for (const rel of Object.keys(files).sort()) {
    const f = files[rel]!;
    const spec = typeof f === 'string' || Buffer.isBuffer(f) ? { content: f } : f;
    parts.push(tarEntry({ path: `${root}/${rel}`, content: spec.content, mode: spec.mode ?? 0o644 }));
  }
  for (const e of o.entries ?? []) parts.push(tarEntry(e));
  parts.push(Buffer.alloc(BLOCK * 2));
  let tar = Buffer.concat(parts);
  if (o.truncateTarAt !== undefined) tar = tar.subarray(0, o.truncateTarAt);
  return gzipSync(tar);
}

/**
 * A `.crate` from test/fixtures/crates/<crate>/ at `version`: the version in its
 * Cargo.toml and plugin.json is rewritten so one tree can be published at many
 * versions (and, with `publishAs`, under another crate name).
 */
export function fixtureCrate(crate: string, version: string, extra: Omit<CrateOptions, 'name' | 'version' | 'dir'> & { publishAs?: string } = {}): Buffer {
  const tree: Record<string, FileSpec> = readTree(join(FIXTURE_CRATES, crate));
  const patch = (rel: string, edit: (text: string) => string): void => {
    const f = tree[rel] as { content: Buffer; mode: number } | undefined;
    if (f) tree[rel] = { content: Buffer.from(edit(f.content.toString('utf8'))), mode: f.mode };
  };
  patch('Cargo.toml', (t) => t.replace(/^version = ".*"$/m, `version = "${version}"`));
  patch('plugin.json', (t) => t.replace(/"version": "[^"]*"/, `"version": "${version}"`));
  const { publishAs, ...rest } = extra;
  return buildCrate({ name: publishAs ?? crate, version, ...rest, files: { ...tree, ...rest.files } });
}

/** The committed, cargo-made `.crate` (see test/fixtures/packaged/README.md). */
export function packagedCrate(file = 'yolop-extension-cargo-made-0.2.0.crate'): Buffer {
  return readFileSync(join(PACKAGED_CRATES, file));
}
