#!/usr/bin/env -S node --import tsx
// Development entry point: oclif in development mode with tsx loaded. CommonJS
// like bin/run.js (bin/package.json); oclif is given the package root, since it
// would otherwise take bin/package.json for the package.
'use strict';
const { join } = require('node:path');

(async () => {
  require('node:v8').setFlagsFromString('--liftoff-only'); // as bin/run.js: the CLI only, never the library
  const { execute } = await import('@oclif/core');
  await execute({ development: true, dir: join(__dirname, '..') });
})();
