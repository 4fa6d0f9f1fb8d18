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
import { join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonOf, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { packedInstall } from '../helpers/packed-install.js';

let dir: string;
let files: string[];
let prefix: string;
let installed: string;
let install: { status: number | null; stdout: string; stderr: string };
let packStderr: string;
let home: TempHome;

/** Markdown prose without fenced code blocks and inline code spans, where a `](x)` is no link. */
function prose(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[^`][\s\S]*?\1/g, '');
}

/** The targets of inline links `[t](x)`, images, autolinks `<x>` and reference definitions `[r]: x`. */
function markdownLinks(md: string): string[] {
  const body = prose(md);
  const inline = [...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const refs = [...body.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  const auto = [...body.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)].map((m) => m[1]!);
  return [...inline, ...refs, ...auto];
}

/** The anchors a markdown renderer (GitHub's, npm's) gives the headings of a page. */
function headingSlugs(md: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  for (const m of md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  return slugs;
}

function du(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  return st.isDirectory() ? readdirSync(path).reduce((n, e) => n + du(join(path, e)), 0) : st.size;
}

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'yep-pack-')));
  ({ files, packStderr, prefix, installed, install } = packedInstall(dir));
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
    const unwanted = files.filter((f) => /\.map$|^src\/|^test\/|^scripts\/|^bin\/dev\.js$|tsbuildinfo|^dist\/(?!bundle\/).*\.js$/.test(f));
    expect(unwanted).toEqual([]);
    // The examples the README runs ship, and nothing else of examples/ (no build output, no node_modules).
    expect(files.filter((f) => f.startsWith('examples/')).sort()).toEqual([
      'examples/echo-node/bin/echo-node',
      'examples/echo-node/plugin.json',
      'examples/echo-python/bin/echo-python',
      'examples/echo-python/plugin.json',
    ]);
  });

  it('packs without a warning, and says where its repository is', () => {
    expect(packStderr).not.toMatch(/warn/i);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.repository).toEqual({ type: 'git', url: 'git+https://github.com/yolop/yep-ext.git' });
    expect(pkg.homepage).toBe('https://github.com/yolop/yep-ext#readme');
    expect(pkg.bugs).toEqual({ url: 'https://github.com/yolop/yep-ext/issues' });
  });

  it('every relative link of the README and the docs it ships names a file (and heading) it holds', () => {
    // Wherever the README is read outside a checkout (the registry's page, the installed
    // package), a relative link is only alive if the package holds its target. Links to
    // anything else (sources, tests, CI) must be absolute, to the repository.
    const held = new Set(files);
    const pages = files.filter((f) => f === 'README.md' || /^docs\/[^/]+\.md$/.test(f));
    expect(pages.length).toBeGreaterThan(10);
    const text = new Map(pages.map((f) => [f, readFileSync(join(installed, f), 'utf8')]));
    const dead: string[] = [];
    for (const [page, body] of text) {
      for (const target of markdownLinks(body)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: absolute
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path));
        const isDir = file.endsWith('/') || [...held].some((f) => f.startsWith(`${file}/`));
        if (!held.has(file) && !isDir) {
          dead.push(`${page}: ${target} (not in the package)`);
          continue;
        }
        if (anchor && file.endsWith('.md') && text.has(file) && !headingSlugs(text.get(file)!).has(anchor)) {
          dead.push(`${page}: ${target} (no such heading in ${file})`);
        }
      }
    }
    expect(dead).toEqual([]);
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
    // The scripts, not their code caches (<file>.v8cache, Node 20) beside them.
    const entries = [
      join(bundle, 'cli.cjs'),
      join(bundle, 'index.js'),
      ...readdirSync(join(bundle, 'lib'))
        .filter((f) => f.endsWith('.cjs'))
        .map((f) => join(bundle, 'lib', f)),
    ];
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
    // The bound docs/performance.md states ("Installing yep-ext itself"): the bundle, not a
    // node_modules tree. Built by Node 20 it holds the V8 code cache of cli.cjs, which only
    // Node 20 reads (a Node with its own compile cache builds none); the MCP SDK's client is
    // lib/mcp.cjs (sharing lib/zod.cjs and leaving out ajv).
    expect(total - keyring).toBeLessThan(7 * 1024 * 1024);
    expect(total).toBeLessThan(14 * 1024 * 1024);
  });

  it('runs: --version, install the example it ships (./examples/echo-node), list, doctor, a typo', async () => {
    const bin = join(prefix, 'bin', 'yep-ext');
    // From the installed package's directory: the README's example path is the package's own.
    const run = (args: string[]) =>
      spawnSync(bin, args, { cwd: installed, env: { ...home.env, PATH: `${join(prefix, 'bin')}:${home.env.PATH}` }, encoding: 'utf8' });
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

  it("carries no path of the checkout it was packed from; a bug's stack names the installed files", () => {
    // The V8 code cache keeps the script name it was made under: made under the checkout's path, every
    // YEP_EXT_DEBUG cause and internal-error stack named files that are not on the user's machine.
    const carrying = files.filter((f) => readFileSync(join(installed, f)).includes(REPO_ROOT));
    expect(carrying).toEqual([]);
    const preload = join(dir, 'bug.cjs');
    writeFileSync(
      preload,
      "const sort = Array.prototype.sort;\nArray.prototype.sort = function (...a) { if (/listExtensions/.test(new Error().stack)) throw new TypeError('injected bug'); return sort.apply(this, a); };\n",
    );
    const r = spawnSync(join(prefix, 'bin', 'yep-ext'), ['list'], { env: { ...home.env, NODE_OPTIONS: `--require=${preload}` }, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(70);
    const frames = r.stderr.split('\n').filter((l) => /^\s+at /.test(l));
    expect(
      frames.some((l) => l.includes(join(installed, 'dist', 'bundle', 'cli.cjs'))),
      r.stderr,
    ).toBe(true);
    expect(r.stderr).not.toContain(REPO_ROOT);
    expect(r.stderr).not.toContain('yep-ext-bundle:');
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
