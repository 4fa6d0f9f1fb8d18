/** yep-ext's own version (used in User-Agent and output). */
import { readFileSync } from 'node:fs';

// The CLI bundles (scripts/build-cli.mjs) define this at build time: they live
// elsewhere in dist/ than this module, and it saves a file read at start-up.
declare const YEP_EXT_BUNDLED_VERSION: string | undefined;

export const VERSION: string =
  typeof YEP_EXT_BUNDLED_VERSION === 'string'
    ? YEP_EXT_BUNDLED_VERSION
    : (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
