/**
 * Prebuilt server binaries (docs/binaries.md, step 1): when the server command
 * cannot be resolved, download this host target's artifact named by the
 * crate's metadata (the yolop `binaries` template, else cargo-binstall's
 * `pkg-url`), verify it, and place the one file named like the command at
 * `<package>/bin/<command>` (mode 0755). Verification, strongest first:
 *   - a digest inside the checksummed crate (`capabilityServer.binary_sha256`):
 *     then it is the only digest that counts, no `.sha256` is fetched;
 *   - a minisign signature by the key the crate declares (binstall `signing`):
 *     a bad or missing signature refuses the binary;
 *   - otherwise the host's form: a mandatory `<url>.sha256` from the release host.
 * Every failure is a note, not an error: the package stays installed, nothing is
 * placed, and `refused` tells integrity refusals apart (for `install --frozen`).
 * The shared download cache (cache/download-cache.ts) is asked first, under the
 * artifact URL: what it holds is re-hashed on read and then verified by the very
 * same checks as a download (a candidate that fails them is dropped and the
 * artifact downloaded); a verified download is put in it.
 * Only Ctrl-C propagates.
 */
import { removeWork, makeDirs } from '../fs/custody.js';
import { chmod, mkdtemp, readFile } from 'node:fs/promises';
import { sha256File } from '../fs/file-digest.js';
import { dirname, join } from 'node:path';
import type { Context } from '../context.js';
import { isYepError } from '../errors.js';
import { binaryCacheKey, cachedDigestOf, readCachedInto, storeInCache } from '../cache/download-cache.js';
import { checkFetchUrl, httpDownload, httpGet, type DownloadResult } from '../net/http.js';
import type { Manifest } from '../package/manifest.js';
import { decideArtifact, type ArtifactPlan } from './artifact-source.js';
import type { CargoFacts, PkgFmt } from './binstall-meta.js';
import type { BinaryRecord, DigestSource } from './binary-record.js';
import { extractArtifact } from './extract-artifact.js';
import { verifiedWith } from './binary-describe.js';
import { LEGACY_MAX_BYTES, MinisignError, parsePublicKey, parseSignature, verifyFile } from './minisign.js';
import { hostTarget } from './target.js';
import { inspectServerCommand } from '../package/inspect-command.js';
import { TemplateError } from './template.js';
import { COMMAND_RE } from './command-name.js';

export { hostTarget } from './target.js';
export { binaryUrl } from './artifact-source.js';

/** Why a binary that was there to take was refused (an integrity failure, not a gap). */
type BinaryRefusal = 'digest-mismatch' | 'signature-invalid' | 'unverifiable';

export interface BinaryOutcome {
  /** SHA-256 of the verified download, when a binary was placed (the lock's binary_sha256). */
  sha256?: string;
  /** Set when a binary was placed: the lock keys to record (binary-record.ts). */
  record?: BinaryRecord;
  /** Where the binary was written. */
  path?: string;
  /** The artifact URL used. */
  url?: string;
  /** Why no binary was installed, when one was wanted. */
  note?: string;
  /** Set when an artifact was found but failed verification: nothing was placed. */
  refused?: BinaryRefusal;
  /** No artifact matches this host target (none declared, or the release host has none): a build may step in. */
  unavailable?: boolean;
  /** The minisign trusted comment, when a signature was verified. */
  trustedComment?: string;
}

export interface ProvisionOptions {
  /** The crate's Cargo.toml facts (binstall metadata), when it has one. */
  cargo?: CargoFacts;
  /** Override the host target (tests). */
  target?: string;
}

const DEFAULT_MAX_BINARY_BYTES = 512 * 1024 * 1024;
const SHA_LINE_RE = /^([0-9a-f]{64})(?:\s|$)/;

function maxBinaryBytes(env: Record<string, string | undefined>): number {
  const n = Number(env.YEP_EXT_MAX_BINARY_BYTES);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : DEFAULT_MAX_BINARY_BYTES;
}

interface Found {
  got: DownloadResult;
  url: string;
  fmt: PkgFmt;
}

/**
 * The first candidate URL the shared cache holds an artifact for (copied to `file`
 * and re-hashed; with a crate digest, only that digest's bytes). Not yet verified.
 */
async function cachedFirst(ctx: Context, plan: ArtifactPlan, file: string): Promise<Found | undefined> {
  for (const [i, url] of plan.urls.entries()) {
    const sha256 = await cachedDigestOf(ctx, binaryCacheKey(url));
    if (sha256 === undefined || (plan.expected !== undefined && sha256 !== plan.expected)) continue;
    const size = await readCachedInto(ctx, sha256, file);
    if (size !== undefined) return { got: { url, size, sha256 }, url, fmt: plan.fmts[i] as PkgFmt };
  }
  return undefined;
}

