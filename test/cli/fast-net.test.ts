/**
 * The oclif-free runner of install and update (src/cli/fast-net.ts) must be
 * invisible: for every argument shape it accepts, run once through it and once
 * through oclif (YEP_EXT_NO_FAST_PATH=1), each in a fresh home prepared the same
 * way, stdout, stderr, the exit status AND the state left on disk (store, lock,
 * grants, settings: test/helpers/home-state.ts) are identical; failures too. Every
 * shape it cannot match exactly is left to oclif (the mark stays unwritten).
 */
import NodeModule from 'node:module';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { buildCrate } from '../helpers/crates.js';
import { homeState } from '../helpers/home-state.js';
import { writePackage } from '../helpers/packages.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { setupInstall } from '../helpers/setup-install.js';
import { SKIP_PTY, runCliInPty, screenOf } from '../helpers/pty.js';
import { loadRecorder } from '../helpers/module-log.js';
import type { FastPathSide } from '../helpers/fast-path-both.js';

let reg: TestRegistry;
/** Sources shared by both runs (path installs reference them in place; same path, same output). */
let shared: string;
const homes: TempHome[] = [];

function crate(name: string, version: string, tools = ['one']): Buffer {
  const manifest = {
    name,
    version,
    description: `fast-net test ${name}`,
    yolop: { capabilityServer: { command: `${name}-server` }, tools: tools.map((t) => ({ name: t })) },
  };
  return buildCrate({
    name: `yolop-extension-${name}`,
    version,
    files: {
      'Cargo.toml': `[package]\nname = "yolop-extension-${name}"\nversion = "${version}"\n`,
      'plugin.json': JSON.stringify(manifest, null, 2),
      [`bin/${name}-server`]: { content: Buffer.from('#!/bin/sh\nexec cat >/dev/null\n'), mode: 0o755 },
    },
  });
}

/**
 * An index where nothing listens. The refused connection is retried as always (the same
 * attempts, the same messages), only without the default backoff's 0.5 + 1 + 2 s of sleep
 * per run: four runs of that were 14 s of this file's wall time, and a 60 s timeout's
 * worth under load (the test seam: test/helpers/seams.cjs).
 */
const NOTHING_LISTENING = { YEP_EXT_INDEX: 'http://127.0.0.1:9/index/', YEP_EXT_TEST_HTTP_RETRY_BASE_MS: '20', YEP_EXT_TEST_HTTP_RETRY_MAX_MS: '80' };

type Setup = (h: TempHome, env: Record<string, string>) => Promise<void>;

type Side = FastPathSide;

