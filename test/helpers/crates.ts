/**
 * Real `.crate` files for tests, on top of the byte-level tar-builder: gzip'd
 * GNU tar shaped like `cargo package` output (regular files only, root
 * `{name}-{version}/`, exec bit kept), from a source tree under
 * test/fixtures/crates/ or an in-memory file map. `entries` appends raw tar
 * entries (links, devices, `..`, bad checksums) for hostile-archive tests.
 */
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
  const tree: Record<string, FileSpec> = readTree(join(FIXTURE_CRATES, crate));
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