/** Download the first candidate the release host has; undefined when it has none (all 404/410/451). */
async function downloadFirst(ctx: Context, plan: ArtifactPlan, file: string, label: string): Promise<Found | undefined> {
  for (const [i, url] of plan.urls.entries()) {
    checkFetchUrl(url, 'The prebuilt binary URL');
    try {
      const got = await httpDownload(ctx, url, file, {
        what: `Downloading the ${plan.target} binary`,
        maxBytes: maxBinaryBytes(ctx.env),
        progressLabel: label,
      });
      return { got, url, fmt: plan.fmts[i] as PkgFmt };
    } catch (e) {
      if (isYepError(e) && e.code === 'E_NOT_FOUND') continue;
      throw e;
    }
  }
  return undefined;
}

type Check = { ok: true; trustedComment?: string } | { ok: false; refused: BinaryRefusal; why: string };
type Verified = { ok: true; source?: DigestSource; trustedComment?: string } | { ok: false; refused: BinaryRefusal; note: string };

/** Every check an artifact must pass, wherever its bytes came from (release host or cache). */
async function verifyArtifact(ctx: Context, plan: ArtifactPlan, found: Found, file: string): Promise<Verified> {
  const { url } = found;
  const digest = await checkDigest(ctx, plan, url, found.got.sha256);
  if (!digest.ok) return { ok: false, refused: digest.refused, note: `no prebuilt binary installed: ${digest.why}` };
  const signature = await checkSignature(ctx, plan, url, file);
  if (!signature.ok) return { ok: false, refused: signature.refused, note: `no prebuilt binary installed: ${url}: ${signature.why}` };
  return {
    ok: true,
    ...(digest.source ? { source: digest.source } : {}),
    ...(signature.trustedComment !== undefined ? { trustedComment: signature.trustedComment } : {}),
  };
}

async function checkSignature(ctx: Context, plan: ArtifactPlan, url: string, file: string): Promise<Check> {
  const signing = plan.signing;
  if (!signing) return { ok: true };
  if (signing.algorithm !== 'minisign')
    return {
      ok: false,
      refused: 'unverifiable',
      why: `the crate signs with ${JSON.stringify(signing.algorithm)}, which yep-ext cannot verify (only minisign)`,
    };
  let sigUrl: string;
  try {
    sigUrl = (plan.signatureUrl as (u: string) => string)(url);
  } catch (e) {
    if (e instanceof TemplateError) return { ok: false, refused: 'unverifiable', why: `the crate's signing.file template: ${e.message}` };
    throw e;
  }
  try {
    const key = parsePublicKey(signing.pubkey);
    const res = await httpGet(ctx, sigUrl, { what: `The signature ${sigUrl}`, maxBytes: 8192, passStatuses: [404, 410, 451] });
    if (res.status !== 200)
      return { ok: false, refused: 'signature-invalid', why: `the crate declares a minisign key but ${sigUrl} is missing (status ${res.status})` };
    const trustedComment = await verifyFile(key, parseSignature(res.body.toString('utf8')), file, async (f) => {
      // The artifact this run downloaded into its own fresh temp directory (never a user's file), already size-capped.
      const buf = await readFile(f);
      if (buf.length > LEGACY_MAX_BYTES) throw new MinisignError(`legacy (not pre-hashed) signatures are checked only up to ${LEGACY_MAX_BYTES} bytes`);
      return buf;
    });
    return { ok: true, trustedComment };
  } catch (e) {
    if (e instanceof MinisignError) return { ok: false, refused: 'signature-invalid', why: `minisign signature check failed: ${e.message}` };
    throw e;
  }
}

async function checkDigest(ctx: Context, plan: ArtifactPlan, url: string, got: string): Promise<Check & { source?: DigestSource }> {
  if (plan.expected !== undefined) {
    if (got === plan.expected) return { ok: true, source: 'crate' };
    return { ok: false, refused: 'digest-mismatch', why: `${url} does not match the digest inside the crate (wanted ${plan.expected}, got ${got})` };
  }
  // A signature by the crate's key vouches for the bytes by itself.
  if (plan.signing) return { ok: true, source: 'signature' };
  const shaUrl = `${url}.sha256`;
  const res = await httpGet(ctx, shaUrl, { what: `The checksum file ${shaUrl}`, maxBytes: 4096, passStatuses: [404, 410, 451] });
  if (res.status !== 200)
    return { ok: false, refused: 'unverifiable', why: `${shaUrl} is missing (status ${res.status}), and yep-ext never installs an unverified binary` };
  const wanted = SHA_LINE_RE.exec(res.body.toString('utf8').trimStart())?.[1];
  if (!wanted) return { ok: false, refused: 'unverifiable', why: `${shaUrl} does not start with a lowercase hex SHA-256` };
  if (wanted !== got) return { ok: false, refused: 'digest-mismatch', why: `${url} does not match its published SHA-256 (wanted ${wanted}, got ${got})` };
  return { ok: true, source: 'release-host' };
}

