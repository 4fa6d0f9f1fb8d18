#!/usr/bin/env node
// Production entry point. Start-up is most of the cost of a quick command, so:
// - this file is CommonJS (bin/package.json): an ES module entry costs the ESM
//   loader, and `import` of node:fs evaluates all of fs's lazy getters;
// - `--version` is answered here;
// - `list` runs without oclif when its arguments are plain, and so does
//   `__complete` (shell completion) (dist/bundle/fast-path.cjs; it declines
//   anything else, doing nothing);
// - everything else runs oclif from the esbuild bundle (scripts/build-cli.mjs),
//   through src/cli/oclif-main.ts (our error reports instead of oclif's).
// See docs/performance.md.
'use strict';
const { join } = require('node:path');

const root = join(__dirname, '..');
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8'));
  process.stdout.write(`yep-ext/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  (async () => {
    if ((argv[0] === 'list' || argv[0] === '__complete') && (await require('../dist/bundle/fast-path.cjs').runFastPath(argv))) return;
    const { main } = await import('../dist/bundle/oclif.js');
    // The package root, not this directory: bin/package.json would pass for it.
    await main(root);
  })();
}
