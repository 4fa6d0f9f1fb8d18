#!/usr/bin/env node
/**
 * Bundle the CLI (esbuild) into dist/bundle/ so start-up reads a few files
 * instead of resolving ~400 modules one by one:
 *   cli.cjs           the CLI: its entry (src/cli/main.ts; bin/run.js calls its
 *                     `main`), the dispatcher and the command table, every
 *                     command's handler and oclif's parser, one CommonJS file.
 *                     Each module in it is evaluated only when first required
 *                     or imported, so a command runs only its own code. It also
 *                     exports COMMANDS (the table as oclif classes: package.json
 *                     oclif.commands, explicit strategy, for `oclif manifest`),
 *                     as a getter. CommonJS because the ESM loader resolves,
 *                     links and evaluates a code-split bundle's chunk files
 *                     one by one, on every command (docs/performance.md);
 *   lib/*.cjs         the large libraries only some commands use (undici, zod,
 *                     ajv, simple-git, cacache, the @inquirer prompts, the
 *                     table engine, and oclif's help and config), each a
 *                     self-contained CommonJS file that cli.cjs requires where
 *                     the source imports it: V8 parses every byte of a script it
 *                     loads, evaluated or not;
 *   api.cjs,          the programmatic API (src/index.ts), CommonJS sharing
 *   index.js          lib/*.cjs, behind index.js, the ES module package.json
 *                     exports, which re-exports it.
 * A new command is a file in src/commands and a line in src/cli/command-table.ts.
 * Runs after tsc: it bundles dist/, not src/. Every dependency is bundled (the
 * published package has no runtime dependencies; package.json devDependencies),
 * except the optional native @napi-rs/keyring.
 *
 *   node scripts/build-cli.mjs [--meta FILE]   (--meta writes esbuild's metafile)
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');

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
  // editor's with iconv-lite's encoding tables, several times the four we use.
  prompts: ['@inquirer/confirm', '@inquirer/input', '@inquirer/password', '@inquirer/select'],
  // oclif's help and config (and the rest of its index), for help only: every run parses
  // with the parser's own modules (@oclif/core/parser, /flags, /args), bundled in cli.cjs.
  oclif: ['@oclif/core'],
  // The table engine for non-ASCII text (src/cli/table-engine.ts), only when such a table is drawn.
  table: ['string-width'],
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
const libsApart = {
  name: 'libs-apart',
  setup(b) {
    // An import of a listed library from our code (not from inside another
    // package) becomes a small module that requires the library's file.
    b.onResolve({ filter: /^[@a-z]/ }, (args) =>
      libOf.has(args.path) && !/[\\/]node_modules[\\/]/.test(args.importer) ? { path: args.path, namespace: 'yep-lib' } : undefined,
    );
    // Through bin/run.js's hook when it is set (the CLI: the library's code cache, on Node 20),
    // a plain require when not (the programmatic API, tests that run the CLI in-process).
    b.onLoad({ filter: /.*/, namespace: 'yep-lib' }, (args) => ({
      contents: `const load = globalThis[Symbol.for('yep-ext.require-bundled')];
module.exports = (load ? load(require('node:path').join(__dirname, ${JSON.stringify(`lib/${libOf.get(args.path)}.cjs`)})) : require(${JSON.stringify(`./lib/${libOf.get(args.path)}.cjs`)}))[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\/lib\/[^/]+\.cjs$/ }, (args) => (args.namespace === 'yep-lib' ? { path: args.path, external: true } : undefined));
  },
};
// zod's classic and mini APIs export every locale (z.locales and z.core.locales, about half of
// lib/zod.cjs) though English, the default, is imported on its own (zod's
// classic/schemas.js); nothing of ours reads either, and the library (api.cjs) exposes no
// zod. In lib/zod.cjs those namespaces are empty: less for V8 to compile on every command
// that validates (doctor checks every message it receives).
const noZodLocales = {
  name: 'no-zod-locales',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.c?js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic[\\/]external|mini[\\/]external|core[\\/]index)\.c?js$/.test(args.importer)
        ? { path: 'zod-locales', namespace: 'no-zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-zod-locales' }, () => ({ contents: '', loader: 'js' }));
  },
};
// Every run parses its command line with oclif's parser (src/cli/dispatch.ts), whose
// modules require, at load, what only an error message or help needs: oclif's help and
// config (through its errors index and flags.js), its terminal width (which builds
// process.stdout and process.stderr), readline (for arguments read from stdin, which
// yep-ext never asks for), chalk-like colouring and text wrapping. Here those requires
// are resolved to the module they name, loaded on first use instead of at load: the
// same code runs, later or never. `to` resolves a require to another module that holds
// the same export (CLIError from the errors index is errors/errors/cli.js's); `lib` to
// that export of oclif's index in lib/oclif.cjs (help, which cli.cjs then does not hold).
const OCLIF = dirname(createRequire(import.meta.url).resolve('@oclif/core/package.json'));
const OCLIF_LAZY = {
  'lib/flags.js': { './errors': { to: 'lib/errors/errors/cli.js' }, './help': { lib: '' }, './util/fs': {} },
  'lib/args.js': { './util/fs': {} },
  'lib/parser/index.js': { './help': { lib: 'Parser' } },
  'lib/parser/parse.js': { 'node:readline': {}, '../logger': {} },
  'lib/parser/errors.js': { '../errors': { to: 'lib/errors/errors/cli.js' }, '../ux/list': { default: true }, '../ux/theme': {} },
  'lib/errors/errors/cli.js': {
    'clean-stack': { default: true },
    'indent-string': { default: true },
    'wrap-ansi': { default: true },
    '../../screen': {},
    '../../ux/theme': {},
  },
};
const oclifLazy = {
  name: 'oclif-lazy-requires',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'plain' || args.namespace === 'oclif-lazy' || !args.importer.startsWith(OCLIF)) return undefined;
      const rule =
        OCLIF_LAZY[
          args.importer
            .slice(OCLIF.length + 1)
            .split('\\')
            .join('/')
        ]?.[args.path];
      if (!rule) return undefined;
      if (rule.to) return { path: join(OCLIF, rule.to) };
      if (rule.lib !== undefined) return { path: `${relative(ROOT, args.importer)}#${args.path}`, namespace: 'oclif-lazy', pluginData: { lib: rule.lib } };
      const target = args.path.startsWith('node:')
        ? args.path
        : (await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'plain' })).path;
      // Named relative to the checkout: the name is a module id in the bundle, and the package must not carry the packager's paths.
      return { path: `${relative(ROOT, args.importer)}#${args.path}`, namespace: 'oclif-lazy', pluginData: { target, default: rule.default === true } };
    });
    b.onResolve({ filter: /^\.\/lib\/oclif\.cjs$/ }, (args) => (args.namespace === 'oclif-lazy' ? { path: args.path, external: true } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'oclif-lazy' }, (args) => ({
      // A module object whose properties load the module on first read; for a default import
      // of a CommonJS module (`__importDefault(require(x))`), `default` is that module, as
      // __importDefault would make it.
      contents: `let m;
const load = () => (m ??= ${
        args.pluginData.lib !== undefined
          ? `require('./lib/oclif.cjs')['@oclif/core']${args.pluginData.lib ? `[${JSON.stringify(args.pluginData.lib)}]` : ''}`
          : `require(${JSON.stringify(args.pluginData.target)})`
      });
module.exports = new Proxy({}, {
  get: (_, key) => ${args.pluginData.default ? "key === '__esModule' ? true : key === 'default' ? (load().__esModule ? load().default : load()) : load()[key]" : 'load()[key]'},
});`,
      loader: 'js',
      resolveDir: OCLIF,
    }));
  },
};
// The head of cli.cjs's text (see where it is written, below): the module function, which
// a module load calls and a script run returns.
const CLI_MODULE_FUNCTION_HEAD =
  '(function (f) { return this === globalThis ? f : f(exports, require, module, __filename, __dirname); }).call(this, function (exports, require, module, __filename, __dirname) {';
