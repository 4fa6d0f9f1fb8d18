/**
 * The CLI runs from an esbuild bundle (scripts/build-cli.mjs): every command file
 * in src/commands must reach the bundle (dist/bundle/cli.cjs's COMMANDS, oclif's
 * explicit command strategy), the manifest and `--help`, and each bundled command
 * must load and run on its own.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, makeTempHome, runCli } from '../helpers/home.js';

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

  it('has every command of src/commands in oclif.manifest.json, bundled', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> };
    expect(Object.keys(manifest.commands).sort()).toEqual(ids);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      oclif: { commands: { strategy: string; target: string; identifier: string } };
    };
    expect(pkg.oclif.commands).toEqual({ strategy: 'explicit', target: './dist/bundle/cli.cjs', identifier: 'COMMANDS' });
    // In a child process: requiring the bundle here would share this worker's module cache.
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        `const c = require(${JSON.stringify(join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'))}).COMMANDS; console.log(JSON.stringify(Object.keys(c).sort().map((id) => [id, typeof c[id], c[id].id ?? null])))`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(ids.map((id) => [id, 'function', null]));
  });

  it('loads only what a command uses: the big libraries are files of their own (dist/bundle/lib)', () => {
    const cli = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'), 'utf8');
    for (const lib of ['undici', 'zod', 'ajv', 'simple-git', 'cacache', 'prompts']) {
      expect(existsSync(join(REPO_ROOT, 'dist', 'bundle', 'lib', `${lib}.cjs`)), lib).toBe(true);
      expect(cli).toContain(`require("./lib/${lib}.cjs")`);
    }
    expect(cli.match(/"node_modules\/(undici|zod|ajv|simple-git|cacache|tar|@inquirer)\//)?.[0]).toBeUndefined();
    // `disable` through oclif loads cli.cjs (after the small decider of the oclif-free runner,
    // fast-cmd.cjs) and none of the libraries (a preload lists the CommonJS modules loaded by the exit).
    const home = makeTempHome();
    try {
      const preload = join(home.root, 'loaded.cjs');
      writeFileSync(
        preload,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(home.root, 'loaded.json'))}, JSON.stringify(Object.keys(require.cache))));`,
      );
      const r = spawnSync(process.execPath, ['--require', preload, join(REPO_ROOT, 'bin', 'run.js'), 'disable', 'nosuch'], {
        env: { ...home.env, YEP_EXT_NO_FAST_PATH: '1' },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(3);
      const loaded = (JSON.parse(readFileSync(join(home.root, 'loaded.json'), 'utf8')) as string[])
        .filter((f) => f.includes(join('dist', 'bundle')))
        .map((f) => relative(join(REPO_ROOT, 'dist', 'bundle'), f));
      expect(loaded).toEqual(['fast-cmd.cjs', 'cli.cjs']);
    } finally {
      home.cleanup();
    }
  });

  it("keeps the table engine out of the list fast path's bundle (it is required from table-engine.cjs only when a table is drawn)", () => {
    const fast = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'fast-path.cjs'), 'utf8');
    expect(fast).not.toMatch(/require_cli_table3/);
    expect(fast).toContain('./table-engine.cjs');
  });

  it('keeps the fetching code out of the warm `install --frozen` runner (fast-frozen.cjs), which hands over to fast-net-run.cjs instead', () => {
    const small = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'fast-frozen.cjs'), 'utf8');
    const full = readFileSync(join(REPO_ROOT, 'dist', 'bundle', 'fast-net-run.cjs'), 'utf8');
    for (const fn of ['prepareExactly', 'commitPackage', 'placePackage']) {
      expect(full, fn).toContain(`function ${fn}(`);
      expect(small, fn).not.toContain(`function ${fn}(`);
    }
    for (const lib of ['undici', 'simple-git', 'cacache', 'tar', 'prompts', 'ajv', 'zod']) expect(small, lib).not.toContain(`require("./lib/${lib}.cjs")`);
    // The stand-in for frozen-fetch.ts (scripts/build-cli.mjs) throws the key src/cli/fast-frozen.ts looks for.
    expect(small).toContain('[Symbol.for("yep-ext.frozen-hand-over")]:!0');
    expect(small.length).toBeLessThan(full.length * 0.6);
  });

  it('compiles cli.cjs and fast-path.cjs from the code caches the build wrote (Node 20; Node 22+ uses its own compile cache)', () => {
    const home = makeTempHome();
    try {
      // A preload that sees every vm.Script given cached data and whether V8 took it.
      const preload = join(home.root, 'cache-seen.cjs');
      writeFileSync(
        preload,
        `const vm = require('node:vm'); const S = vm.Script; const seen = [];
vm.Script = class extends S { constructor(src, o) { super(src, o); if (o && o.cachedData) seen.push({ file: o.filename, rejected: this.cachedDataRejected }); } };
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(home.root, 'seen.json'))}, JSON.stringify(seen)));`,
      );
      const r = spawnSync(process.execPath, ['--require', preload, join(REPO_ROOT, 'bin', 'run.js'), 'disable', 'nosuch'], {
        env: { ...home.env, YEP_EXT_NO_FAST_PATH: '1' },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(3);
      expect(r.stderr).toContain('is not installed');
      const seen = JSON.parse(readFileSync(join(home.root, 'seen.json'), 'utf8')) as Array<{ file: string; rejected: boolean }>;
      const nodeHasCompileCache = typeof (require('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';
      expect(seen).toEqual(nodeHasCompileCache ? [] : [{ file: join(REPO_ROOT, 'dist', 'bundle', 'cli.cjs'), rejected: false }]);
      // `list` without oclif compiles fast-path.cjs from its own cache (round nine), and nothing else.
      const list = spawnSync(process.execPath, ['--require', preload, join(REPO_ROOT, 'bin', 'run.js'), 'list'], { env: home.env, encoding: 'utf8' });
      expect(list.status, list.stderr).toBe(0);
      const listSeen = JSON.parse(readFileSync(join(home.root, 'seen.json'), 'utf8')) as Array<{ file: string; rejected: boolean }>;
      expect(listSeen).toEqual(nodeHasCompileCache ? [] : [{ file: join(REPO_ROOT, 'dist', 'bundle', 'fast-path.cjs'), rejected: false }]);
    } finally {
      home.cleanup();
    }
  });

  it('runs plain `doctor` from doctor-early.cjs (the early server start) and fast-doctor.cjs alone, the latter compiled from its own code cache (Node 20), and never loads cli.cjs', () => {
    const home = makeTempHome();
    try {
      const preload = join(home.root, 'seen.cjs');
      writeFileSync(
        preload,
        `const vm = require('node:vm'); const S = vm.Script; const seen = [];
vm.Script = class extends S { constructor(src, o) { super(src, o); if (o && o.cachedData) seen.push({ file: o.filename, rejected: this.cachedDataRejected }); } };
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(home.root, 'seen.json'))}, JSON.stringify({ seen, loaded: Object.keys(require.cache) })));`,
      );
      const r = spawnSync(process.execPath, ['--require', preload, join(REPO_ROOT, 'bin', 'run.js'), 'doctor', join(home.root, 'nosuch-dir'), '--json'], {
        env: home.env,
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(3);
      expect(JSON.parse(r.stdout).error.code).toBe('E_NOT_FOUND');
      const { seen, loaded } = JSON.parse(readFileSync(join(home.root, 'seen.json'), 'utf8')) as {
        seen: Array<{ file: string; rejected: boolean }>;
        loaded: string[];
      };
      const file = join(REPO_ROOT, 'dist', 'bundle', 'fast-doctor.cjs');
      const nodeHasCompileCache = typeof (require('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';
      expect(seen).toEqual(nodeHasCompileCache ? [] : [{ file, rejected: false }]);
      expect(loaded.filter((f) => f.includes(join('dist', 'bundle'))).map((f) => relative(join(REPO_ROOT, 'dist', 'bundle'), f))).toEqual([
        'doctor-early.cjs',
        'fast-doctor.cjs',
      ]);
    } finally {
      home.cleanup();
    }
  });

  it('lists every command in --help', async () => {
    const home = makeTempHome();
    try {
      const help = await runCli(['--help'], { env: home.env });
      expect(help.code).toBe(0);
      // Root help shows topics (lock) rather than their commands (lock export).
      for (const id of ids) expect(help.stdout).toContain(id.split(':')[0]);
    } finally {
      home.cleanup();
    }
  });

  // One test per command: 22 CLI runs in one test overran its 60 s on a loaded 2-core CI
  // machine (ci29, Node 20); each now has the whole timeout, and a failure names its command.
  it.each(ids)('%s loads and prints its own help', async (id) => {
    const home = makeTempHome();
    try {
      const r = await runCli([...id.split(':'), '--help'], { env: home.env });
      expect(r.code, `${id}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('USAGE');
    } finally {
      home.cleanup();
    }
  });
});
