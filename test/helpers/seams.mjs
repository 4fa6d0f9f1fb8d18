/**
 * ./seams.cjs for ES modules (the tests and helpers import this file; seams.d.mts
 * types it). Loaded with Node's own require, so the preload the children run and
 * the seams in-process tests get are one implementation.
 */
import { createRequire } from 'node:module';

const seams = createRequire(import.meta.url)('./seams.cjs');

export const { parseResolve, seamsFromEnv, withSeams } = seams;
