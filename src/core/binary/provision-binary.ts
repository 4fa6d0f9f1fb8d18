/**
 * Prebuilt server binaries (host-compat §2, `capabilityServer.binaries`): when
 * the server command cannot be resolved, download `<url>` for this host's Rust
 * target triple, verify it against the mandatory `<url>.sha256`, and install the
 * file named like the command as `<package>/bin/<command>` (mode 0755). Every
 * failure is a note, not an error: the package stays installed and the user is
 * told why its server cannot start yet. Only Ctrl-C propagates.
 */
import { chmod, lstat, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import * as tar from 'tar';
import { inspectServerCommand } from '../doctor/inspect-command.js';
import type { Context } from '../context.js';
import { isYepError } from '../errors.js';
import { checkFetchUrl, httpDownload, httpGet } from '../net/http.js';
import type { Manifest } from '../package/manifest.js';

export interface BinaryOutcome {
  /** SHA-256 of the verified download (record it in the lock as binary_sha256). */
  sha256?: string;
  /** Where the binary was written. */
  path?: string;
  /** Why no binary was installed, when one was wanted. */
  note?: string;
}

const DEFAULT_MAX_BINARY_BYTES = 512 * 1024 * 1024;
const COMMAND_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const SHA_LINE_RE = /^([0-9a-f]{64})(?:\s|$)/;

function isMusl(): boolean {
  // glibcVersionRuntime is absent on musl (Alpine) builds of Node.
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header !== undefined && header.glibcVersionRuntime === undefined;
}

/** This host as a Rust target triple, or undefined when no prebuilt binary can fit it. */
export function hostTarget(platform: NodeJS.Platform = process.platform, arch: string = process.arch, musl: () => boolean = isMusl): string | undefined {
  const cpu = ({ x64: 'x86_64', arm64: 'aarch64' } as Record<string, string>)[arch];
  if (!cpu) return undefined;
  switch (platform) {
    case 'linux':
      return `${cpu}-unknown-linux-${musl() ? 'musl' : 'gnu'}`;
    case 'darwin':
      return `${cpu}-apple-darwin`;
    case 'win32':
      return `${cpu}-pc-windows-msvc`;
    default:
      return undefined;
  }
}

/** Fill the `{name}`, `{version}`, `{target}` markers. */
export function binaryUrl(template: string, values: { name: string; version: string; target: string }): string {
  return template.replaceAll('{name}', values.name).replaceAll('{version}', values.version).replaceAll('{target}', values.target);
}

function maxBinaryBytes(env: Record<string, string | undefined>): number {
  const n = Number(env.YEP_EXT_MAX_BINARY_BYTES);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : DEFAULT_MAX_BINARY_BYTES;
}

async function exists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    () => false,
  );
}

/** Pull the one regular file named `command` out of a .tar.gz into `dest`. */
async function extractCommand(archive: string, command: string, dest: string, tmpParent: string): Promise<boolean> {
  const tmp = await mkdtemp(join(tmpParent, '.yep-binary-'));
  try {
    let picked: string | undefined;
    tar.x({
      file: archive,
      cwd: tmp,
      sync: true,
      strict: true,
      maxReadSize: 1 << 20,
      filter: (p, entry) => {
        const ok = picked === undefined && (entry as { type?: string }).type === 'File' && basename(p) === command && !p.split(/[\\/]/).includes('..') && !p.startsWith('/');
        if (ok) picked = p;
        return ok;
      },
    });
    if (picked === undefined) return false;
    await rename(join(tmp, picked), dest);
    return true;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Provide the server binary for the package at `pkgDir` when its manifest names a
 * `binaries` template and the command is not already resolvable.
 */
export async function provisionBinary(ctx: Context, pkgDir: string, manifest: Manifest): Promise<BinaryOutcome> {
  const server = manifest.yolop.capabilityServer;
  if (!server.binaries) return {};
  if ((await inspectServerCommand(pkgDir, server.command, ctx.env.PATH ?? '')).ok) return {};
  const command = server.command;
  if (!COMMAND_RE.test(command)) return { note: `no prebuilt binary: the command "${command}" is not a plain file name` };
  const target = hostTarget();
  if (!target) return { note: `no prebuilt binary for ${process.platform}-${process.arch}; put ${command} on PATH or in the package's bin/` };
  const binDir = join(pkgDir, 'bin');
  const dest = join(binDir, command);
  if (await exists(dest)) return { note: `bin/${command} exists but is not executable; not replacing it with a download` };

  const url = binaryUrl(server.binaries, { name: manifest.name, version: manifest.version ?? '', target });
  const partial = join(binDir, `.${command}.download.partial`);
  try {
    checkFetchUrl(url, 'The prebuilt binary URL');
    const shaUrl = `${url}.sha256`;
    const shaRes = await httpGet(ctx, shaUrl, { what: `The checksum file ${shaUrl}`, maxBytes: 4096, passStatuses: [404, 410, 451] });
    if (shaRes.status !== 200) return { note: `no prebuilt binary installed: ${shaUrl} is missing (status ${shaRes.status}), and yep-ext never installs an unverified binary` };
    const wanted = SHA_LINE_RE.exec(shaRes.body.toString('utf8').trimStart())?.[1];
    if (!wanted) return { note: `no prebuilt binary installed: ${shaUrl} does not start with a lowercase hex SHA-256` };

    await mkdir(binDir, { recursive: true, mode: 0o755 });
    const got = await httpDownload(ctx, url, partial, { what: `Downloading the ${target} binary of ${manifest.name}`, maxBytes: maxBinaryBytes(ctx.env), progressLabel: `Downloading ${command}` });
    if (got.sha256 !== wanted) {
      return { note: `no prebuilt binary installed: ${url} does not match its published SHA-256 (wanted ${wanted}, got ${got.sha256})` };
    }
    const path = new URL(url).pathname.toLowerCase();
    if (path.endsWith('.tar.gz') || path.endsWith('.tgz')) {
      if (!(await extractCommand(partial, command, dest, binDir))) return { note: `no prebuilt binary installed: the archive at ${url} holds no file named ${command}` };
    } else if (path.endsWith('.zip') || path.endsWith('.tar.xz') || path.endsWith('.tar.zst')) {
      return { note: `no prebuilt binary installed: ${url} is an archive format yep-ext does not unpack (use .tar.gz or a bare binary)` };
    } else {
      await rename(partial, dest);
    }
    await chmod(dest, 0o755);
    ctx.log.info(`Installed the prebuilt ${target} server binary bin/${command} (sha256 ${got.sha256.slice(0, 12)}…).`);
    return { sha256: got.sha256, path: dest };
  } catch (e) {
    if (!isYepError(e) || e.code === 'E_INTERRUPTED') throw e;
    return { note: `no prebuilt binary installed: ${e.message}` };
  } finally {
    await rm(partial, { force: true });
  }
}

