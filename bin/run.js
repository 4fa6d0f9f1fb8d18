#!/usr/bin/env node
// Production entry point. Start-up is most of the cost of a quick command, so:
// - this file is CommonJS (bin/package.json): an ES module entry costs the ESM
//   loader, and `import` of node:fs evaluates all of fs's lazy getters;
// - `--version` is answered here;
// - `list` runs without oclif when its arguments are plain, and so does
//   `__complete` (shell completion) (dist/bundle/fast-path.cjs; it declines
//   anything else, doing nothing);
// - everything else runs oclif from the esbuild bundle dist/bundle/cli.cjs
//   (scripts/build-cli.mjs; CommonJS: require is far cheaper than the ESM
//   loader), through src/cli/oclif-main.ts (our error reports instead of oclif's).
// The published package ships the bundle. A source checkout builds it with
// `npm run build` (npm test does); `npx yep-ext` right after `npm ci` builds it
// once, here, since the package has no install-time script to do it.
// See docs/performance.md.
'use strict';
const { join } = require('node:path');

const root = join(__dirname, '..');
const argv = process.argv.slice(2);

/**
 * A source checkout that was never built: build it once (loudly, on stderr), or
 * explain and exit. Called only when loading the bundle failed because it is not
 * there, so a built checkout or the published package pays no `stat` for it.
 * False when this is no source checkout (nothing to build).
 */
function buildCheckout() {
  const fs = require('node:fs');
  if (fs.existsSync(join(root, 'dist', 'bundle', 'cli.cjs')) || !fs.existsSync(join(root, 'scripts', 'build-cli.mjs'))) return false;
  process.stderr.write('yep-ext: this checkout is not built yet; running `npm run build` once (about 15 s)...\n');
  const npm = process.env.npm_execpath;
  const r = require('node:child_process').spawnSync(npm ? process.execPath : 'npm', [...(npm ? [npm] : []), 'run', '--silent', 'build'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
    shell: !npm && process.platform === 'win32',
  });
  if (r.status !== 0) {
    process.stderr.write(`error: the build failed${r.error ? ` (${r.error.message})` : ''}.\nhint: run \`npm ci && npm run build\` in ${root}.\n`);
    process.exit(1);
  }
  return true;
}

/** `load()`, or, when the bundle itself is missing (an unbuilt checkout), build it and load again. */
async function loadBundle(load) {
  try {
    return await load();
  } catch (e) {
    const missing = (e?.code === 'MODULE_NOT_FOUND' || e?.code === 'ERR_MODULE_NOT_FOUND') && String(e.message).includes(join('dist', 'bundle'));
    if (!missing || !buildCheckout()) throw e;
    return load();
  }
}

if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8'));
  process.stdout.write(`yep-ext/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  (async () => {
    // V8's code cache for the bundle, on disk (Node 22.1+; Node's default directory,
    // <tmp>/node-compile-cache, as tsc does; NODE_COMPILE_CACHE moves it and
    // NODE_DISABLE_COMPILE_CACHE=1 turns it off). Node 20 has no such call: skipped.
    require('node:module').enableCompileCache?.();
    if ((argv[0] === 'list' || argv[0] === '__complete') && (await (await loadBundle(() => require('../dist/bundle/fast-path.cjs'))).runFastPath(argv))) return;
    // undici parses HTTP with llhttp compiled to WebAssembly. V8 tiers hot wasm
    // functions up with TurboFan on a background thread, and Node's exit joins
    // that thread: ~200 ms of every network command went to waiting for a compile
    // nobody would use (docs/performance.md). Baseline (Liftoff) code is plenty for
    // headers and body bytes, and this process runs no other wasm. Set here, in the
    // CLI only: the library (src/index.ts) changes nothing process-wide (issue 13).
    require('node:v8').setFlagsFromString('--liftoff-only');
    const { main } = await loadBundle(() => require('../dist/bundle/cli.cjs'));
    // The package root, not this directory: bin/package.json would pass for it.
    await main(root);
  })();
}
