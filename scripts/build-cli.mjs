#!/usr/bin/env node
/**
 * Bundle the CLI (esbuild, ESM, code-split) into dist/bundle/ so start-up reads a
 * few files instead of resolving ~400 modules one by one:
 *   oclif.js          oclif's runner with our top-level error report
 *                     (src/cli/oclif-main.ts; bin/run.js calls its `main`);
 *   help.js, hooks/*  the help class and the command_not_found hook
 *                     (package.json oclif.helpClass / oclif.hooks);
 *   index.js          the programmatic API (src/index.ts; package.json exports);
 *   commands/*.js     one entry per dist/commands file: oclif still discovers
 *                     commands by file name (package.json oclif.commands), so a
 *                     new command needs no registration, and each loads only the
 *                     chunks it imports;
 *   chunks/*.js       code shared between entries, and lazily imported modules
 *                     (undici, @inquirer/prompts, ...);
 *   fast-path.cjs     the oclif-free runner for `list` and `__complete`
 *                     (src/cli/fast-path.ts), one self-contained CommonJS file,
 *   table-engine.cjs  but for the table engine for non-ASCII text (cli-table3),
 *                     which it requires only when it draws such a table.
 * Runs after tsc: it bundles dist/, not src/. Every dependency is bundled (the
 * published package has no runtime dependencies; package.json devDependencies),
 * except the optional native @napi-rs/keyring.
 *
 *   node scripts/build-cli.mjs [--meta FILE]   (--meta writes esbuild's metafile)
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
      args.kind === 'dynamic-import' && /[\\/]core[\\/]sources[\\/][^\\/]+-source\.js$/.test(args.importer) ? { path: args.path, namespace: 'no-fetchers' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-fetchers' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`${args.path} is not bundled into the list fast path`)});`,
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
    b.onResolve({ filter: /\/manifest-schema\.js$/ }, (args) => (args.kind === 'dynamic-import' ? { path: './manifest-schema.cjs', external: true } : undefined));
  },
};
rmSync(join(DIST, 'bundle'), { recursive: true, force: true });
const [main, fast] = await Promise.all([
  build({
    ...common,
    // One entry per command (oclif finds them by file name, as before) and one
    // for oclif's runner; shared code lands in chunks, so a command loads only
    // what it imports (doctor's schema validator is not paid for by remove).
    entryPoints: {
      oclif: join(DIST, 'cli', 'oclif-main.js'),
      help: join(DIST, 'cli', 'help.js'),
      index: join(DIST, 'index.js'),
      'hooks/command-not-found': join(DIST, 'cli', 'hooks', 'command-not-found.js'),
      ...Object.fromEntries(files.map((f) => [`commands/${relative(COMMANDS_DIR, f).replace(/\.js$/, '')}`, f])),
    },
    splitting: true,
    outdir: join(DIST, 'bundle'),
    chunkNames: 'chunks/[hash]',
    // Bundled CommonJS (oclif and most dependencies) expects require/__dirname.
    banner: {
      js: [
        "import { createRequire as __yepCreateRequire } from 'node:module';",
        "import { fileURLToPath as __yepFileURLToPath } from 'node:url';",
        'const require = __yepCreateRequire(import.meta.url);',
        'const __filename = __yepFileURLToPath(import.meta.url);',
        "const __dirname = __yepFileURLToPath(new URL('.', import.meta.url));",
      ].join(' '),
    },
  }),
  // One self-contained CommonJS file: every extra module costs the ESM loader a
  // resolve, a read and a compile, and an ESM import of a builtin (node:fs)
  // evaluates all of its lazy getters (which loads Node's stream stack).
  build({
    ...common,
    entryPoints: {
      'fast-path': join(DIST, 'cli', 'fast-path.js'),
      'table-engine': join(DIST, 'cli', 'table-engine.js'),
      'manifest-schema': join(DIST, 'core', 'package', 'manifest-schema.js'),
    },
    format: 'cjs',
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
    // Less text to scan at load; identifiers are kept so stack traces stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    define: { ...common.define, 'import.meta.url': '__yepImportMetaUrl' },
    banner: { js: "const __yepImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
]);
if (metaIndex > 0) {
  writeFileSync(process.argv[metaIndex + 1], JSON.stringify({ inputs: { ...main.metafile.inputs, ...fast.metafile.inputs }, outputs: { ...main.metafile.outputs, ...fast.metafile.outputs } }));
}