// cli.cjs's entry: getters, so that loading the file evaluates nothing but them.
const cliEntry = [
  'module.exports = Object.defineProperties({}, {',
  "  main: { enumerable: true, get: () => require('./main.js').main },",
  "  runCli: { enumerable: true, get: () => require('./dispatch.js').runCli },",
  "  COMMANDS: { enumerable: true, get: () => require('./oclif-commands.js').oclifCommands() },",
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
const [main, cli] = await Promise.all([
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
    // `import()` of what is not bundled (node:*, the keyring) as `require`: bin/run.js compiles
    // cli.cjs with its code cache in a vm.Script, where Node 20 gives a dynamic import no
    // loader (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING).
    supported: { 'dynamic-import': false },
    stdin: { contents: cliEntry, resolveDir: join(DIST, 'cli'), sourcefile: 'cli-entry.cjs', loader: 'js' },
    outfile: join(DIST, 'bundle', 'cli.cjs'),
    plugins: [libsApart, oclifLazy],
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
      footer: { js: `// yep-build ${randomBytes(8).toString('hex')}` },
      ...(file === 'zod' ? { plugins: [noZodLocales] } : {}),
      ...(file === 'mcp' ? { plugins: [mcpShared] } : {}),
    }),
  ),
]);
if (metaIndex > 0) {
  writeFileSync(
    process.argv[metaIndex + 1],
    JSON.stringify({ inputs: { ...main.metafile.inputs, ...cli.metafile.inputs }, outputs: { ...main.metafile.outputs, ...cli.metafile.outputs } }),
  );
}
// The bundles bin/run.js compiles with a code cache (cli.cjs and lib/*.cjs) are ASCII
// (esbuild escapes the rest; the few characters it leaves raw, in regular expression
// literals, are escaped here), so bin/run.js reads them as latin1, which decodes faster
// than UTF-8 and is the same text.
// Each one's text is also the module function itself, so that bin/run.js compiles the file's
// text as it is read: wrapping it there (Module.wrap) made V8 copy the whole text once more
// into one flat string, on every run. Required as a module (Node 22+, oclif's manifest, the
// programmatic API), the same text calls that function with the module's own bindings; run
// as a script (bin/run.js: vm.Script, where `this` is the global object) it is the function.
// The build id stays the last line (bin/run.js: requireWithCodeCache).
const CACHED_FILES = [join(DIST, 'bundle', 'cli.cjs'), ...Object.keys(LIBS).map((file) => join(DIST, 'bundle', 'lib', `${file}.cjs`))];
for (const file of CACHED_FILES) {
  const text = readFileSync(file, 'utf8');
  const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const footer = /\n(\/\/ yep-build [0-9a-f]+)\n?$/.exec(ascii);
  if (!footer) throw new Error(`${relative(ROOT, file)} has no build id on its last line`);
  writeFileSync(file, `${CLI_MODULE_FUNCTION_HEAD}${ascii.slice(0, footer.index)}\n});\n${footer[1]}\n`);
}
// The V8 code caches (<file>.v8cache) of cli.cjs and of each lib/*.cjs a warm run loads, for
// Node 20, which has no compile cache of its own: made by this Node in a fresh process with no
// V8 flags set, as bin/run.js loads them (V8 rejects a cache made under other flags or by
// another V8, and bin/run.js then compiles as usual: requireWithCodeCache). A Node with its own
// compile cache (22.1+) never reads them (bin/run.js requires the bundle plainly there), and a
// cache only fits the V8 that made it: built by such a Node they would be dead weight in the package.
// A cache holds what was compiled when it was made: the top level, and what these runs
// compiled in a home holding one enabled extension (examples/echo-node, installed from a copy by
// other processes, so that the install's own code stays out of the cache): `list` (the hottest
// command: host integrations and scripts run it on every start; the dispatcher and the parser
// with it; what every installed entry costs it, its manifest checked against the schema, its
// tree and server command checked, settings.toml parsed) and `doctor` on that extension (its
// checks and probes, and lib/zod.cjs, which it validates every message with: compiled from
// source, those cost doctor more than the whole cache costs `list` to read).
const WARM_RUNS = (example) => [['list', '--json'], ['list'], ['doctor', example, '--json']];
if (!(await import('node:module')).default.enableCompileCache) {
  const file = join(DIST, 'bundle', 'cli.cjs');
  const home = mkdtempSync(join(tmpdir(), 'yep-code-cache-'));
  const env = { ...process.env, NODE_ENV: 'production', HOME: home, YOLOP_CONFIG_DIR: join(home, 'config'), YEP_EXT_CACHE_DIR: 'off' };
  let made;
  try {
    const example = join(home, 'echo-node');
    cpSync(join(ROOT, 'examples', 'echo-node'), example, { recursive: true });
    for (const argv of [
      ['install', example],
      ['enable', 'echo-node'],
    ]) {
      const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'run.js'), ...argv], { stdio: ['ignore', 'ignore', 'inherit'], env });
      if (r.status !== 0) throw new Error(`preparing the code cache's home: ${argv.join(' ')} failed (status ${r.status})`);
    }
    made = spawnSync(
      process.execPath,
      [
        '-e',
        `const file = ${JSON.stringify(file)};
const WARM_RUNS = ${JSON.stringify(WARM_RUNS(example))};
const { requireWithCodeCache, REQUIRE_BUNDLED } = require(${JSON.stringify(join(ROOT, 'bin', 'run.js'))});
const makers = new Map();
const load = (f) => requireWithCodeCache(f, { write: (m) => makers.set(f, m) });
globalThis[REQUIRE_BUNDLED] = load;
const cli = load(file);
const out = { write() {}, isTTY: false, columns: 0, color: false };
const io = { env: process.env, cwd: process.cwd(), stdin: { isTTY: false, async *[Symbol.asyncIterator]() {} }, stdout: out, stderr: out, onInterrupt: () => () => {} };
(async () => {
  for (const argv of WARM_RUNS) await cli.runCli(argv, io);
  for (const [f, make] of makers) require('node:fs').writeFileSync(f + '.v8cache', make());
})();`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'], env },
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  if (made.status !== 0) throw new Error(`writing the code caches failed (status ${made.status})`);
}
writeFileSync(
  join(DIST, 'bundle', 'index.js'),
  "// The programmatic API (src/index.ts), bundled as api.cjs (scripts/build-cli.mjs).\nexport * from './api.cjs';\n",
);
