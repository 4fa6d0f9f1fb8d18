/**
 * The alternative manifest location for crates: `[package.metadata.yolop]` in
 * Cargo.toml. The host reads only plugin.json, so when a crate declares its
 * manifest this way we write the equivalent plugin.json into the package
 * (host-compat §2). Mapping (docs/crates.md): `name`, `description` and
 * `version` default from the crate; every other key is the `yolop` object.
 */
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { YepError } from '../../errors.js';
import { inspectRegularFile, readRegularTextSync } from '../../fs/read-regular-file.js';
import { writeFileAtomic } from '../../fs/fs-atomic.js';
import { MANIFEST_FILE } from '../../package/manifest.js';
import { CRATE_PREFIX } from '../../package/names.js';

const CARGO_TOML_MAX_BYTES = 1024 * 1024;
const TOP_LEVEL_KEYS = ['name', 'description', 'version'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** TOML values -> JSON values (dates become their TOML text). */
function toJson(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(toJson);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]));
  return v;
}

/** The plugin.json object a Cargo.toml declares, or undefined when it declares none. */
export function manifestFromCargoToml(text: string, crateName: string): Obj | undefined {
  let doc: Obj;
  try {
    doc = parseToml(text) as Obj;
  } catch (e) {
    throw new YepError('E_MANIFEST', `The crate's Cargo.toml is not valid TOML (${(e as Error).message.split('\n')[0]}).`);
  }
  const pkg = isObj(doc.package) ? doc.package : undefined;
  const meta = pkg && isObj(pkg.metadata) ? pkg.metadata : undefined;
  const yolop = meta?.yolop;
  if (yolop === undefined) return undefined;
  if (!isObj(yolop)) throw new YepError('E_MANIFEST', "The crate's [package.metadata.yolop] must be a table.");
  const facet: Obj = {};
  for (const [k, v] of Object.entries(yolop)) if (!(TOP_LEVEL_KEYS as readonly string[]).includes(k)) facet[k] = toJson(v);
  // Written for the host: an MCP server with a url and no type gets its type spelled out,
  // since yolop's plugin.json reader defaults "type" to "stdio" (docs/formats.md, "MCP servers").
  if (isObj(facet.mcpServers))
    for (const server of Object.values(facet.mcpServers))
      if (isObj(server) && server.type === undefined && server.url !== undefined && server.command === undefined) server.type = 'http';
  const shortName = crateName.startsWith(CRATE_PREFIX) ? crateName.slice(CRATE_PREFIX.length) : crateName;
  // description and version default from [package]; the name is the extension name, not the crate's.
  const pick = (key: 'description' | 'version'): unknown => (yolop[key] !== undefined ? yolop[key] : pkg?.[key]);
  const description = pick('description');
  const version = pick('version');
  return {
    name: typeof yolop.name === 'string' ? yolop.name : shortName,
    ...(typeof description === 'string' ? { description } : {}),
    ...(typeof version === 'string' ? { version } : {}),
    yolop: facet,
  };
}

/**
 * The text of `<dir>/Cargo.toml`, the one read of it (the manifest here, the binary step's
 * facts): a plain file (never a link, FIFO or device), at most 1 MiB (E_MANIFEST beyond);
 * undefined when there is none.
 */
export function readCargoToml(dir: string): string | undefined {
  const cargoToml = join(dir, 'Cargo.toml');
  const regular = { followSymlinks: false };
  const info = inspectRegularFile(cargoToml, "The crate's Cargo.toml", regular);
  if (info === undefined) return undefined;
  if (info.stat.size > CARGO_TOML_MAX_BYTES) throw new YepError('E_MANIFEST', `The crate's Cargo.toml is larger than ${CARGO_TOML_MAX_BYTES} bytes; refused.`);
  return readRegularTextSync(cargoToml, "The crate's Cargo.toml", { ...regular, maxBytes: CARGO_TOML_MAX_BYTES });
}

/**
 * If `dir` has no plugin.json but its Cargo.toml declares [package.metadata.yolop],
 * write the equivalent plugin.json. Returns true when one was written.
 */
export async function writeManifestFromCargo(dir: string, crateName: string): Promise<boolean> {
  // Package files are never opened before an lstat says regular file (a FIFO would block the read).
  const regular = { followSymlinks: false };
  if (inspectRegularFile(join(dir, MANIFEST_FILE), 'The manifest', regular) !== undefined) return false;
  const text = readCargoToml(dir);
  if (text === undefined) return false;
  const manifest = manifestFromCargoToml(text, crateName);
  if (!manifest) return false;
  await writeFileAtomic(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o644, what: 'The manifest' });
  return true;
}