/**
 * Provide the server binary for the package at `pkgDir` from a prebuilt
 * artifact. The caller has already seen that the command does not resolve.
 */
export async function provisionBinary(ctx: Context, pkgDir: string, manifest: Manifest, options: ProvisionOptions = {}): Promise<BinaryOutcome> {
  const server = manifest.yolop.capabilityServer;
  if (server.binaries === undefined && options.cargo?.binstall === undefined) return {};
  if ((await inspectServerCommand(pkgDir, server.command, ctx.env.PATH ?? '')).ok) return {};
  const command = server.command;
  if (!COMMAND_RE.test(command)) return { note: `no prebuilt binary: the command "${command}" is not a plain file name` };
  const target = options.target ?? hostTarget();
  if (!target) return { unavailable: true, note: `no prebuilt binary for ${process.platform}-${process.arch}` };
  const decision = decideArtifact({ manifest, ...(options.cargo ? { cargo: options.cargo } : {}), target });
  if (decision.kind === 'none') return { unavailable: true, note: `no prebuilt binary: ${decision.reason}` };
  if (decision.kind === 'unusable') return { note: `no prebuilt binary installed: ${decision.reason}` };
  const plan = decision.plan;
  const binDir = join(pkgDir, 'bin');
  const dest = join(binDir, command);

  // Downloads land beside the package (in staging), never inside it until verified.
  const tmp = await mkdtemp(join(dirname(pkgDir), '.yep-artifact-'));
  const partial = join(tmp, 'artifact');
  try {
    let found = await cachedFirst(ctx, plan, partial);
    let verified = found ? await verifyArtifact(ctx, plan, found, partial) : undefined;
    if (found && verified && !verified.ok) {
      // A stale or altered cache entry (the release host moved on): never installed, downloaded afresh.
      ctx.log.debug(`the cached artifact for ${found.url} failed verification (${verified.note}); downloading it`);
      found = undefined;
    } else if (found) ctx.log.debug(`prebuilt artifact ${found.url} from the download cache`);
    if (!found) {
      found = await downloadFirst(ctx, plan, partial, `Downloading ${command}`);
      if (!found) return { unavailable: true, note: `no prebuilt binary: the release host has no ${target} artifact (${plan.urls.join(', ')})` };
      verified = await verifyArtifact(ctx, plan, found, partial);
      if (!verified.ok) return { url: found.url, refused: verified.refused, note: verified.note };
      await storeInCache(ctx, found.got.sha256, partial, binaryCacheKey(found.url));
    }
    const { got, url, fmt } = found;
    const checks = verified as Extract<Verified, { ok: true }>;

    await makeDirs(binDir, 0o755);
    const why = await extractArtifact(partial, fmt, plan.pick, dest, tmp, maxBinaryBytes(ctx.env), ctx.signal);
    if (why) return { url, note: `no prebuilt binary installed: ${url}: ${why}` };
    await chmod(dest, 0o755);
    const fileSha = fmt === 'bin' ? got.sha256 : await sha256File(dest);
    const record: BinaryRecord = {
      binary_sha256: got.sha256,
      binary_file_sha256: fileSha,
      binary_source: 'prebuilt',
      ...(checks.source ? { binary_digest_source: checks.source } : {}),
      ...(plan.signing ? { binary_signature: 'minisign' as const } : {}),
      binary_target: target,
    };
    ctx.log.info(
      `Installed the prebuilt ${target} server binary bin/${command} (sha256 ${got.sha256.slice(0, 12)}…, verified with ${verifiedWith(checks.source)}${plan.signing && checks.source === 'crate' ? ' and its minisign key' : ''}).`,
    );
    return { sha256: got.sha256, path: dest, url, record, ...(checks.trustedComment !== undefined ? { trustedComment: checks.trustedComment } : {}) };
  } catch (e) {
    // The disk's state (a full disk, a read-only store) fails the install: it is no reason to go on without the binary.
    if (!isYepError(e) || e.code === 'E_INTERRUPTED' || e.code === 'E_STATE') throw e;
    return { note: `no prebuilt binary installed: ${e.message}` };
  } finally {
    await removeWork(tmp);
  }
}
