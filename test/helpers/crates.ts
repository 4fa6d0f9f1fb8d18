/**
 * Real `.crate` files for tests, on top of the byte-level tar-builder: gzip'd
 * GNU tar shaped like `cargo package` output (regular files only, root
 * `{name}-{version}/`, exec bit kept), from a source tree under
 * test/fixtures/crates/ or an in-memory file map. `entries` appends raw tar
 * entries (links, devices, `..`, bad checksums) for hostile-archive tests.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from './home.js';
import { buildTar, crateEntries, type CrateFile, type TarEntry } from './tar-builder.js';

export const FIXTURE_CRATES = join(REPO_ROOT, 'test', 'fixtures', 'crates');
const PACKAGED_CRATES = join(REPO_ROOT, 'test', 'fixtures', 'packaged');

type FileSpec = string | Uint8Array | CrateFile;

export interface CrateOptions {
  name: string;
  version: string;
  /** A source tree to pack (every regular file, exec bit kept). */
  dir?: string;
  /** Files relative to the crate root (override `dir` files of the same path). */
  files?: Record<string, FileSpec>;
  /** Raw tar entries (full paths) appended after the regular files. */
  entries?: TarEntry[];
  /** Cut the uncompressed tar to this many bytes before gzip. */
  truncateTarAt?: number;
  /** zlib's level (default 6); 0 stores the tar in gzip's stored blocks. */
  gzipLevel?: number;
}

/** The file map of a source tree: relative path -> {content, mode}. */
export function readTree(dir: string): Record<string, CrateFile> {
  const files: Record<string, CrateFile> = {};
  const walk = (abs: string): void => {
    for (const name of readdirSync(abs).sort()) {
      const p = join(abs, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) files[relative(dir, p).split(sep).join('/')] = { content: readFileSync(p), mode: st.mode & 0o111 ? 0o755 : 0o644 };
    }
  };
  walk(dir);
  return files;
}

/** A gzip'd `.crate` for `name`@`version`. */
export function buildCrate(o: CrateOptions): Buffer {
  const files: Record<string, FileSpec> = { ...(o.dir ? readTree(o.dir) : {}), ...o.files };
  const sorted = Object.fromEntries(
    Object.keys(files)
      .sort()
      .map((k) => [k, files[k]!]),
  );
  let tar = buildTar([...crateEntries(o.name, o.version, sorted), ...(o.entries ?? [])]);
  if (o.truncateTarAt !== undefined) tar = tar.subarray(0, o.truncateTarAt);
  return gzipSync(tar, o.gzipLevel === undefined ? {} : { level: o.gzipLevel });
}

/**
 * A `.crate` from test/fixtures/crates/<crate>/ at `version`: the version in its
 * Cargo.toml and plugin.json is rewritten so one tree can be published at many
 * versions (and, with `publishAs`, under another crate name).
 */
export function fixtureCrate(crate: string, version: string, extra: Omit<CrateOptions, 'name' | 'version' | 'dir'> & { publishAs?: string } = {}): Buffer {
  // The same arguments make the same bytes (the tar's times and owners are fixed, gzip is
  // deterministic), and the files of a run's worker ask for the same few crates again and
  // again: each is read, packed and compressed once per worker. A copy is handed out, so a
  // caller that changes its crate's bytes changes no other caller's.
  const key = cacheKey(crate, version, extra);
  let built = key === undefined ? undefined : builtCrates.get(key);
  if (built === undefined) {
    built = packFixture(crate, version, extra);
    if (key !== undefined) builtCrates.set(key, built);
  }
  return Buffer.from(built);
}

/** fixtureCrate's crates by their arguments (see there). */
const builtCrates = new Map<string, Buffer>();
/** The fixture trees by directory, read once per worker: test/fixtures/crates/ is never written by a test. */
const fixtureTrees = new Map<string, Record<string, CrateFile>>();

/** The size of one file above which a crate is not kept: such a file is a test's own blob (random data), built once. */
const KEPT_FILE_BYTES = 64 * 1024;

/**
 * The arguments of a fixtureCrate call as a string, or undefined for a crate not kept: one
 * with raw tar entries (whose fields a test may build from objects of its own), or with a
 * large file of bytes (a blob no other call repeats, which would stay in memory for nothing).
 */
function cacheKey(crate: string, version: string, extra: Omit<CrateOptions, 'name' | 'version' | 'dir'> & { publishAs?: string }): string | undefined {
  if (extra.entries !== undefined) return undefined;
  const files: unknown[] = [];
  for (const [rel, f] of Object.entries(extra.files ?? {})) {
    const file = typeof f === 'string' || f instanceof Uint8Array ? { content: f } : f;
    if ((typeof file.content === 'string' ? file.content.length : file.content.byteLength) > KEPT_FILE_BYTES) return undefined;
    const content = typeof file.content === 'string' ? `s${file.content}` : `b${createHash('sha256').update(file.content).digest('hex')}`;
    files.push([rel, file.mode ?? null, content]);
  }
  return JSON.stringify([crate, version, extra.publishAs ?? null, extra.truncateTarAt ?? null, extra.gzipLevel ?? null, files]);
}

function packFixture(crate: string, version: string, extra: Omit<CrateOptions, 'name' | 'version' | 'dir'> & { publishAs?: string }): Buffer {
  const dir = join(FIXTURE_CRATES, crate);
  let read = fixtureTrees.get(dir);
  if (read === undefined) {
    read = readTree(dir);
    fixtureTrees.set(dir, read);
  }
  const tree: Record<string, FileSpec> = { ...read };
  const patch = (rel: string, edit: (text: string) => string): void => {
    const f = tree[rel] as CrateFile | undefined;
    if (f) tree[rel] = { content: edit(Buffer.from(f.content).toString('utf8')), mode: f.mode ?? 0o644 };
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
