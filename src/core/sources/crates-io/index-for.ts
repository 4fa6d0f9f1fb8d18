/**
 * Which sparse index a recorded crate is fetched from in this run. Its own small
 * module: fetching (crates-io.ts, the mirror) and the policy's view of where the
 * bytes come from (crate-source.ts) must agree, and the latter loads no fetcher.
 */
import { DEFAULT_INDEX_URL, normalizeIndexUrl, type Context } from '../../context.js';

/**
 * The index to use for a recorded source: one chosen for this run (--index /
 * YEP_EXT_INDEX, e.g. a fleet's mirror) wins over the one recorded at install time;
 * the locked cksum pins the bytes wherever they come from.
 */
export function indexFor(ctx: Pick<Context, 'indexUrl'>, recorded: string | undefined): string {
  return ctx.indexUrl !== DEFAULT_INDEX_URL || !recorded ? ctx.indexUrl : normalizeIndexUrl(recorded);
}
