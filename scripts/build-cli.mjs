#!/usr/bin/env node
/**
 * Bundle the CLI (esbuild) into dist/bundle/ so start-up reads a few files
 * instead of resolving ~400 modules one by one:
 *   cli.cjs           oclif, its runner with our top-level error report
 *                     (src/cli/oclif-main.ts; bin/run.js calls its `main`), the
 *                     help class, the command_not_found hook and every command,
 *                     one CommonJS file. It exports COMMANDS, HELP and
 *                     COMMAND_NOT_FOUND as getters (package.json oclif:
 *                     explicit command strategy), and each module in it is
 *                     evaluated only when first required, so a command runs
 *                     only its own code. CommonJS because the ESM loader cost
 *                     ~45 ms per command for the ~40 chunk files it resolved,
 *                     linked and evaluated one by one (docs/performance.md,
 *                     round three);
 *   lib/*.cjs         the large libraries only some commands use (undici, zod,
 *                     ajv, simple-git, cacache, the @inquirer prompts), each a
 *                     self-contained CommonJS file that cli.cjs requires where
 *                     the source imports it: V8 parses every byte of a script it
 *                     loads (~20-30 ms per MB here), evaluated or not;
 *   api.cjs,          the programmatic API (src/index.ts), CommonJS sharing
 *   index.js          lib/*.cjs, behind index.js, the ES module package.json
 *                     exports, which re-exports it;
 *   fast-path.cjs     the oclif-free runner for `list` and `__complete`
 *                     (src/cli/fast-path.ts), one self-contained CommonJS file,
 *   doctor-early.cjs  starts the server plain `doctor <dir>` checks before fast-doctor.cjs loads
 *                     (src/cli/doctor-early.ts),
 *   fast-doctor.cjs   the one for plain `doctor <target>` (src/cli/fast-doctor.ts),
 *                     with its own V8 code cache (fast-doctor.cjs.v8cache),
 *   table-engine.cjs  but for the table engine for non-ASCII text (cli-table3),
 *                     which it requires only when it draws such a table;
 *   fast-net.cjs,     the oclif-free runner for the plain shapes of install and
 *   fast-net-run.cjs  update (src/cli/fast-net.ts): the first only checks the
 *                     arguments, the second (required only for a shape it
 *                     accepts) runs the command body, with lib/*.cjs;
 *   fast-cmd.cjs,     the oclif-free runner for the plain shapes of the commands
 *   fast-cmd-run.cjs  with a shared body (src/cli/command-bodies.ts: enable,
 *                     disable, remove, set-secret, verify): the first decides
 *                     with each command's argument definitions, read from its
 *                     oclif class here (src/cli/static-shape.ts) and inlined;
 *                     the second runs the body (with its own V8 code cache,
 *                     fast-cmd-run.cjs.v8cache);
 *   fast-frozen.cjs   the same body for `install --frozen` without the fetching
 *                     code (src/cli/fast-frozen.ts): a warm run needs no more,
 *                     and it hands over to fast-net-run.cjs when an entry must
 *                     be fetched.
 * A new command needs no registration: every dist/commands file is in COMMANDS,
 * under the id oclif's file discovery gave it (lock/export.js -> lock:export).
 * Runs after tsc: it bundles dist/, not src/. Every dependency is bundled (the
 * published package has no runtime dependencies; package.json devDependencies),
 * except the optional native @napi-rs/keyring.
 *
 *   node scripts/build-cli.mjs [--meta FILE]   (--meta writes esbuild's metafile)
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const COMMANDS_DIR = join(DIST, 'commands');

function commandFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return commandFiles(p);
    return d.name.endsWith('.js') ? [p] : [];
  });
}

const files = commandFiles(COMMANDS_DIR).sort();

const metaIndex = process.argv.indexOf('--meta');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Never needed at run time: oclif reaches for them only to run TypeScript
  // sources (bin/dev.js); the keyring is a native optional dependency.
  external: ['@napi-rs/keyring', 'typescript', 'ts-node', 'tsx', 'tsx/*'],
  // src/core/version.ts reads package.json relative to itself unless told.
  define: { YEP_EXT_BUNDLED_VERSION: JSON.stringify(version) },
  metafile: metaIndex > 0,
  logLevel: 'warning',
};
// `list` never fetches. Each source kind (src/core/sources/*-source.ts) imports its
// fetcher (http, git, the .crate unpacker) lazily; CommonJS has no chunks, so the
// fast path would inline them all (a megabyte to parse on every `list`). There they
// resolve to a module that throws: a fetch reached from the fast path is a bug.
const noFetchers = {
  name: 'no-fetchers-in-the-fast-path',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import' && /[\\/]core[\\/]sources[\\/][^\\/]+-source\.js$/.test(args.importer)
        ? { path: args.path, namespace: 'no-fetchers' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-fetchers' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not bundled into the list fast path`)});`,
      loader: 'js',
    }));
  },
};
// `install --frozen` imports its fetching code (src/core/operations/frozen-fetch.ts) only
// when an entry must be fetched, and, in fast-frozen.cjs, that import throws the key
// src/cli/fast-frozen.ts's FROZEN_HAND_OVER names: the runner then hands the command over
// to fast-net-run.cjs. (`--enable`'s lazy import of enable.js, which fast-net.ts never
// accepts, is left out the same way as the fetchers above.)
const frozenHandOver = {
  name: 'frozen-hand-over',
  setup(b) {
    b.onResolve({ filter: /^(\.\/frozen-fetch|\.\.\/core\/operations\/enable)\.js$/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: args.path, namespace: 'frozen-hand-over' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'frozen-hand-over' }, (args) => ({
      contents: args.path.endsWith('frozen-fetch.js')
        ? "throw Object.assign(new Error('install --frozen must fetch: fast-net-run.cjs takes over'), { [Symbol.for('yep-ext.frozen-hand-over')]: true });"
        : `throw new Error(${JSON.stringify(`${args.path} is not bundled into fast-frozen.cjs`)});`,
      loader: 'js',
    }));
  },
};
// The zod schemas (src/core/package/manifest-schema.ts) are imported lazily, for a
// manifest the generated check rejects; CommonJS has no chunks, so the fast path
// inlined zod (~50 KB parsed on every `list`). There the import is a file of its own,
// manifest-schema.cjs, required only then. It returns problem strings and holds no
// state, so the few small modules it shares with fast-path.cjs being copied is harmless.
const schemaApart = {
  name: 'manifest-schema-apart',
  setup(b) {
    b.onResolve({ filter: /\/manifest-schema\.js$/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: './manifest-schema.cjs', external: true } : undefined,
    );
  },
};
// zod's classic API exports every locale (z.locales and z.core.locales, ~300 KB of the
// 580 KB it adds to fast-doctor.cjs) though English, the default, is imported on its
// own (zod's classic/schemas.js); nothing of ours reads either. In fast-doctor.cjs
// those namespaces are empty: 825 -> 531 KB for V8 to parse (or deserialise) per `doctor`.
const noZodLocales = {
  name: 'no-zod-locales',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic[\\/]external|core[\\/]index)\.js$/.test(args.importer) ? { path: 'zod-locales', namespace: 'no-zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-zod-locales' }, () => ({ contents: '', loader: 'js' }));
  },
};
// lib/mcp.cjs (the MCP SDK's client) shares lib/zod.cjs for the zod 4 it imports (`zod/v4` is
// `zod` and `zod/v4-mini` is `zod/mini` in zod 4; its `zod/v3` compatibility layer stays in), and
// leaves out its default JSON Schema validator (ajv with its formats): doctor gives the client its
// own (src/core/mcp/probe.ts: it calls no tool, so no output schema is ever checked).
const mcpShared = {
  name: 'mcp-shared',
  setup(b) {
    const fromSdk = (args) => /[\\/]@modelcontextprotocol[\\/]sdk[\\/]/.test(args.importer);
    b.onResolve({ filter: /^zod\/(v4|v4-mini)$/ }, (args) => (fromSdk(args) ? { path: args.path, namespace: 'mcp-zod' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'mcp-zod' }, (args) => ({
      contents: `module.exports = require('./zod.cjs')[${JSON.stringify(args.path === 'zod/v4' ? 'zod' : 'zod/mini')}];`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\/zod\.cjs$/ }, (args) => (args.namespace === 'mcp-zod' ? { path: args.path, external: true } : undefined));
    b.onResolve({ filter: /^\.\.\/validation\/ajv-provider\.js$/ }, (args) => (fromSdk(args) ? { path: args.path, namespace: 'mcp-no-ajv' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'mcp-no-ajv' }, () => ({
      contents:
        "export class AjvJsonSchemaValidator { constructor() { throw new Error('yep-ext bundles no default JSON Schema validator for the MCP client: pass jsonSchemaValidator'); } }",
      loader: 'js',
    }));
  },
};
// The large libraries some commands use, each a CommonJS file of its own
// (lib/<file>.cjs) that exports the specifiers our code imports as lazy getters
// (zod and zod/mini share one copy of zod's core). Libraries only: they hold no
// state of ours, so a second copy of a helper they share costs bytes, not identity.
const LIBS = {
  undici: ['undici'],
  zod: ['zod', 'zod/mini'],
  ajv: ['ajv'],
  'simple-git': ['simple-git'],
  cacache: ['cacache'],
  // The four prompts we use, not the @inquirer/prompts barrel: it bundles every prompt, the
  // editor's with iconv-lite's encoding tables (660 -> ~90 KB; docs/performance.md, round nine).
  prompts: ['@inquirer/confirm', '@inquirer/input', '@inquirer/password', '@inquirer/select'],
  // The MCP SDK's client (doctor's probes of the MCP servers a manifest declares: src/core/mcp/),
  // loaded only when a manifest declares one.
  mcp: [
    '@modelcontextprotocol/sdk/client/index.js',
    '@modelcontextprotocol/sdk/client/streamableHttp.js',
    '@modelcontextprotocol/sdk/shared/stdio.js',
    '@modelcontextprotocol/sdk/types.js',
  ],
};
// Packages whose one export is `default` (each @inquirer prompt): their lib getter gives that
// function itself, as Node's ESM `import()` does. Our bundles convert `import()` to require in
// Node's CommonJS interop mode, where `default` is the whole exports object, so the getter
// giving the exports object would make `(await import('@inquirer/confirm')).default` that
// object instead of the prompt.
const DEFAULT_ONLY = new Set(LIBS.prompts);
const libOf = new Map(Object.entries(LIBS).flatMap(([file, specs]) => specs.map((spec) => [spec, file])));
/**
 * An import of one of `files`' libraries (LIBS keys) from our code (not from inside another
 * package) becomes a small module that requires the library's file; the rest are bundled in.
 */
