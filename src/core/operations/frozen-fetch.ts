/**
 * What `install --frozen` needs only when an entry must be fetched: fetching and
 * verifying a locked entry into staging, and committing it (prepare.ts, and with
 * it every source kind, the download and the unpacker). frozen.ts imports this
 * module lazily, once it knows some entry is not installed as locked, so a warm
 * run (every entry in place) never evaluates that code.
 */
export { commitPackage, prepareExactly } from './prepare.js';
