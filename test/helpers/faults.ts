/**
 * Crash-test helpers: run the CLI until it reaches a named pause point
 * (src/core/fs/checkpoint.ts), kill -9 it there, and compare homes by everything
 * that makes up the installed state (store tree, lock, grants, settings,
 * secrets) in a form that does not depend on where the home lives.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, lstatSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, type TempHome } from './home.js';
import { buildCrate } from './crates.js';
import { withSeams } from './seams.mjs';

export interface Killed {
  /** stderr of the killed process (for failure messages). */
  stderr: string;
}

/**
 * Run `yep-ext args` until it pauses at `point`, then SIGKILL it. Fails if it
 * exits without reaching the point (the test would otherwise prove nothing).
 */
export async function killAt(point: string, args: string[], env: Record<string, string>, pauseFile: string): Promise<Killed> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: withSeams({ ...env, YEP_EXT_TEST_PAUSE_AT: point, YEP_EXT_TEST_PAUSE_FILE: pauseFile }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const started = Date.now();
  while (!existsSync(pauseFile)) {
    if (exited !== undefined) throw new Error(`yep-ext ${args.join(' ')} exited (${exited}) before reaching ${point}:\n${stderr}`);
    if (Date.now() - started > 30_000) {
      child.kill('SIGKILL');
      throw new Error(`yep-ext ${args.join(' ')} never reached ${point}:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  await new Promise((r) => (exited !== undefined ? r(undefined) : child.on('exit', r)));
  return { stderr };
}

/**
 * What 5 s without a heartbeat does to a killed holder's installer lock (proper-lockfile
 * judges staleness by the lock's mtime): set it back a minute, so the next command that
 * takes the lock recovers at once instead of after a 5 s wait. The takeover is the same.
 */
export function staleLock(home: TempHome): void {
  const lock = join(home.configDir, 'extensions', '.yep-ext.lock');
  const then = new Date(Date.now() - 60_000);
  if (existsSync(lock)) utimesSync(lock, then, then);
}

/** One buffer for every small file `digest` reads. */
const chunk = Buffer.allocUnsafe(1 << 20);

/**
 * The large files `digest` has hashed, with their bytes: the fault crates' blobs are read
 * again at every snapshot of every home that holds them, and a file whose bytes equal one
 * of these (compared whole) has its digest without hashing it again. A few only: a run
 * holds a handful of distinct blobs at a time.
 */
const hashed: { bytes: Buffer; digest: string }[] = [];
const KEPT = 6;

function digest(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < chunk.length) {
      const hash = createHash('sha256');
      for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) hash.update(chunk.subarray(0, n));
      return hash.digest('hex').slice(0, 16);
    }
    const bytes = readFileSync(fd);
    const known = hashed.find((h) => h.bytes.equals(bytes));
    if (known) return known.digest;
    const d = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
    hashed.unshift({ bytes, digest: d });
    hashed.length = Math.min(hashed.length, KEPT);
    return d;
  } finally {
    closeSync(fd);
  }
}

/** Every entry under `dir` as `path: kind mode digest` lines (symlinks by target). */
function tree(dir: string, rel = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const r = rel ? `${rel}/${name}` : name;
    const st = lstatSync(p);
    if (st.isSymbolicLink()) out.push(`${r}: link -> ${readlinkSync(p)}`);
    else if (st.isDirectory()) out.push(`${r}/`, ...tree(p, r));
    else out.push(`${r}: ${(st.mode & 0o777).toString(8)} ${digest(p)}`);
  }
  return out;
}

export interface StateSnapshot {
  /** Store packages (and the approved grants beside the lock); staging and lock files excluded. */
  store: string[];
  lock: string | null;
  settings: string | null;
  secrets: string | null;
}

/** The installed state of a home, comparable across homes. */
export function snapshot(home: TempHome): StateSnapshot {
  const store = join(home.configDir, 'extensions');
  const read = (p: string): string | null => (existsSync(p) ? readFileSync(p, 'utf8') : null);
  // Staging, the installer lock and the download cache are not state; the lock is compared whole below.
  // `.yep-state/` holds stat signatures (inodes, times, this home's paths): a cache that is used
  // only while it names the lock's current content hash and directory (docs/formats.md), so it
  // differs between two homes in the same state and a stale one is never believed
  // (test/cli/verify-repair.test.ts covers what it vouches for).
  const skip = ['.yep-staging', '.yep-ext.lock', '.yep-cache', '.yep-state', 'extensions.lock'];
  // `.yep-grants/<name>.lock.json` is yep-ext's copy of a lock entry (store/custody.ts), written
  // after the lock commit and read only to restore keys a yolop lock write dropped: the lock itself
  // is compared whole, and a missing or older copy costs no state the agent or yep-ext relies on.
  const entries = tree(store).filter(
    (l) => !skip.some((x) => l === `${x}/` || l.startsWith(`${x}/`) || l.startsWith(`${x}:`)) && !/^\.yep-grants\/[^/]+\.lock\.json:/.test(l),
  );
  return {
    store: entries,
    lock: read(join(store, 'extensions.lock')),
    settings: read(join(home.configDir, 'settings.toml')),
    secrets: read(join(home.configDir, 'connections.toml')),
  };
}

/** Staging directories left in a home (crash leftovers until the next command sweeps them). */
export function stagingLeft(home: TempHome): string[] {
  const dir = join(home.configDir, 'extensions', '.yep-staging');
  return existsSync(dir) ? readdirSync(dir) : [];
}

/**
 * The blob of an extension a kill test installs before the command and never fetches at a
 * kill point: nothing of it needs to cross the 1 MiB marks, and every snapshot and home copy
 * reads it whole.
 */
export const BYSTANDER = { blobBytes: 1024 } as const;

/**
 * A `.crate` for an extension whose body is large enough to cross the 1 MiB
 * marks of the download and unpack pause points (incompressible data): by default
 * half a MiB past them, so a kill there finds part of the crate still to come. Every
 * state snapshot, home copy and install reads it whole: no larger than that unless
 * the size is the point (`blobBytes`).
 */
export function faultCrate(name: string, version: string, options: { tools?: string[]; config?: boolean; blobBytes?: number } = {}): Buffer {
  const manifest = {
    name,
    version,
    description: `fault-test extension ${name}`,
    yolop: {
      capabilityServer: { command: `${name}-server` },
      tools: (options.tools ?? ['one']).map((t) => ({ name: t })),
      // A non-secret field (kept in settings.toml) and a secret one (connections.toml).
      ...(options.config
        ? { config_schema: { type: 'object', properties: { level: { type: 'string' }, token: { type: 'string', secret: true, env: 'FX_TOKEN' } } } }
        : {}),
    },
  };
  return buildCrate({
    name: `yolop-extension-${name}`,
    version,
    files: {
      'Cargo.toml': `[package]\nname = "yolop-extension-${name}"\nversion = "${version}"\n`,
      'plugin.json': JSON.stringify(manifest, null, 2),
      [`bin/${name}-server`]: { content: Buffer.from('#!/bin/sh\nexec cat >/dev/null\n'), mode: 0o755 },
      'data/blob.bin': randomBytes(options.blobBytes ?? 1.5 * 1024 * 1024),
    },
    // Random bytes do not compress: deflate at any level emits them as stored blocks, which
    // level 0 writes without searching them for matches first.
    gzipLevel: 0,
  });
}