const libsApartOf = (files) => ({
  name: `libs-apart-${files.join('-')}`,
  setup(b) {
    const mine = new Map([...libOf].filter(([, file]) => files.includes(file)));
    b.onResolve({ filter: /^[@a-z]/ }, (args) =>
      mine.has(args.path) && !/[\\/]node_modules[\\/]/.test(args.importer) ? { path: args.path, namespace: 'yep-lib' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'yep-lib' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`./lib/${libOf.get(args.path)}.cjs`)})[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\/lib\/[^/]+\.cjs$/ }, (args) => (args.namespace === 'yep-lib' ? { path: args.path, external: true } : undefined));
  },
});
const libsApart = libsApartOf(Object.keys(LIBS));
const commandIds = files.map((f) => [
  relative(COMMANDS_DIR, f)
    .replace(/\.js$/, '')
    .split(/[\\/]/)
    .filter((p) => p !== 'index')
    .join(':'),
  f,
]);
// The argument definitions of the commands with a shared body (src/cli/command-bodies.ts), read
// from their oclif classes (src/cli/static-shape.ts), for the oclif-free runner fast-cmd.cjs to
// parse with. A command there that is not plain enough to parse without oclif fails the build.
const { BODIES } = await import(pathToFileURL(join(DIST, 'cli', 'command-bodies.js')).href);
const { staticShape } = await import(pathToFileURL(join(DIST, 'cli', 'static-shape.js')).href);
const fastCommands = [];
for (const id of Object.keys(BODIES)) {
  const file = commandIds.find(([cid]) => cid === id)?.[1];
  if (!file) throw new Error(`src/cli/command-bodies.ts names ${id}, which is no command`);
  const def = staticShape(
    id,
    (await import(pathToFileURL(file).href)).default,
    commandIds.map(([cid]) => cid),
  );
  if ('reason' in def) throw new Error(`${id} has a body in src/cli/command-bodies.ts but the oclif-free runner cannot parse for it: ${def.reason}`);
  fastCommands.push(def);
}
const requireFromCli = (f) => JSON.stringify(`./${relative(join(DIST, 'cli'), f).split('\\').join('/')}`);
// cli.cjs's entry: getters, so that loading the file evaluates nothing but them.
const cliEntry = [
  'const COMMANDS = {};',
  ...commandIds.map(
    ([id, f]) => `Object.defineProperty(COMMANDS, ${JSON.stringify(id)}, { enumerable: true, get: () => require(${requireFromCli(f)}).default });`,
  ),
  'module.exports = Object.defineProperties({}, {',
  "  main: { enumerable: true, get: () => require('./oclif-main.js').main },",
  "  HELP: { enumerable: true, get: () => require('./help.js').default },",
  "  COMMAND_NOT_FOUND: { enumerable: true, get: () => require('./hooks/command-not-found.js').default },",
  '  COMMANDS: { enumerable: true, value: COMMANDS },',
  '});',
].join('\n');
// Less text to scan at load; identifiers are kept so stack traces stay readable.
const cjsCommon = {
  ...common,
  format: 'cjs',
  minifyWhitespace: true,
  minifySyntax: true,
  define: { ...common.define, 'import.meta.url': '__yepImportMetaUrl' },
  banner: { js: "const __yepImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
};
rmSync(join(DIST, 'bundle'), { recursive: true, force: true });
const [main, cli, fast] = await Promise.all([
  // The programmatic API (import from "yep-ext"): api.cjs, CommonJS like cli.cjs and
  // sharing its lib/*.cjs, behind index.js, an ES module that re-exports it (Node
  // finds the names through the export list esbuild writes at the end of api.cjs).
  build({
    ...cjsCommon,
    entryPoints: { api: join(DIST, 'index.js') },
    outdir: join(DIST, 'bundle'),
    outExtension: { '.js': '.cjs' },
    plugins: [libsApart],
  }),
  build({
    ...cjsCommon,
    // Names this build for its code cache (bin/run.js: requireWithCodeCache).
    footer: { js: `// yep-build ${randomBytes(8).toString('hex')}` },
    stdin: { contents: cliEntry, resolveDir: join(DIST, 'cli'), sourcefile: 'cli-entry.cjs', loader: 'js' },
    outfile: join(DIST, 'bundle', 'cli.cjs'),
    plugins: [libsApart],
  }),
  // One self-contained CommonJS file: every extra module costs the ESM loader a
  // resolve, a read and a compile, and an ESM import of a builtin (node:fs)
  // evaluates all of its lazy getters (which loads Node's stream stack).
  build({
    ...cjsCommon,
    footer: { js: `// yep-build ${randomBytes(8).toString('hex')}` },
    supported: { 'dynamic-import': false },
    entryPoints: {
      'fast-path': join(DIST, 'cli', 'fast-path.js'),
      'table-engine': join(DIST, 'cli', 'table-engine.js'),
      'manifest-schema': join(DIST, 'core', 'package', 'manifest-schema.js'),
    },
    outdir: join(DIST, 'bundle'),
    outExtension: { '.js': '.cjs' },
    // fast-path.cjs requires table-engine.cjs at run time instead of holding it.
    // (One `plugins` key: a second one below silently replaced this list.)
    plugins: [
      noFetchers,
      schemaApart,
      {
        name: 'table-engine-apart',
        setup(b) {
          b.onResolve({ filter: /\/table-engine\.js$/ }, (args) => (args.kind === 'entry-point' ? undefined : { path: './table-engine.cjs', external: true }));
        },
      },
    ],
  }),
  // The oclif-free runner of install and update: fast-net.cjs only decides (tiny),
  // fast-net-run.cjs (bin/run.js loads it for a shape the first accepts) runs the command body, requiring lib/*.cjs as cli.cjs does. It
  // runs alone in its process (never beside cli.cjs), so its copy of our modules
  // has no twin to disagree with.
  build({
    ...cjsCommon,
    footer: { js: `// yep-build ${randomBytes(8).toString('hex')}` },
    supported: { 'dynamic-import': false },
    entryPoints: {
      'fast-net': join(DIST, 'cli', 'fast-net.js'),
      'fast-net-run': join(DIST, 'cli', 'fast-net-run.js'),
    },
    outdir: join(DIST, 'bundle'),
    outExtension: { '.js': '.cjs' },
    plugins: [libsApart],
  }),
  // The oclif-free runner of the commands with a shared body (src/cli/fast-cmd.ts: enable,
  // disable, remove, set-secret, verify): fast-cmd.cjs decides (bin/run.js asks it before every
  // oclif run; tiny, with the commands' definitions inlined), fast-cmd-run.cjs (required only
  // for a shape the first accepts) runs the body, each body's modules evaluated on first use.
  build({
    ...cjsCommon,
    define: { ...cjsCommon.define, YEP_EXT_FAST_COMMANDS: JSON.stringify(fastCommands) },
    // Names this build for fast-cmd-run.cjs's code cache; `import()` as `require`, as for
    // fast-doctor.cjs (compiled in a vm.Script: the lazy import of manifest-schema.cjs).
    footer: { js: `// yep-build ${randomBytes(8).toString('hex')}` },
    supported: { 'dynamic-import': false },
    entryPoints: {
      'fast-cmd': join(DIST, 'cli', 'fast-cmd.js'),
      'fast-cmd-run': join(DIST, 'cli', 'fast-cmd-run.js'),
    },
    outdir: join(DIST, 'bundle'),
    outExtension: { '.js': '.cjs' },
    plugins: [noFetchers, schemaApart, libsApart],
  }),
  // The oclif-free runner of a warm `install --frozen` (src/cli/fast-frozen.ts): the same
  // body without the fetching code, which it hands over to fast-net-run.cjs for.
  build({
    ...cjsCommon,
    entryPoints: { 'fast-frozen': join(DIST, 'cli', 'fast-frozen.js') },
    outdir: join(DIST, 'bundle'),
    outExtension: { '.js': '.cjs' },
    plugins: [noFetchers, frozenHandOver, schemaApart, libsApart],
  }),
  // The oclif-free runner of `doctor <target>` (src/cli/fast-doctor.ts): a file of its
  // own, so that `list` does not parse the doctor and zod, named for its code cache.
  build({
    ...cjsCommon,
    footer: { js: `// yep-build ${randomBytes(8).toString('hex')}` },
    entryPoints: { 'fast-doctor': join(DIST, 'cli', 'fast-doctor.js'), 'doctor-early': join(DIST, 'cli', 'doctor-early.js') },
    // `import()` as `require`: bin/run.js compiles fast-doctor.cjs with its code cache in a
    // vm.Script, where Node 20 gave the lazy import of manifest-schema.cjs no loader
    // (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING: every invalid manifest was an internal error).
    supported: { 'dynamic-import': false },
    outdir: join(DIST, 'bundle'),
    outExtension: { '.js': '.cjs' },
    // The MCP SDK (and undici, for a proxied MCP server) as cli.cjs requires them: lib/*.cjs,
    // loaded only by a manifest that declares an MCP server.
    plugins: [noFetchers, schemaApart, noZodLocales, libsApartOf(['mcp', 'undici'])],
  }),
  ...Object.entries(LIBS).map(([file, specs]) =>
    build({
      ...cjsCommon,
      stdin: {
        contents: specs
          .map(
            (spec) =>
              `Object.defineProperty(exports, ${JSON.stringify(spec)}, { enumerable: true, get: () => require(${JSON.stringify(spec)})${DEFAULT_ONLY.has(spec) ? '.default' : ''} });`,
          )
          .join('\n'),
        resolveDir: ROOT,
        sourcefile: `lib-${file}.cjs`,
        loader: 'js',
      },
      outfile: join(DIST, 'bundle', 'lib', `${file}.cjs`),
      ...(file === 'mcp' ? { plugins: [mcpShared] } : {}),
    }),
  ),
]);
if (metaIndex > 0) {
  writeFileSync(
    process.argv[metaIndex + 1],
    JSON.stringify({
      inputs: { ...main.metafile.inputs, ...cli.metafile.inputs, ...fast.metafile.inputs },
      outputs: { ...main.metafile.outputs, ...cli.metafile.outputs, ...fast.metafile.outputs },
    }),
  );
}
// The V8 code caches (dist/bundle/<file>.v8cache), for Node 20, which has no compile cache of
// its own: each made by this Node in a fresh process with no V8 flags set, as bin/run.js loads
// them (V8 rejects a cache made under other flags or by another V8, and bin/run.js then compiles
// as usual: requireWithCodeCache).
// A Node with its own compile cache (22.1+) never reads these (bin/run.js requires the
// bundles plainly there), and a cache only fits the V8 that made it: built by such a
// Node they would be dead weight in the package (Node 24's are larger: the package went
// over its 8 MiB budget). (dist/bundle is emptied above, so none is left from a Node 20 build.)
const CODE_CACHES = !(await import('node:module')).default.enableCompileCache;
// cli.cjs's is made after loading the bundle and evaluating the runner, help, hook and every
// command module, so the functions those run are in it too (YEP_EXT_CODE_CACHE_WARM=0: the top
// level only).
const WARM = process.env.YEP_EXT_CODE_CACHE_WARM ?? '1';
// The runners' caches hold their top level only. fast-cmd-run.cjs: 100 KB; ~5-8 ms of CPU per
// enable/disable/verify on Node 20, median of 21 interleaved runs; one made after evaluating
// every body was 184 KB for the same gain (docs/performance.md, round eight). fast-net-run.cjs:
// 253 KB; 81 -> 69 ms of CPU per path install, median of 21 interleaved runs (round nine; rounds
// four and six had measured no gain only because V8 flags set before it loaded made V8 refuse
// every cache). fast-path.cjs, `list`'s runner: 88 KB; ~3-5 ms of `list`'s ~45-50 ms of CPU
// (round nine). fast-frozen.cjs, the warm `install --frozen` runner, has none: measured by CPU
// time over 21-51 interleaved runs, rounds four and six, the gain was within noise.
const CACHED = [
  [
    'cli.cjs',
    `if (${JSON.stringify(WARM)} === '1') { void cli.main; void cli.HELP; void cli.COMMAND_NOT_FOUND; for (const id of Object.keys(cli.COMMANDS)) void cli.COMMANDS[id]; }`,
  ],
  ['fast-doctor.cjs', ''],
  ['fast-cmd-run.cjs', ''],
  ['fast-net-run.cjs', ''],
  ['fast-path.cjs', ''],
];
for (const [name, warm] of CODE_CACHES ? CACHED : []) {
  const made = spawnSync(
    process.execPath,
    [
      '-e',
      `const file = ${JSON.stringify(join(DIST, 'bundle', name))};
let make;
const cli = require(${JSON.stringify(join(ROOT, 'bin', 'run.js'))}).requireWithCodeCache(file, { write: (m) => { make = m; } });
${warm}
require('node:fs').writeFileSync(file + '.v8cache', make());`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, NODE_ENV: 'production' } },
  );
  if (made.status !== 0) throw new Error(`writing the code cache of ${name} failed (status ${made.status})`);
}
writeFileSync(
  join(DIST, 'bundle', 'index.js'),
  "// The programmatic API (src/index.ts), bundled as api.cjs (scripts/build-cli.mjs).\nexport * from './api.cjs';\n",
);
