/**
 * The CLI runs from an esbuild bundle (scripts/build-cli.mjs): every command file
 * in src/commands must be in the command table, reach the bundle (dist/bundle/cli.cjs's
 * COMMANDS, the table as oclif classes for oclif's explicit command strategy), the
 * manifest and `--help`, and each command must load and print its own help.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCrate } from '../helpers/crates.js';
import { makePackage } from '../helpers/ext-package.js';
import { BIN, REPO_ROOT, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry } from '../helpers/registry.js';

const require = createRequire(import.meta.url);

function commandIds(): string[] {
  const dir = join(REPO_ROOT, 'src', 'commands');
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : []));
  return walk(dir)
    .map((f) =>
      relative(dir, f)
        .replace(/\.ts$/, '')
        .split('/')
        .filter((p) => p !== 'index')
        .join(':'),
    )
    .sort();
}

describe('the bundled CLI', () => {
  const ids = commandIds();

  it('has every command of src/commands in the command table, oclif.manifest.json and the bundle', async () => {
    const { COMMANDS } = await import('../../src/cli/command-table.js');
    expect(Object.keys(COMMANDS).sort()).toEqual(ids);
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> };
    expect(Object.keys(manifest.commands).sort()).toEqual(ids);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      oclif: { commands: { strategy: string; target: string; identifier: string } };
    };
    expect(pkg.oclif.commands).toEqual({ strategy: 'explicit', target: './dist/bundle/cli.cjs', identifier: 'COMMANDS' });
    // Read in the child processes that print every command's help (bundleHelps below), after the
    // helps: requiring the bundle here would share this worker's module cache.
    for (const run of helpRuns()) expect(run.commands).toEqual(ids.map((id) => [id, 'function', id]));
  });

  interface BundleRun {
    status: number | null;
    stdout: string;
    stderr: string;
    /** The files of dist/bundle it loaded, relative to that directory. */
    files: string[];
    /** The public Node modules it loaded. */
    builtins: string[];
    /** Every script compiled with cached data and whether V8 rejected it; undefined when not watched. */
    cached?: Array<{ file: string; rejected: boolean }>;
  }

  /**
   * A run of `args` through bin/run.js: the files of dist/bundle it loaded (a preload lists the CommonJS
   * modules loaded by the exit) and the public Node modules it loaded (process.moduleLoadList); with
   * `watchCache`, a second preload sees every vm.Script given cached data and whether V8 took it.
   * stdin is /dev/null, as a script's often is.
   */
  function bundleRun(args: string[], env: Record<string, string>, root: string, watchCache = false): BundleRun {
    const preload = join(root, 'loaded.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(root, 'loaded.json'))}, JSON.stringify([Object.keys(require.cache), process.moduleLoadList])));`,
    );
    const cachePreload = join(root, 'cache-seen.cjs');
    if (watchCache)
      writeFileSync(
        cachePreload,
        `const vm = require('node:vm'); const S = vm.Script; const seen = [];
vm.Script = class extends S { constructor(src, o) { super(src, o); if (o && o.cachedData) seen.push({ file: o.filename, rejected: this.cachedDataRejected }); } };
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(root, 'seen.json'))}, JSON.stringify(seen)));`,
      );
    const preloads = ['--require', preload, ...(watchCache ? ['--require', cachePreload] : [])];
    const r = spawnSync(process.execPath, [...preloads, join(REPO_ROOT, 'bin', 'run.js'), ...args], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [cache, loadList] = JSON.parse(readFileSync(join(root, 'loaded.json'), 'utf8')) as [string[], string[]];
    const files = cache.filter((f) => f.includes(join('dist', 'bundle'))).map((f) => relative(join(REPO_ROOT, 'dist', 'bundle'), f));
    const builtins = loadList.filter((m) => m.startsWith('NativeModule ') && !m.includes('internal/')).map((m) => m.slice('NativeModule '.length));
    const cached = watchCache ? (JSON.parse(readFileSync(join(root, 'seen.json'), 'utf8')) as BundleRun['cached']) : undefined;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, files, builtins, ...(cached ? { cached } : {}) };
  }

  /**
   * Runs in one fresh home, watched for both what they load and the code caches they are given: the
   * tests of either read the same run of the same arguments (nothing these commands do changes the
   * home for the next).
   */
  let fresh: TempHome | undefined;
  const freshRuns = new Map<string, BundleRun>();
  afterAll(() => fresh?.cleanup());
  const freshHome = (): TempHome => (fresh ??= makeTempHome());
  function inFreshHome(args: string[]): BundleRun {
    const key = JSON.stringify(args);
    let run = freshRuns.get(key);
    if (!run) {
      run = bundleRun(args, freshHome().env, freshHome().root, true);
      freshRuns.set(key, run);
    }
    return run;
  }

  it('starts `list` without node:tty or node:crypto when no stream is a terminal and no installed tree changed', async () => {
    const home = makeTempHome();
    const reg = await startRegistry();
    try {
      const pkg = writePackage(join(home.root, 'src', 'quiet'), { name: 'quiet', version: '1.0.0' });
      reg.publish({ name: 'yolop-extension-quiet', vers: '1.0.0', data: buildCrate({ name: 'yolop-extension-quiet', version: '1.0.0', dir: pkg }) });
      const env = { ...home.env, YEP_EXT_INDEX: reg.indexUrl };
      const install = await runCli(['install', 'quiet', '--yes'], { env });
      expect(install.code, install.stderr).toBe(0);
      // stdin is /dev/null (a character device, but no terminal), stdout and stderr pipes; the
      // tree's stat signatures are unchanged since the install, so nothing is hashed.
      const list = bundleRun(['list', '--json'], env, home.root);
      expect(list.status, list.stderr).toBe(0);
      const rows = JSON.parse(list.stdout).extensions as Array<{ name: string; problems: unknown[] }>;
      expect(rows.map((e) => [e.name, e.problems])).toEqual([['quiet', []]]);
      expect(list.builtins).toContain('fs');
      expect(list.builtins.filter((m) => ['tty', 'net', 'crypto', 'stream'].includes(m))).toEqual([]);
    } finally {
      await reg.close();
      home.cleanup();
    }
  });

  it('loads only what a command uses: the big libraries, oclif help and the table engine are files of their own (dist/bundle/lib)', () => {
    const cli = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'), 'utf8');
    for (const lib of ['undici', 'zod', 'ajv', 'simple-git', 'cacache', 'prompts', 'oclif', 'table']) {
      expect(existsSync(join(REPO_ROOT, 'dist', 'bundle', 'lib', `${lib}.cjs`)), lib).toBe(true);
      expect(cli).toContain(`require("./lib/${lib}.cjs")`);
    }
    expect(cli.match(/"node_modules\/(undici|zod|ajv|simple-git|cacache|tar|@inquirer|cli-table3|ejs|cli-spinners)\//)?.[0]).toBeUndefined();
    // A plain command loads cli.cjs and none of the libraries, oclif's help among them.
    const disable = inFreshHome(['disable', 'nosuch']);
    expect(disable.status, disable.stderr).toBe(3);
    expect(disable.files).toEqual(['cli.cjs']);
    const list = inFreshHome(['list']);
    expect(list.status, list.stderr).toBe(0);
    expect(list.files).toEqual(['cli.cjs']);
    // Help loads oclif's help and config, from lib/oclif.cjs.
    const help = inFreshHome(['list', '--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.files).toEqual(['cli.cjs', 'lib/oclif.cjs']);
  });

  it('is ASCII (bin/run.js reads it as latin1)', () => {
    const bytes = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'));
    expect(bytes.findIndex((b) => b > 0x7f)).toBe(-1);
  });

  /** A package whose server answers doctor: the sh fixture, as its start is no subject here. */
  const answering = (): string => makePackage(join(freshHome().root, 'pkgs'), 'answers', { args: ['--name', 'answers'] });

  it('compiles cli.cjs and the libraries a warm run loads from the code caches the build wrote, for every command (Node 20; Node 22+ uses its own compile cache)', () => {
    const nodeHasCompileCache = typeof (require('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    // doctor validates every message it receives with zod: lib/zod.cjs has a cache of its own.
    for (const [args, status, files] of [
      [['disable', 'nosuch'], 3, ['cli.cjs']],
      [['list'], 0, ['cli.cjs']],
      [['doctor', join(freshHome().root, 'nosuch-dir'), '--json'], 3, ['cli.cjs', 'lib/zod.cjs']],
      [['doctor', answering(), '--json'], 0, ['cli.cjs', 'lib/zod.cjs']],
    ] as const) {
      const r = inFreshHome([...args]);
      expect(r.status, r.stderr).toBe(status);
      expect(r.cached, args.join(' ')).toEqual(nodeHasCompileCache ? [] : files.map((f) => ({ file: join(REPO_ROOT, 'dist', 'bundle', f), rejected: false })));
    }
  });

  it('lists every command in --help', () => {
    // The root help as the bundle prints it, the first run of a bundleHelps child (below).
    const help = helpRuns()[1]!.helps.get(ROOT_HELP)!;
    expect(help.code, help.stderr).toBe(0);
    // Root help shows topics (lock) rather than their commands (lock export).
    for (const id of ids) expect(help.stdout).toContain(id.split(':')[0]);
  });

  type Help = { code: number; stdout: string; stderr: string };
  /** The root help's entry in a bundleHelps run (`yep-ext --help`; no command id is empty). */
  const ROOT_HELP = '';
  /** One bundleHelps child: each command's help, and the bundle's COMMANDS as [id, typeof, class id] rows. */
  type HelpRun = { helps: Map<string, Help>; commands: Array<[string, string, string | null]> };

  /**
   * Every command's `--help`, run through the bundle as bin/run.js loads it (its code caches,
   * the lib/*.cjs hook), one command after another in one child process: what each command
   * loads and prints is the subject here, not a process's start, which the tests above cover.
   * Each command gets an io of its own (stdout and stderr captured, no terminal). Run in both
   * orders, each in a process of its own: a help that works only because a command before it
   * loaded something fails in the other order. The bundle's COMMANDS are read after the last
   * help, so that reading them loads nothing a help could lean on.
   */
  function bundleHelps(env: Record<string, string>, order: readonly string[]): HelpRun {
    const script = `
const { requireWithCodeCache, REQUIRE_BUNDLED } = require(${JSON.stringify(BIN)});
globalThis[REQUIRE_BUNDLED] = (file) => requireWithCodeCache(file);
const bundle = requireWithCodeCache(${JSON.stringify(join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'))});
const out = (chunks) => ({ write: (t) => void chunks.push(t), isTTY: false, columns: 0, color: false });
(async () => {
  const results = [];
  for (const id of ${JSON.stringify(order)}) {
    const stdout = [];
    const stderr = [];
    const io = { env: process.env, cwd: process.cwd(), stdin: { isTTY: false, async *[Symbol.asyncIterator]() {} }, stdout: out(stdout), stderr: out(stderr), onInterrupt: () => () => {} };
    const code = await bundle.runCli([...(id ? id.split(':') : []), '--help'], io);
    results.push([id, { code, stdout: stdout.join(''), stderr: stderr.join('') }]);
  }
  const c = bundle.COMMANDS;
  const commands = Object.keys(c).sort().map((id) => [id, typeof c[id], c[id].id ?? null]);
  require('node:fs').writeSync(1, JSON.stringify({ results, commands }));
})();`;
    const r = spawnSync(process.execPath, ['-e', script], { env, cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(r.status, r.stderr).toBe(0);
    const { results, commands } = JSON.parse(r.stdout) as { results: Array<[string, Help]>; commands: HelpRun['commands'] };
    return { helps: new Map(results), commands };
  }

  let helps: HelpRun[] | undefined;
  /** Both orders' runs, made once for the file. */
  function helpRuns(): HelpRun[] {
    if (!helps) {
      const home = makeTempHome();
      try {
        // The root help first in the second run: in a bundle nothing else has loaded into yet.
        helps = [bundleHelps(home.env, ids), bundleHelps(home.env, [ROOT_HELP, ...[...ids].reverse()])];
      } finally {
        home.cleanup();
      }
    }
    return helps;
  }

  // One test per command: a failure names its command.
  it.each(ids)('%s loads and prints its own help', (id) => {
    const [forward, backward] = helpRuns().map((h) => h.helps.get(id)!);
    expect(forward!.code, `${id}: ${forward!.stderr}`).toBe(0);
    expect(forward!.stdout).toContain('USAGE');
    // The same help whichever commands ran before it in the process.
    expect(backward).toEqual(forward);
  });
});
