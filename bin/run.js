#!/usr/bin/env node
// Production entry point. Start-up is most of the cost of a quick command, so:
// - this file is CommonJS (bin/package.json): an ES module entry costs the ESM
//   loader, and `import` of node:fs evaluates all of fs's lazy getters;
// - `--version` is answered here;
// - `list` runs without oclif when its arguments are plain, and so does
//   `__complete` (shell completion) (dist/bundle/fast-path.cjs; it declines
//   anything else, doing nothing), and so do the plain shapes of `install`
//   and `update` (dist/bundle/fast-net.cjs, the same way) and plain
//   `doctor <target>` (dist/bundle/fast-doctor.cjs), and the plain shapes of
//   enable, disable, remove, set-secret and verify (dist/bundle/fast-cmd.cjs
//   decides, from the commands' own definitions); on Node 20 each runner but
//   the warm `install --frozen` one compiles from a V8 code cache, as cli.cjs does
//   (requireWithCodeCache; Node 22+ has its own compile cache);
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

/**
 * `require(file)` for dist/bundle/cli.cjs, compiled with the V8 code cache that
 * `npm run build` writes beside it (<file>.v8cache; scripts/build-cli.mjs).
 * Compiling the 1.3 MB bundle and the functions a command runs costs ~50-60 ms
 * of CPU per run on Node 20; deserialising the cache ~15 ms. Node 22.1+ has its
 * own cache (enableCompileCache above, which `require` uses), so there and
 * whenever the cache is missing, stale or rejected (another Node or V8 flags)
 * this is a plain `require`. The cache names the build it was made from (the
 * bundle's last line), since V8 itself checks only the source's length. The
 * module lands in require.cache like any other, so oclif's own require of the
 * bundle (package.json oclif: explicit strategy) gets this same instance.
 */
function requireWithCodeCache(file, { write } = {}) {
  const Module = require('node:module');
  if (Module.enableCompileCache && !write) return require(file);
  const fs = require('node:fs');
  let cached;
  let source;
  try {
    cached = write ? undefined : fs.readFileSync(`${file}.v8cache`);
    source = fs.readFileSync(file, 'utf8');
  } catch {
    return require(file);
  }
  const id = /\n\/\/ yep-build ([0-9a-f]+)\n?$/.exec(source)?.[1];
  // The build and the Node that made the cache: V8 checks only its own version and flags,
  // and two Node builds on one V8 version may still differ (Node's own cache keys on both).
  const tag = `${id} ${process.version} ${process.arch}\n`;
  if (!write && (!id || cached.subarray(0, tag.length).toString('latin1') !== tag)) return require(file);
  const vm = require('node:vm');
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cached ? { cachedData: cached.subarray(tag.length) } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(require('node:path').dirname(file));
  Module._cache[file] = mod;
  try {
    script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, require('node:path').dirname(file));
  } catch (e) {
    delete Module._cache[file];
    throw e;
  }
  mod.loaded = true;
  if (write) write(() => Buffer.concat([Buffer.from(tag, 'latin1'), script.createCachedData()]));
  return mod.exports;
}

/**
 * The V8 set-up of a command that may download (the oclif path and the oclif-free
 * install/update runner), made so that V8's flags are as Node started them whenever a
 * module is compiled. Node's built-in modules (http, zlib, crypto, worker_threads,
 * streams...) and our bundles' code caches are accepted by V8 only under the flags they
 * were made with: setting --liftoff-only before loading made every built-in compile from
 * source, ~11 ms of CPU (~14 ms with --expose-gc too), docs/performance.md round nine. So:
 * - --liftoff-only, which matters only to undici's wasm HTTP parser (undici is loaded
 *   lazily: src/core/net/undici-send.ts), is set by a hook that module calls just before
 *   it loads undici. undici parses HTTP with llhttp compiled to WebAssembly; V8 tiers hot
 *   wasm functions up with TurboFan on a background thread, and Node's exit joins that
 *   thread: ~200 ms of every network command went to waiting for a compile nobody would
 *   use. Baseline (Liftoff) code is plenty for headers and body bytes, and this process
 *   runs no other wasm. Set in the CLI only: the library (src/index.ts) finds no hook and
 *   changes nothing process-wide (issue 13);
 * - V8's gc, for the core to collect buffer garbage during long transfers
 *   (src/core/fs/buffer-garbage.ts: ~25 MiB less peak RSS for a 68 MB download), is
 *   exposed in a new context (where an exposed gc appears; this one's globals stay as
 *   they are) and the flag is unset again before `load`: the function keeps working, the
 *   flags are back to Node's own.
 */
