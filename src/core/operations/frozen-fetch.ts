/**
 * What `install --frozen` needs only when an entry must be fetched: fetching and
 * verifying a locked entry into staging, and committing it (prepare.ts, and with
 * it every source kind, the download and the unpacker). frozen.ts imports this
 * module lazily, once it knows some entry is not installed as locked, so a warm
 * run (every entry in place) never loads that code. The oclif-free runner of a
 * warm `install --frozen` (src/cli/fast-frozen.ts) is built without it and hands
 * over to the full runner when this import is reached (scripts/build-cli.mjs).
 */
export { commitPackage, prepareExactly } from './prepare.js';
