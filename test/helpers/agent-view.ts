/**
 * What yolop would load from a home at this instant, read the way the host reads
 * it and with no yep-ext code involved (the agent runs no recovery):
 *   - which extensions settings.toml enables: every `[[capabilities]]` entry
 *     applied in file order (settings-model.ts, host-compat §5);
 *   - for each, the package the host finds at `<store>/<name>/plugin.json` (a
 *     symlinked entry followed, a manifest naming another extension skipped, as
 *     the host does), as a digest of every file of it (path, exec bit, bytes);
 *   - the config the host passes (that entry's inline config) and the secrets of
 *     its `["ext:<name>"]` table in connections.toml.
 * An enabled extension whose package is missing or unreadable shows `package: null`.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { hostRuns, sortKeys } from './settings-model.js';

export interface LoadedExtension {
  /** Digest of the package's files, or null when the host would find no package. */
  package: string | null;
  config: Record<string, unknown>;
  secrets: Record<string, unknown>;
}

function packageDigest(dir: string, name: string): string | null {
  let manifest: { name?: unknown };
  try {
    if (!statSync(dir).isDirectory()) return null;
    manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8')) as { name?: unknown };
  } catch {
    return null;
  }
  if (manifest.name !== name) return null;
  const lines: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const n of readdirSync(abs).sort()) {
      const p = join(abs, n);
      const r = rel ? `${rel}/${n}` : n;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) lines.push(`${r} -> ${readlinkSync(p)}`);
      else if (st.isDirectory()) walk(p, r);
      else lines.push(`${r} ${st.mode & 0o111 ? 'x' : '-'} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(dir, '');
  return createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 24);
}

/** Every extension yolop would load from the home at `configDir`, with what it would load it with. */
export function agentView(configDir: string, storeDir = join(configDir, 'extensions')): Record<string, LoadedExtension> {
  const settingsFile = join(configDir, 'settings.toml');
  const text = existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : '';
  const caps = (parse(text) as Record<string, unknown>).capabilities;
  const names = new Set<string>();
  for (const c of Array.isArray(caps) ? caps : []) {
    const ref = (c as Record<string, unknown>).ref ?? (c as Record<string, unknown>).id;
    if (typeof ref === 'string' && ref.startsWith('ext:')) names.add(ref.slice(4));
  }
  const secretsFile = join(configDir, 'connections.toml');
  const secrets = existsSync(secretsFile) ? (parse(readFileSync(secretsFile, 'utf8')) as Record<string, Record<string, unknown>>) : {};
  const out: Record<string, LoadedExtension> = {};
  for (const name of [...names].sort()) {
    const runs = hostRuns(text, name);
    if (!runs.enabled) continue;
    out[name] = {
      package: packageDigest(join(storeDir, name), name),
      config: sortKeys(runs.config) as Record<string, unknown>,
      secrets: sortKeys(secrets[`ext:${name}`] ?? {}) as Record<string, unknown>,
    };
  }
  return out;
}
