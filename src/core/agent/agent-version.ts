/**
 * The installed agent's version, as `engines.yolop` checks need it: find the
 * binary (agent-binary), ask it (version-probe), and remember the answer per
 * binary in `<store>/.yep-cache/agent-version.json`, keyed by its real path,
 * size, mtime and ctime (nanoseconds), so `list` pays for a spawn only after the
 * agent changed. Definite answers are kept a day (a version manager's shim keeps
 * its mtime while the version behind it moves), a timeout ten minutes.
 *
 * Never an error: no agent, a broken one or an unreadable cache all give
 * "unknown" (a machine may provision extensions before the agent is installed).
 * One detection per Context: every caller in one run sees the same answer.
 */
import { statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../context.js';
import { makeOwnedDir } from '../fs/custody.js';
import { storeCustody } from '../paths.js';
import { writeFileAtomic } from '../fs/fs-atomic.js';
import { readRegularTextSync } from '../fs/read-regular-file.js';
import { checkEngines, enginesRequirement, type AgentVersion, type EnginesVerdict } from './engines.js';
import { findAgentBinary } from './agent-binary.js';
import { probeAgentVersion, type ProbeResult } from './version-probe.js';

export type { AgentVersion } from './engines.js';

const AGENT_CACHE_FILE = 'agent-version.json';
const CACHE_MAX_BYTES = 64 * 1024;
const MAX_ENTRIES = 8;
const DAY_MS = 24 * 3600 * 1000;
const TRANSIENT_MS = 10 * 60 * 1000;

/** One remembered answer. Stat fields as decimal strings (bigint nanoseconds do not fit JSON numbers). */
interface CacheEntry {
  path: string;
  size: string;
  mtime_ns: string;
  ctime_ns: string;
  version: string | null;
  reason?: string;
  checked_at: number;
  expires_at: number;
}

interface CacheFile {
  v: 1;
  entries: CacheEntry[];
}

type Identity = Pick<CacheEntry, 'path' | 'size' | 'mtime_ns' | 'ctime_ns'>;

function identityOf(realPath: string): Identity | undefined {
  try {
    const st = statSync(realPath, { bigint: true });
    return { path: realPath, size: String(st.size), mtime_ns: String(st.mtimeNs), ctime_ns: String(st.ctimeNs) };
  } catch {
    return undefined;
  }
}

const sameBinary = (e: Identity, id: Identity): boolean => e.path === id.path && e.size === id.size && e.mtime_ns === id.mtime_ns && e.ctime_ns === id.ctime_ns;

function validEntry(e: unknown): e is CacheEntry {
  if (typeof e !== 'object' || e === null) return false;
  const x = e as Record<string, unknown>;
  return (
    typeof x.path === 'string' &&
    typeof x.size === 'string' &&
    typeof x.mtime_ns === 'string' &&
    typeof x.ctime_ns === 'string' &&
    (x.version === null || typeof x.version === 'string') &&
    (x.reason === undefined || typeof x.reason === 'string') &&
    typeof x.checked_at === 'number' &&
    typeof x.expires_at === 'number'
  );
}

function readCache(ctx: Context, file: string): CacheEntry[] {
  try {
    const text = readRegularTextSync(file, 'The agent version cache', { followSymlinks: false, maxBytes: CACHE_MAX_BYTES });
    if (text === undefined) return [];
    const doc = JSON.parse(text) as Partial<CacheFile>;
    return doc.v === 1 && Array.isArray(doc.entries) ? doc.entries.filter(validEntry) : [];
  } catch (e) {
    // A cache is an optimisation: anything wrong with it is a miss.
    ctx.log.debug(`agent version cache not used (${(e as Error).message})`);
    return [];
  }
}

async function writeCache(ctx: Context, file: string, entries: CacheEntry[]): Promise<void> {
  // Never create a store just to remember a version (doctor on a directory, list on an empty home).
  if (!existsSync(ctx.paths.storeDir)) return;
  try {
    await makeOwnedDir(storeCustody(ctx.paths, 'cache'));
    const doc: CacheFile = { v: 1, entries: entries.slice(0, MAX_ENTRIES) };
    await writeFileAtomic(file, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o644, what: 'The agent version cache' });
  } catch (e) {
    ctx.log.debug(`agent version cache not written (${(e as Error).message})`);
  }
}

function toAgent(path: string, r: { version: string | null; reason?: string }): AgentVersion {
  return r.version !== null ? { known: true, version: r.version, path } : { known: false, reason: r.reason ?? 'unknown', path };
}

/** Find and ask the agent, through the cache. */
async function detect(ctx: Context): Promise<AgentVersion> {
  const bin = findAgentBinary(ctx.env);
  if (!bin.found) return { known: false, reason: bin.reason };
  const id = identityOf(bin.realPath);
  if (!id) return { known: false, reason: `${bin.path} cannot be read`, path: bin.path };
  const file = join(ctx.paths.cacheDir, AGENT_CACHE_FILE);
  const entries = readCache(ctx, file);
  const now = ctx.clock.now();
  const hit = entries.find((e) => sameBinary(e, id));
  if (hit && hit.checked_at <= now && now < hit.expires_at) {
    ctx.log.debug(`agent version from cache: ${hit.version ?? hit.reason} (${bin.path})`);
    return toAgent(bin.path, hit);
  }
  const probed: ProbeResult = await probeAgentVersion(bin.path, ctx.env, ctx.waits.agentVersionMs, ctx.spawn);
  const entry: CacheEntry = {
    ...id,
    version: probed.ok ? probed.version : null,
    ...(probed.ok ? {} : { reason: probed.reason }),
    checked_at: now,
    expires_at: now + (!probed.ok && probed.transient ? TRANSIENT_MS : DAY_MS),
  };
  await writeCache(ctx, file, [entry, ...entries.filter((e) => e.path !== id.path)]);
  return toAgent(bin.path, entry);
}

const memo = new WeakMap<Context, Promise<AgentVersion>>();

/**
 * The installed agent's version (`yolop --version` of YOLOP_BIN or `yolop` on
 * PATH), or why it is unknown. Never throws; detects once per Context.
 */
export function detectAgentVersion(ctx: Context): Promise<AgentVersion> {
  let p = memo.get(ctx);
  if (!p) {
    p = detect(ctx).catch((e: unknown) => ({ known: false as const, reason: `could not be determined (${(e as Error)?.message ?? String(e)})` }));
    memo.set(ctx, p);
  }
  return p;
}

/**
 * `engines.yolop` of `manifest` against the installed agent: `none` without asking
 * the agent when the manifest declares no range (most packages), so a command
 * spawns `yolop --version` only when a package needs the answer.
 */
export async function checkAgainstAgent(ctx: Context, manifest: { engines?: unknown }): Promise<EnginesVerdict> {
  if (!enginesRequirement(manifest.engines).declared) return checkEngines(manifest, { known: false, reason: 'not needed' });
  return checkEngines(manifest, await detectAgentVersion(ctx));
}
