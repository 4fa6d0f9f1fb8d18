/**
 * The CLI's test preload: `node --import=test/helpers/seams-preload.mjs bin/run.js …`
 * (withSeams() in ./seams.mjs adds it through NODE_OPTIONS). Installs the seams
 * the YEP_EXT_TEST_* variables describe where src/cli/test-seams.ts looks for
 * them. Never part of the package.
 */
import { seamsFromEnv } from './seams.mjs';

globalThis[Symbol.for('yep-ext.test-seams')] = seamsFromEnv(process.env);
