/**
 * Where registry bytes come from: http(s) through the one HTTP client (http.ts),
 * or a `file://` URL for a mirror on a mounted disk or in the workspace
 * (docs/fleet.md). A `file://` root is the same static tree nginx would serve, read
 * in place: the same caps apply, only regular files are read (a FIFO or device in
 * the tree is refused, never blocks), and a missing file answers 404 so callers
 * treat it exactly like a missing file on a server.
 *
 * `file://` is allowed only where the user chose it: an index root from --index /
 * YEP_EXT_INDEX, and a `dl` in a config.json that itself came from a `file://`
 * root. A remote index can never send us to the local disk.
 */
import { fileURLToPath } from 'node:url';
import type { Context } from '../context.js';
import { YepError, errnoCode, stateIoError, type ErrorCode } from '../errors.js';
import { knownDirOf } from '../paths.js';
import { openRegularFile, readRegularFileSync } from '../fs/read-regular-file.js';
import { writeHashedFile, type HashedWrite } from '../fs/hashed-write.js';
import { checkFetchUrl, httpDownload, httpGet, type DownloadOptions, type DownloadResult, type HttpResult, type RequestOptions } from './http.js';

export function isFileUrl(text: string): boolean {
  return /^file:/i.test(text.trim());
}

/**
 * Police a URL: `checkFetchUrl`'s rules for http(s); a `file://` URL only when
 * `allowFile`, and then only a local one (no host but `localhost`, no query).
 */
export function checkSourceUrl(text: string, what: string, options: { allowFile: boolean; code?: ErrorCode }): URL {
  const code = options.code ?? 'E_NETWORK';
  if (!isFileUrl(text)) return checkFetchUrl(text, what, code);
  if (!options.allowFile) {
    throw new YepError(code, `${what}: refusing a file:// URL here; only a registry root given with --index / YEP_EXT_INDEX may be on the local disk.`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new YepError(code, `${what}: ${JSON.stringify(text)} is not a valid URL.`);
  }
  if (url.host !== '' && url.host !== 'localhost') {
    throw new YepError(code, `${what}: refusing the file URL ${url.href}: it names the host ${url.host}; only local paths (file:///…) are read.`);
  }
  url.hash = '';
  url.search = '';
  return url;
}

function localPath(url: string): string {
  return fileURLToPath(url);
}

const MIRROR_FILE_HINT = 'Check the mirror: every file in it must be a regular file.';

/**
 * A mirror on disk is local state: a file in it that is not a regular file (a FIFO would
 * block the read) is the regular-file guard's own refusal (E_STATE, exit 7), as for every
 * file yep-ext reads from a disk, never a network failure.
 */
function readLocal(url: string, what: string, maxBytes: number): Buffer | undefined {
  return readRegularFileSync(localPath(url), what, { maxBytes, hint: MIRROR_FILE_HINT });
}

/** GET `url`: a file:// URL reads the file (404 when missing), anything else goes through http.ts. */
export async function getUrl(ctx: Context, url: string, options: RequestOptions): Promise<HttpResult> {
  if (!isFileUrl(url)) return httpGet(ctx, url, options);
  const body = readLocal(url, options.what, options.maxBytes);
  if (body === undefined) {
    if (options.passStatuses?.includes(404)) return { status: 404, headers: {}, url, body: Buffer.alloc(0) };
    throw new YepError('E_NOT_FOUND', `${options.what}: ${localPath(url)} does not exist.`);
  }
  ctx.log.debug(`READ ${url}`);
  return { status: 200, headers: {}, url, body };
}

/**
 * Copy the local file of `url` into `file` while hashing it (fs/hashed-write.ts, the same
 * verify-while-writing as httpDownload: a large `.crate` is never held in memory), opened
 * through the regular-file guard (openRegularFile: a regular file only, never blocking on a
 * FIFO, the size cap before reading), the cap again while reading. A failed write is the
 * disk's state (`writeError`), a failed read the mirror's. Undefined when the file does not exist.
 */
async function copyLocal(ctx: Context, url: string, file: string, what: string, maxBytes: number): Promise<HashedWrite | undefined> {
  const path = localPath(url);
  const refuse = (why: string): YepError => new YepError('E_STATE', `${what} ${path} ${why}; refused.`, { hint: MIRROR_FILE_HINT, details: { file: path } });
  const opened = await openRegularFile(path, what, { hint: MIRROR_FILE_HINT, maxBytes });
  if (!opened) return undefined;
  const fh = opened.handle;
  const writeError = (e: unknown): YepError => stateIoError('write the download to', file, e, knownDirOf(ctx.paths, file));
  try {
    return await writeHashedFile(file, fh.createReadStream({ highWaterMark: 1 << 20, autoClose: false }), {
      maxBytes,
      tooBig: () => refuse(`is larger than ${maxBytes} bytes`),
      writeError,
    });
  } finally {
    await fh.close();
  }
}

/** Download `url` into `file` while hashing it; file:// copies the local file, streamed (same caps, same digest). */
export async function downloadUrl(ctx: Context, url: string, file: string, options: DownloadOptions): Promise<DownloadResult> {
  if (!isFileUrl(url)) return httpDownload(ctx, url, file, options);
  const got = await copyLocal(ctx, url, file, options.what, options.maxBytes).catch((e: unknown) => {
    if (e instanceof YepError || errnoCode(e) === undefined) throw e;
    // A write failure was mapped where it happened: what is left is the mirror's side.
    throw stateIoError('read', localPath(url), e);
  });
  if (got === undefined) {
    throw new YepError('E_NOT_FOUND', `${options.what}: ${localPath(url)} does not exist.`, {
      hint: 'The mirror does not hold this file: rebuild it with `yep-ext mirror` from the lock.',
    });
  }
  ctx.log.debug(`READ ${url}`);
  return { url, ...got };
}
