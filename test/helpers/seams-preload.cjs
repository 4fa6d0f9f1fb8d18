/**
 * The CLI's test preload: `node --require=test/helpers/seams-preload.cjs bin/run.js …`
 * (withSeams() in ./seams.cjs adds it through NODE_OPTIONS). Installs the seams
 * the YEP_EXT_TEST_* variables describe where src/cli/test-seams.ts looks for
 * them. Never part of the package. CommonJS: an ES module preload would start
 * Node's ESM loader in every child (./seams.cjs says what that costs).
 */
'use strict';
globalThis[Symbol.for('yep-ext.test-seams')] = require('./seams.cjs').seamsFromEnv(process.env);