function loadForNetwork(load) {
  const v8 = require('node:v8');
  v8.setFlagsFromString('--expose-gc');
  globalThis[Symbol.for('yep-ext.collect-garbage')] = require('node:vm').runInNewContext('gc');
  v8.setFlagsFromString('--no-expose-gc');
  globalThis[Symbol.for('yep-ext.before-wasm')] = () => v8.setFlagsFromString('--liftoff-only');
  return load();
}

/** dist/bundle/fast-net-run.cjs, the oclif-free install/update runner, compiled from its code cache (Node 20; scripts/build-cli.mjs). */
const loadFastNetRun = () => loadForNetwork(() => requireWithCodeCache(join(root, 'dist', 'bundle', 'fast-net-run.cjs')));

if (require.main !== module) {
  // scripts/build-cli.mjs writes the code cache through this file's loader.
  module.exports = { requireWithCodeCache };
} else if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8'));
  process.stdout.write(`yep-ext/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  (async () => {
    // V8's code cache for the bundle, on disk (Node 22.1+; Node's default directory,
    // <tmp>/node-compile-cache, as tsc does; NODE_COMPILE_CACHE moves it and
    // NODE_DISABLE_COMPILE_CACHE=1 turns it off). Node 20 has no such call: skipped.
    require('node:module').enableCompileCache?.();
    if (
      (argv[0] === 'list' || argv[0] === '__complete') &&
      (await (await loadBundle(() => requireWithCodeCache(join(root, 'dist', 'bundle', 'fast-path.cjs')))).runFastPath(argv))
    )
      return;
    // The plain shapes of install and update run without oclif too (dist/bundle/fast-net.cjs
    // decides; it declines anything else, doing nothing).
    // A warm `install --frozen` tries dist/bundle/fast-frozen.cjs first (no fetching code; no V8
    // set-up, as it runs no wasm and downloads nothing), which hands over to fast-net-run.cjs
    // when an entry must be fetched (src/cli/fast-frozen.ts).
    if (
      (argv[0] === 'install' || argv[0] === 'update') &&
      (await (await loadBundle(() => require('../dist/bundle/fast-net.cjs'))).runFastNet(argv, loadFastNetRun, () => require('../dist/bundle/fast-frozen.cjs')))
    )
      return;
    // Plain `doctor <target>` too (src/cli/fast-doctor.ts; it declines the rest). The
    // server is started first (src/cli/doctor-early.ts), so that its start-up overlaps
    // the load of doctor's code; doctor adopts it only if it is exactly its own spawn,
    // and kills and reaps it otherwise (as here, when the runner declines).
    if (argv[0] === 'doctor') {
      const early = await (await loadBundle(() => require('../dist/bundle/doctor-early.cjs'))).startEarlyDoctorServer(argv);
      if (await (await loadBundle(() => requireWithCodeCache(join(root, 'dist', 'bundle', 'fast-doctor.cjs')))).runFastDoctor(argv, early)) return;
      await early?.discard();
      // A Ctrl-C that the early servers' handler took: end as it would have ended this process.
      if (early?.interrupted) process.kill(process.pid, 'SIGINT');
    }
    // The plain shapes of the commands with a shared body (enable, disable, remove, set-secret,
    // verify: src/cli/command-bodies.ts) run without oclif too: dist/bundle/fast-cmd.cjs parses
    // them with each command's own definitions and declines anything else, doing nothing. No V8
    // set-up: they download nothing and run no wasm. The runner has a code cache like fast-doctor.cjs's.
    if (
      await (await loadBundle(() => require('../dist/bundle/fast-cmd.cjs'))).runFastCommand(argv, () =>
        requireWithCodeCache(join(root, 'dist', 'bundle', 'fast-cmd-run.cjs')),
      )
    )
      return;
    const { main } = await loadForNetwork(() => loadBundle(() => requireWithCodeCache(join(root, 'dist', 'bundle', 'cli.cjs'))));
    // The package root, not this directory: bin/package.json would pass for it.
    await main(root);
  })();
}
