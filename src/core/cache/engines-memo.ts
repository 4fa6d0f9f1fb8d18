/**
 * What `outdated` downloads a newer `.crate` for: the `engines` value of its
 * plugin.json (the agent range lives only in the package). Once read from a
 * verified download, that value is remembered in the shared cache (cacache, key
 * `yep-ext:engines:<cksum>`), so a later run answers from the registry cksum
 * alone: no download, no unpack, even after the `.crate` itself was pruned.
 * The cksum names exact bytes, so the value never goes stale; the verdict is
 * computed afresh each run against the agent of the day.
 * Trust: an entry only steers `outdated`'s report (update/held). `update` and
 * `install` never read it: they fetch, verify and read the manifest themselves.
 * Every failure (no cache, read-only, corrupted entry) is a miss or a debug note.
 */
import type { Context } from '../context.js';
import { cacheEnabled, loadCacache } from './download-cache.js';

const MAX_MEMO_BYTES = 64 * 1024;

function enginesMemoKey(cksum: string): string {
  return `yep-ext:engines:${cksum}`;
}

/** The remembered `engines` value (`{ engines: undefined }` when the manifest had none), or undefined on a miss. */
export async function recallEngines(ctx: Context, cksum: string): Promise<{ engines: unknown } | undefined> {
  if (!cacheEnabled(ctx.env) || !/^[0-9a-f]{64}$/.test(cksum)) return undefined;
  try {
    const cacache = await loadCacache();
    const info = await cacache.get.info(ctx.paths.sharedCacheDir, enginesMemoKey(cksum));
    if (!info || (info.size ?? 0) > MAX_MEMO_BYTES) return undefined;
    // get() checks the bytes against the entry's integrity: a corrupted entry throws (a miss).
    const { data } = await cacache.get(ctx.paths.sharedCacheDir, enginesMemoKey(cksum));
    const doc = JSON.parse(data.toString('utf8')) as unknown;
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || (doc as { format?: unknown }).format !== 1) return undefined;
    return { engines: (doc as { engines?: unknown }).engines };
  } catch (e) {
    ctx.log.debug(`engines memo not read (${(e as Error).message})`);
    return undefined;
  }
}

/** Remember the `engines` value read from the verified package whose `.crate` hashes to `cksum`. */
export async function rememberEngines(ctx: Context, cksum: string, engines: unknown): Promise<void> {
  if (!cacheEnabled(ctx.env) || !/^[0-9a-f]{64}$/.test(cksum)) return;
  const text = JSON.stringify({ format: 1, engines });
  if (Buffer.byteLength(text) > MAX_MEMO_BYTES) return;
  try {
    const cacache = await loadCacache();
    await cacache.put(ctx.paths.sharedCacheDir, enginesMemoKey(cksum), text, { algorithms: ['sha256'] });
  } catch (e) {
    ctx.log.debug(`engines memo not written (${(e as Error).message})`);
  }
}
