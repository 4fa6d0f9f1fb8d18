#!/usr/bin/env node
// Production entry point. Start-up is most of the cost of a quick command, so:
// - this file is CommonJS (bin/package.json): an ES module entry costs the ESM
//   loader, and `import` of node:fs evaluates all of fs's lazy getters;
// - `--version` is answered here;
// - everything else runs the dispatcher (src/cli/dispatch.ts: the command table,
//   oclif's parser, the command's handler) from the esbuild bundle
//   dist/bundle/cli.cjs (scripts/build-cli.mjs; CommonJS: require is far cheaper
//   than the ESM loader), compiled from its V8 code cache on Node 20
//   (requireWithCodeCache; Node 22+ has its own compile cache). It returns the
//   exit status; a failure exits at once with it, a success lets the event loop end.
// The published package ships the bundle. A source checkout builds it with
// `npm run build` (npm test does); `npx yep-ext` right after `npm ci` builds it
// once, here, since the package has no install-time script to do it.
// See docs/performance.md.
'use strict';
const { join, relative, sep } = require('node:path');

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
 * `require(file)` for dist/bundle/cli.cjs and the lib/*.cjs files it loads, each compiled
 * with the V8 code cache that `npm run build` writes beside it (<file>.v8cache;
 * scripts/build-cli.mjs). Compiling a bundle and the functions a command runs costs
 * Node 20 several times what deserialising the cache does, on every run. Node 22.1+
 * has its own cache (enableCompileCache above, which `require` uses), so there and
 * whenever the cache is missing, stale or rejected (another Node or V8 flags) this is a
 * plain `require`. The cache names the build it was made from (the file's last line),
 * since V8 itself checks only the source's length. The module lands in require.cache
 * like any other, so oclif's own require of the bundle (package.json oclif: explicit
 * strategy) gets this same instance.
 */
const BUNDLE_DIR = join(root, 'dist', 'bundle');

/**
 * The name V8 knows a cached file by: V8 keeps the script name a cache was made under,
 * whatever name it is later read under, so the build makes it under this neutral name
 * and stack traces name the installed file instead (nameInStacks).
 */
const cachedScriptName = (file) => `yep-ext-bundle:${relative(BUNDLE_DIR, file).split(sep).join('/')}`;

/** Stack traces say the installed file where V8 knows a script by its cached name (frames formatted as V8 formats them). */
const namesInStacks = new Map();
function nameInStacks(name, file) {
  namesInStacks.set(name, file);
  Error.prepareStackTrace = (error, frames) => {
    let head;
    try {
      head = String(error);
    } catch {
      head = 'Error';
    }
    return [
      head,
      ...frames.map((f) => {
        let line = String(f);
        for (const [cached, installed] of namesInStacks) line = line.split(cached).join(installed);
        return `    at ${line}`;
      }),
    ].join('\n');
  };
}

function requireWithCodeCache(file, { write } = {}) {
  const Module = require('node:module');
  if (Module.enableCompileCache && !write) return require(file);
  if (Module._cache[file]) return Module._cache[file].exports;
  const fs = require('node:fs');
  let cached;
  let source;
  try {
    cached = write ? undefined : fs.readFileSync(`${file}.v8cache`);
    // The build makes the bundle ASCII (scripts/build-cli.mjs): latin1 is the same text, decoded faster.
    source = fs.readFileSync(file, 'latin1');
  } catch {
    return require(file);
  }
  const id = /\n\/\/ yep-build ([0-9a-f]+)\n?$/.exec(source)?.[1];
  // The build and the Node that made the cache: V8 checks only its own version and flags,
  // and two Node builds on one V8 version may still differ (Node's own cache keys on both).
  const tag = `${id} ${process.version} ${process.arch}\n`;
  if (!write && (!id || cached.subarray(0, tag.length).toString('latin1') !== tag)) return require(file);
  const vm = require('node:vm');
  const name = cachedScriptName(file);
  // The file's text is the module function (scripts/build-cli.mjs): compiled as read, never copied into a wrapper.
  const script = new vm.Script(source, {
    filename: write ? name : file,
    ...(cached ? { cachedData: cached.subarray(tag.length) } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cached && !script.cachedDataRejected) nameInStacks(name, file);
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
 * How cli.cjs loads its lib/*.cjs files (scripts/build-cli.mjs: each library's stub calls
 * this hook when it is set, and plain `require` when not, as in the library or in tests):
 * through requireWithCodeCache, so that a library a command uses compiles from its cache too.
 */
const REQUIRE_BUNDLED = Symbol.for('yep-ext.require-bundled');

/**
 * The V8 set-up of a command that downloads, made so that V8's flags are as Node
 * started them whenever a module is compiled: Node's built-in modules and the
 * bundle's code cache are accepted by V8 only under the flags they were made with.
 * Both hooks act on first use, long after the bundle is loaded:
 * - --liftoff-only, which matters only to undici's wasm HTTP parser (undici is loaded
 *   lazily: src/core/net/undici-send.ts), is set by a hook that module calls just before
 *   it loads undici. undici parses HTTP with llhttp compiled to WebAssembly; V8 tiers hot
 *   wasm functions up with TurboFan on a background thread, and Node's exit joins that
 *   thread: most of a small network command's time went to waiting for a compile nobody
 *   would use. Baseline (Liftoff) code is plenty for headers and body bytes, and this
 *   process runs no other wasm. Set in the CLI only: the library (src/index.ts) finds no
 *   hook and changes nothing process-wide;
 * - V8's gc, for the core to collect buffer garbage during long transfers
 *   (src/core/fs/buffer-garbage.ts: a lower peak RSS for a large download), is
 *   exposed in a new context (where an exposed gc appears; this one's globals stay as
 *   they are) on the first collection, and the flag is unset again at once.
 */
function setUpV8Hooks() {
  let gc;
  globalThis[Symbol.for('yep-ext.collect-garbage')] = (options) => {
    if (!gc) {
      const v8 = require('node:v8');
      v8.setFlagsFromString('--expose-gc');
      gc = require('node:vm').runInNewContext('gc');
      v8.setFlagsFromString('--no-expose-gc');
    }
    return gc(options);
  };
  globalThis[Symbol.for('yep-ext.before-wasm')] = () => require('node:v8').setFlagsFromString('--liftoff-only');
}

if (require.main !== module) {
  // scripts/build-cli.mjs writes the code cache through this file's loader.
  module.exports = { requireWithCodeCache, REQUIRE_BUNDLED };
} else if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === '-V') {
  // The same line as the dispatcher's versionLine() (src/cli/dispatch.ts).
  const pkg = JSON.parse(require('node:fs').readFileSync(join(root, 'package.json'), 'utf8'));
  process.stdout.write(`yep-ext/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else {
  (async () => {
    // V8's code cache for the bundle, on disk (Node 22.1+; Node's default directory,
    // <tmp>/node-compile-cache, as tsc does; NODE_COMPILE_CACHE moves it and
    // NODE_DISABLE_COMPILE_CACHE=1 turns it off). Node 20 has no such call: skipped.
    require('node:module').enableCompileCache?.();
    setUpV8Hooks();
    globalThis[REQUIRE_BUNDLED] = (file) => requireWithCodeCache(file);
    const { main } = await loadBundle(() => requireWithCodeCache(join(BUNDLE_DIR, 'cli.cjs')));
    const code = await main(argv);
    if (code !== 0) process.exit(code);
  })();
}
