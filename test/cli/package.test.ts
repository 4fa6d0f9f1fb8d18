/**
 * yep-ext as users install it: `npm pack` the checkout (already built: the pack
 * runs with --ignore-scripts so the build other tests use is not redone), then
 * `npm install -g --prefix <tmp> --offline` the tarball. The package holds only
 * what runs (bundle, manifest, schema, types, README, docs; no sources, tests or
 * source maps), declares no runtime dependency but the optional native keyring
 * (the bundle holds the rest: checked by scanning it for bare imports), has no
 * install-time script, installs without a warning and without the registry, and
 * the installed `yep-ext` installs, lists and doctors an extension in a temp home.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';

let dir: string;
let tarball: string;
let files: string[];
let prefix: string;
let installed: string;
let install: { status: number | null; stdout: string; stderr: string };
let home: TempHome;

const npm = (args: string[], cwd: string) => spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });

function du(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  return st.isDirectory() ? readdirSync(path).reduce((n, e) => n + du(join(path, e)), 0) : st.size;
}

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'yep-pack-')));
  const pack = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], REPO_ROOT);
  expect(pack.status, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(dir, info!.filename);
  files = info!.files.map((f) => f.path);
  prefix = join(dir, 'prefix');
  install = npm(['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball], dir);
  installed = join(prefix, 'lib', 'node_modules', 'yep-ext');
  home = makeTempHome('yep-pack-home-');
}, 180_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  home?.cleanup();
});

describe('the packed tarball', () => {
  it('holds only what runs', () => {
    for (const f of [
      'bin/run.js',
      'bin/package.json',
      'dist/bundle/cli.cjs',
      'dist/bundle/lib/undici.cjs',
      'dist/bundle/lib/oclif.cjs',
      'dist/bundle/index.js',
      'dist/index.d.ts',
      'oclif.manifest.json',
      'schema/yep/v1/schema.json',
      'README.md',
      'docs/exit-codes.md',
      'package.json',
    ]) {
      expect(files, f).toContain(f);
    }
    const unwanted = files.filter((f) => /\.map$|^src\/|^test\/|^scripts\/|^examples\/|^bin\/dev\.js$|tsbuildinfo|^dist\/(?!bundle\/).*\.js$/.test(f));
    expect(unwanted).toEqual([]);
  });

  it('declares no runtime dependency but the optional keyring, and no install-time script', () => {
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(Object.keys(pkg.optionalDependencies ?? {})).toEqual(['@napi-rs/keyring']);
    for (const s of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts?.[s], s).toBeUndefined();
  });

  it('bundles everything it imports (no import left but the keyring and the TypeScript loaders oclif reaches for only in development)', async () => {
    // Let esbuild resolve every import of the installed bundle from where it is installed (no
    // node_modules there but the keyring's): an import of a package that is not bundled fails.
    const { build } = await import('esbuild');
    const bundle = join(installed, 'dist', 'bundle');
    const entries = [join(bundle, 'cli.cjs'), join(bundle, 'index.js'), ...readdirSync(join(bundle, 'lib')).map((f) => join(bundle, 'lib', f))];
    const result = await build({
      entryPoints: entries,
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      outdir: join(dir, 'scan'),
      metafile: true,
      logLevel: 'silent',
      external: ['@napi-rs/keyring', 'typescript', 'ts-node', 'tsx', 'tsx/*'],
    }).catch((e: { errors?: Array<{ text: string }> }) => {
      throw new Error(`unresolved imports in the installed bundle:\n${(e.errors ?? []).map((x) => x.text).join('\n')}`);
    });
    // '<runtime>' is esbuild's own helper module (scanning CommonJS files into ESM output), no import of the bundle.
    const externals = new Set(
      Object.values(result.metafile!.inputs).flatMap((i) =>
        i.imports
          .filter((x) => x.external && x.path !== '<runtime>' && !x.path.startsWith('node:') && !builtinModules.includes(x.path.split('/')[0]!))
          .map((x) => x.path),
      ),
    );
    const allowed = (p: string): boolean => ['@napi-rs/keyring', 'typescript', 'ts-node', 'tsx'].some((a) => p === a || p.startsWith(`${a}/`));
    expect([...externals].filter((x) => !allowed(x))).toEqual([]);
  });
});

describe('npm install -g of the tarball', () => {
  it('installs offline, with no warning', () => {
    expect(install.status, install.stderr).toBe(0);
    expect(install.stderr).not.toMatch(/warn|allowScripts|prepare/i);
  });

  it('is small: the bundle, not a node_modules tree', () => {
    const total = du(installed);
    const keyring = du(join(installed, 'node_modules'));
    // Recorded in docs/performance.md. The old shape (runtime dependencies installed) was 36 MB.
    // Built by Node 20 it holds the V8 code cache of cli.cjs, which only Node 20 reads (a Node
    // with its own compile cache builds none); the MCP SDK's client is lib/mcp.cjs (sharing
    // lib/zod.cjs and leaving out ajv; docs/performance.md).
    expect(total - keyring).toBeLessThan(7 * 1024 * 1024);
    expect(total).toBeLessThan(14 * 1024 * 1024);
  });

  it('runs: --version, install ./examples/echo-node, list, doctor, a typo', async () => {
    const bin = join(prefix, 'bin', 'yep-ext');
    const run = (args: string[]) =>
      spawnSync(bin, args, { cwd: REPO_ROOT, env: { ...home.env, PATH: `${join(prefix, 'bin')}:${home.env.PATH}` }, encoding: 'utf8' });
    expect(run(['--version']).stdout).toMatch(/^yep-ext\/0\.\d+\.\d+ linux-\w+ node-v\d+/);
    const inst = run(['install', './examples/echo-node', '--json']);
    expect(inst.status, inst.stderr).toBe(0);
    expect(readFileSync(join(home.configDir, 'extensions', 'extensions.lock'), 'utf8')).toMatch(/name = "echo-node"/);
    expect(JSON.parse(run(['list', '--json']).stdout).extensions.map((e: { name: string }) => e.name)).toEqual(['echo-node']);
    const doctor = run(['doctor', 'echo-node', '--json']);
    expect(doctor.status, doctor.stdout + doctor.stderr).toBe(0);
    expect(JSON.parse(doctor.stdout)).toMatchObject({ ok: true });
    const typo = run(['instal', 'x']);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toMatch(/Did you mean `yep-ext install`/);
    // The same answers as the checkout's own CLI.
    expect(run(['list']).stdout).toBe((await runCli(['list'], { env: home.env })).stdout);
  });

  it('serves the programmatic API (import from "yep-ext")', () => {
    const script = join(prefix, 'lib', 'api-check.mjs');
    writeFileSync(
      script,
      "import { createContext, listExtensions, ERROR_CODES } from 'yep-ext';\nconst items = await listExtensions(createContext({ env: process.env }));\nconsole.log(JSON.stringify({ names: items.map((e) => e.name), usage: ERROR_CODES.E_USAGE }));\n",
    );
    const r = spawnSync(process.execPath, [script], { env: home.env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(jsonOf({ code: 0, signal: null, stdout: r.stdout, stderr: '' })).toEqual({ names: ['echo-node'], usage: 2 });
  });
});