/** Run `args` in a fresh home after `setup`, through the fast path or (oclif) not; paths of the home made comparable. */
async function side(args: string[], setup: Setup, env: Record<string, string>, oclif: boolean): Promise<Side> {
  const h = makeTempHome('yep-fastnet-');
  homes.push(h);
  await setup(h, { ...h.env, YEP_EXT_INDEX: reg.indexUrl });
  const base = { ...h.env, YEP_EXT_INDEX: reg.indexUrl, ...env };
  const mark = join(h.root, 'fast-path-taken');
  const r: RunResult = await runCli(args, { env: { ...base, YEP_EXT_TEST_FAST_PATH_MARK: mark, ...(oclif ? { YEP_EXT_NO_FAST_PATH: '1' } : {}) } });
  // The home's path, and a staging directory's random name.
  const norm = (s: string): string =>
    s
      .split(h.root)
      .join('<home>')
      .replace(/\.yep-staging\/[^/"]+\//g, '.yep-staging/<id>/')
      .replace(/\b\d+(ms|s)\b/g, 'N$1');
  return { code: r.code, stdout: norm(r.stdout), stderr: norm(r.stderr), state: homeState(h.configDir).files, took: existsSync(mark) };
}

async function both(args: string[], setup: Setup = async () => {}, env: Record<string, string> = {}): Promise<{ fast: Side; oclif: Side }> {
  const fast = await side(args, setup, env, false);
  const oclif = await side(args, setup, env, true);
  expect(oclif.took, 'YEP_EXT_NO_FAST_PATH=1 must force oclif').toBe(false);
  return { fast, oclif };
}

function expectSame({ fast, oclif }: { fast: Side; oclif: Side }): void {
  expect(fast.took, 'the fast path must have run').toBe(true);
  const { took: _a, ...f } = fast;
  const { took: _b, ...o } = oclif;
  expect(f).toEqual(o);
}

/**
 * The home as `yep-ext install --yes <specs>` leaves it: the core call that command makes, run
 * in this process (test/helpers/setup-install.ts), not a CLI process per side (two per shape).
 */
const install =
  (...specs: string[]): Setup =>
  async (_h, env) => {
    await setupInstall(
      env,
      specs.map((spec) => spec.replace('@SRC@', shared)),
    );
  };

beforeAll(async () => {
  reg = await startRegistry();
  for (const n of ['alpha', 'beta']) reg.publish({ name: `yolop-extension-${n}`, vers: '1.0.0', data: crate(n, '1.0.0') });
  shared = realpathSync(mkdtempSync(join(tmpdir(), 'yep-fastnet-src-')));
  writePackage(join(shared, 'local'), { name: 'local', version: '0.2.0' });
  writePackage(join(shared, 'alpha-path'), { name: 'alpha', version: '9.0.0' });
  writeFileSync(join(shared, 'not-a-package.txt'), 'x');
});
afterAll(async () => {
  for (const h of homes) h.cleanup();
  rmSync(shared, { recursive: true, force: true });
  await reg.close();
});

describe('install: same bytes and same state as oclif', () => {
  const shapes: Array<[string, string[], Setup?]> = [
    ['a name', ['install', 'alpha']],
    ['a crates.io: spec with a version, --json', ['install', 'crates.io:yolop-extension-alpha@1.0.0', '--json']],
    ['--verbose', ['install', '--verbose', 'alpha']],
    ['--index=<url>', ['install', 'alpha', `--index=@INDEX@`]],
    ['a local path, --json --quiet', ['install', '@SRC@/local', '--json', '--quiet']],
    ['already installed, --json', ['install', 'alpha', '--json'], install('alpha')],
    // Failures.
    ['a malformed spec', ['install', 'alpha@@1']],
    ['a crate that is not there, --json', ['install', 'nosuch', '--json']],
    ['one of two fails (partial), --json', ['install', 'alpha', 'nosuch', '--json']],
    ['a path that is no package', ['install', '@SRC@/not-a-package.txt']],
    ['one of two fails (partial)', ['install', 'alpha', 'nosuch']],
    ['a different package under an installed name, no TTY, no --yes (conflict)', ['install', '@SRC@/alpha-path'], install('alpha')],
    ['the same with --yes (replaced)', ['install', '@SRC@/alpha-path', '--yes'], install('alpha')],
  ];
  it.each(shapes.map(([name, args, setup]) => [name, args, setup] as const))('%s', async (_name, args, setup) => {
    const argv = args.map((a) => a.replace('@SRC@', shared).replace('@INDEX@', reg.indexUrl));
    const r = await both(argv, setup);
    expectSame(r);
  });

  it('two names, -y -q (installed concurrently: their blocks on stdout come in either order, on both paths)', async () => {
    const r = await both(['install', 'alpha', '-y', 'beta', '-q']);
    const blocks = (out: string): string[] => out.split(/\n(?=\S)/).sort();
    expectSame({ fast: { ...r.fast, stdout: blocks(r.fast.stdout).join('\n') }, oclif: { ...r.oclif, stdout: blocks(r.oclif.stdout).join('\n') } });
  });

  it('a network error (nothing listening), --json', async () => {
    const r = await both(['install', 'alpha', '--json'], async () => {}, NOTHING_LISTENING);
    expectSame(r);
    expect(r.fast.code).not.toBe(0);
  });
});

describe('install --frozen: same bytes and same state as oclif', () => {
  let lockfile: string;
  beforeAll(async () => {
    const h = makeTempHome('yep-fastnet-lock-');
    homes.push(h);
    const r = await runCli(['install', 'alpha', 'beta', `${shared}/local`], { env: { ...h.env, YEP_EXT_INDEX: reg.indexUrl } });
    expect(r.code, r.stderr).toBe(0);
    lockfile = join(shared, 'project.lock');
    writeFileSync(lockfile, readFileSync(join(h.configDir, 'extensions', 'extensions.lock')));
  });

  // Warm shapes run in fast-frozen.cjs alone; one that must fetch is handed over to fast-net-run.cjs
  // (src/cli/fast-frozen.ts) after the lock is read and the entries checked: nothing told twice or lost.
  const edited: Setup = async (h, env) => {
    await install('alpha', 'beta')(h, env);
    appendFileSync(join(h.configDir, 'extensions', 'alpha', 'bin', 'alpha-server'), '# edited\n');
  };
  const staleStage: Setup = async (h, env) => {
    await install('alpha', 'beta')(h, env);
    // A dead process's staging directory: swept by the first holder of the installer lock.
    mkdirSync(join(h.configDir, 'extensions', '.yep-staging', '999999999-frozen-alpha-x'), { recursive: true });
    writeFileSync(join(h.configDir, 'extensions', '.yep-staging', '999999999-frozen-alpha-x', 'junk'), 'x');
  };
  it.each([
    ['warm (everything as locked)', ['install', '--frozen'], install('alpha', 'beta')],
    ['warm, --json', ['install', '--frozen', '--json'], install('alpha', 'beta')],
    ['warm --lockfile (two of three installed: handed over)', ['install', '--frozen', '--lockfile', '@LOCK@'], install('alpha', 'beta')],
    ['warm --lockfile, all three installed, --verbose', ['install', '--frozen', '--lockfile', '@LOCK@', '--verbose'], install('alpha', 'beta', '@SRC@/local')],
    ['warm, one tree edited (re-fetched: handed over)', ['install', '--frozen'], edited],
    ['warm, one tree edited, --json (handed over)', ['install', '--frozen', '--json'], edited],
    ["warm, a dead process's staging directory swept", ['install', '--frozen'], staleStage],
    ["a dead process's staging directory swept, then handed over", ['install', '--frozen', '--lockfile', '@LOCK@'], staleStage],
    ['--lockfile into an empty home', ['install', '--frozen', '--lockfile', '@LOCK@'], undefined],
    ['--lockfile=<file> --json --quiet', ['install', '--json', '--frozen', '--lockfile=@LOCK@', '-q'], undefined],
    ['a lockfile that is not there', ['install', '--frozen', '--lockfile', '@SRC@/nothing.lock'], undefined],
    ['no lock at all', ['install', '--frozen'], undefined],
  ] as const)('%s', async (_name, args, setup) => {
    const argv = args.map((a) => a.replace('@LOCK@', lockfile).replace('@SRC@', shared));
    const r = await both(argv, setup ? async (h, env) => setup(h, { ...env }) : async () => {});
    // Entries are fetched 4 at a time and each says `✔ <name> verified` when it is: in either order, on both paths.
    const lines = (out: string): string => out.split('\n').sort().join('\n');
    expectSame({ fast: { ...r.fast, stderr: lines(r.fast.stderr) }, oclif: { ...r.oclif, stderr: lines(r.oclif.stderr) } });
  });
});

describe('update: same bytes and same state as oclif', () => {
  beforeAll(() => {
    // A newer alpha that asks for more (a second tool): updating it needs consent.
    reg.publish({ name: 'yolop-extension-alpha', vers: '1.1.0', data: crate('alpha', '1.1.0', ['one', 'two']) });
    reg.publish({ name: 'yolop-extension-beta', vers: '1.0.1', data: crate('beta', '1.0.1') });
  });
  const two = install('crates.io:yolop-extension-alpha@=1.0.0', 'crates.io:yolop-extension-beta@=1.0.0');
  it.each([
    ['--all: beta updates, alpha widens (refused without a TTY)', ['update', '--all'], two],
    ['--all --json', ['update', '--all', '--json'], two],
    ['a name, --yes --quiet', ['update', 'beta', '--yes', '--quiet'], two],
    ['nothing installed', ['update', '--all'], async () => {}],
    ['a typo of an installed name (the suggestion), --json', ['update', 'bta', '--json'], two],
    ['--all with a name (usage error from the body)', ['update', '--all', 'beta'], two],
  ] as const)('%s', async (_name, args, setup) => {
    const r = await both([...args], setup);
    expectSame(r);
  });

  it('a network error on update --all', async () => {
    const r = await both(['update', '--all'], two, NOTHING_LISTENING);
    expectSame(r);
    expect(r.fast.code).not.toBe(0);
  });
});

describe('declines what it cannot match exactly (oclif runs)', () => {
  it.each([
    [['install', '--help']],
    [['install', '-h']],
    [['install']],
    [['install', 'alpha', '--dry-run']],
    [['install', 'alpha', '--force']],
    [['install', '--frozen', 'alpha']],
    [['install', '--lockfile', 'x.lock', 'alpha']],
    [['install', 'alpha', '--yes', '--yes']],
    [['install', 'alpha', '--quiet', '--verbose']],
    [['install', 'alpha', '--']],
    [['install', 'alpha', '']],
    [['install', 'alpha', '-yq']],
    [['install', 'alpha', '--index']],
    [['install', 'alpha', '--index', '--json']],
    [['install', 'alpha', '--min-age', '3d']],
    [['update', '--all', '--dry-run']],
    [['update', '--all', '--accept', 'sha256:00']],
    [['upgrade', '--all']],
    [['update', '--all', '--frozen']],
  ])('%j', async (args) => {
    const h = makeTempHome('yep-fastnet-decline-');
    homes.push(h);
    const mark = join(h.root, 'mark');
    await runCli(args, { env: { ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
    expect(existsSync(mark)).toBe(false);
  });

  it.each([[{ YEP_EXT_DEBUG: '1' }], [{ DEBUG: '*' }], [{ YEP_EXT_CONTENT_TYPE: 'json' }], [{ NODE_ENV: 'development' }]])(
    'in an environment where oclif adds output: %j',
    async (env) => {
      const h = makeTempHome('yep-fastnet-decline-');
      homes.push(h);
      const mark = join(h.root, 'mark');
      await runCli(['update', '--all'], { env: { ...h.env, YEP_EXT_INDEX: reg.indexUrl, YEP_EXT_TEST_FAST_PATH_MARK: mark, ...env } });
      expect(existsSync(mark)).toBe(false);
    },
  );
});

describe('what the fast path loads', () => {
  it('install and update --all load fast-net.cjs and fast-net-run.cjs, never cli.cjs (oclif)', async () => {
    const h = makeTempHome('yep-fastnet-load-');
    homes.push(h);
    const loads = loadRecorder(h.root);
    const bundle = join(REPO_ROOT, 'dist', 'bundle');
    const edit = () => appendFileSync(join(h.configDir, 'extensions', 'alpha', 'bin', 'alpha-server'), '# edited\n');
    for (const [args, first, before] of [
      [
        ['install', 'alpha'],
        ['fast-net.cjs', 'fast-net-run.cjs'],
      ],
      [
        ['update', '--all'],
        ['fast-net.cjs', 'fast-net-run.cjs'],
      ],
      // Warm: the small runner alone (src/cli/fast-frozen.ts), never the fetching code.
      [
        ['install', '--frozen'],
        ['fast-net.cjs', 'fast-frozen.cjs'],
      ],
      // An edited tree must be fetched again: handed over to the full runner.
      [['install', '--frozen'], ['fast-net.cjs', 'fast-frozen.cjs', 'fast-net-run.cjs'], edit],
    ] as Array<[string[], string[], (() => void)?]>) {
      before?.();
      // Not spawnSync: the registry answers from this process.
      const r = await runCli(args, { env: { ...h.env, YEP_EXT_INDEX: reg.indexUrl, ...loads.env } });
      expect(r.code, r.stderr).toBe(0);
      const { modules, seen } = loads.read();
      const ours = modules.filter((f) => f.startsWith(bundle)).map((f) => relative(bundle, f));
      expect(ours).not.toContain('cli.cjs');
      expect(ours.slice(0, first.length), args.join(' ')).toEqual(first);
      if (first.length === 2 && first[1] === 'fast-frozen.cjs') expect(ours).not.toContain('fast-net-run.cjs');
      // fast-net-run.cjs compiles from its V8 code cache on Node 20 (Node 22+: Node's own compile
      // cache, no vm.Script); fast-frozen.cjs has none (docs/performance.md, round nine).
      const nodeHasCompileCache = typeof (NodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';
      const runner = join(bundle, 'fast-net-run.cjs');
      expect(seen, args.join(' ')).toEqual(!nodeHasCompileCache && ours.includes('fast-net-run.cjs') ? [{ file: runner, rejected: false }] : []);
    }
    expect(readFileSync(join(h.configDir, 'extensions', 'alpha', 'bin', 'alpha-server'), 'utf8')).not.toContain('# edited');
    // A declined shape loads only the small fast-net.cjs before oclif.
    const r = await runCli(['install', 'alpha', '--dry-run'], { env: { ...h.env, YEP_EXT_INDEX: reg.indexUrl, ...loads.env } });
    expect(r.code, r.stderr).toBe(0);
    const { modules } = loads.read();
    const ours = modules.filter((f) => f.startsWith(bundle)).map((f) => relative(bundle, f));
    expect(ours).toContain('cli.cjs');
    expect(ours).not.toContain('fast-net-run.cjs');
  });
});

describe.skipIf(SKIP_PTY)('in a real terminal (script): the same screen bytes', () => {
  it.each([[['install', 'alpha']], [['install', '--frozen']], [['update', '--all']]])('%j', async (args) => {
    const run = async (oclif: boolean) => {
      const h = makeTempHome('yep-fastnet-pty-');
      homes.push(h);
      const env = { ...h.env, YEP_EXT_INDEX: reg.indexUrl };
      if (args[0] !== 'install' || args[1] === '--frozen') await install('crates.io:yolop-extension-beta@=1.0.0')(h, env);
      const mark = join(h.root, 'mark');
      const r = await runCliInPty(args, { env: { ...env, YEP_EXT_TEST_FAST_PATH_MARK: mark, ...(oclif ? { YEP_EXT_NO_FAST_PATH: '1' } : {}) }, cols: 100 });
      // The screen as left (the live wait display, drawn only for a wait over 300 ms, erases itself).
      return { code: r.code, output: screenOf(r.output.split(h.root).join('<home>')), took: existsSync(mark) };
    };
    const fast = await run(false);
    const oclif = await run(true);
    expect(fast.took).toBe(true);
    expect(oclif.took).toBe(false);
    expect({ code: fast.code, output: fast.output }).toEqual({ code: oclif.code, output: oclif.output });
  });
});
