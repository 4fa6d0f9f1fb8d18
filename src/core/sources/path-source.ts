/**
 * The path kind: a local package referenced in place (the authoring loop). The
 * store entry is a symlink to the user's directory, so nothing is copied, every
 * check re-hashes it, and `update` re-reads it and re-pins what it finds.
 */
import type { Context } from '../context.js';
import { canonicalDir, fetchPath, type PathRecord } from './local-path.js';
import type { Source } from './source.js';
import type { PathSpec } from './spec.js';

export type { PathRecord };

export const pathSource: Source<'path', PathSpec, PathRecord> = {
  kind: 'path',
  noun: 'directory',
  linked: true,
  buildable: false,

  recordKeys: { required: ['path'], optional: [] },

  describe: (rec) => rec.path,
  sameOrigin: (a, b) => a.path === b.path,
  pin: () => '',
  pinnedExactly: () => false,
  // A directory is its own pin: nothing to move toward.
  updateReaches: () => false,
  namesInstalled: (spec, rec) => canonicalDir(spec.path) === canonicalDir(rec.path),
  follows: () => '',
  withFollows: (rec) => rec,
  // Nothing is pinned but the content hash itself.
  checkRepin() {},

  fetch: (ctx: Context, spec) => fetchPath(spec, ctx.paths.storeDir),
  fetchExactly: (ctx, rec) => fetchPath({ kind: 'path', raw: rec.path, path: rec.path }, ctx.paths.storeDir),
  mirror: async () => ({ skipped: 'a path source is local by definition; install it from its directory' }),
};
