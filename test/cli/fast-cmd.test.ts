/**
 * The oclif-free runner of enable, disable, remove, set-secret and verify
 * (src/cli/fast-cmd.ts) must be invisible: for every argument shape it accepts,
 * run once through it and once through oclif (YEP_EXT_NO_FAST_PATH=1), each in a
 * fresh home prepared the same way, stdout, stderr, the exit status AND the state
 * left on disk (store, lock, settings, secrets: test/helpers/home-state.ts) are
 * identical; failures too. Every shape it cannot match exactly is left to oclif
 * (the mark stays unwritten), and what it loads is checked.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { homeState } from '../helpers/home-state.js';
import { writePackage } from '../helpers/packages.js';
import { LOGFIRE_SCHEMA } from '../helpers/extension-fixture.js';
import { setupInstall } from '../helpers/setup-install.js';
import { fakeAgent, pathWithoutAgent } from '../helpers/fake-agent.js';
import { SKIP_PTY, runCliInPty } from '../helpers/pty.js';
import { loadRecorder } from '../helpers/module-log.js';
import type { FastPathSide } from '../helpers/fast-path-both.js';

/** Sources shared by both runs (path installs link to them in place: same path, same output). */
let shared: string;
const homes: TempHome[] = [];

type Setup = (h: TempHome) => Promise<void> | void;

type Side = FastPathSide;

/** Run `args` in a fresh home after `setup`, through the fast path or (oclif) not; the home's path made comparable. */
async function side(args: string[], setup: Setup, opts: { env?: Record<string, string>; input?: string }, oclif: boolean): Promise<Side> {
  const h = makeTempHome('yep-fastcmd-');
  homes.push(h);
  await setup(h);
  const mark = join(h.root, 'fast-path-taken');
  const env = { ...h.env, PATH: pathWithoutAgent(), ...opts.env, YEP_EXT_TEST_FAST_PATH_MARK: mark, ...(oclif ? { YEP_EXT_NO_FAST_PATH: '1' } : {}) };
  const r: RunResult = await runCli(args, { env, ...(opts.input !== undefined ? { input: opts.input } : {}) });
  const norm = (s: string): string => s.split(h.root).join('<home>');
  return { code: r.code, stdout: norm(r.stdout), stderr: norm(r.stderr), state: homeState(h.configDir).files.map(norm), took: existsSync(mark) };
}

/** Both ways; returns the fast side after checking it ran and matched oclif's in every byte and file. */
async function same(args: string[], setup: Setup = () => {}, opts: { env?: Record<string, string>; input?: string } = {}): Promise<Side> {
  const fast = await side(args, setup, opts, false);
  const oclif = await side(args, setup, opts, true);
  expect(oclif.took, 'YEP_EXT_NO_FAST_PATH=1 must force oclif').toBe(false);
  expect(fast.took, 'the fast path must have run').toBe(true);
  const { took: _a, ...f } = fast;
  const { took: _b, ...o } = oclif;
  expect(f).toEqual(o);
  return fast;
}

/** The home as `yep-ext install --yes <names>` leaves it (in this process: test/helpers/setup-install.ts). */
const installed =
  (...names: string[]): Setup =>
  async (h) => {
    await setupInstall(
      { ...h.env, PATH: pathWithoutAgent() },
      names.map((n) => join(shared, n)),
      { ignoreEngines: true },
    );
  };
const settings =
  (text: string): Setup =>
  (h) => {
    mkdirSync(h.configDir, { recursive: true });
    writeFileSync(join(h.configDir, 'settings.toml'), text);
  };
const then =
  (...steps: Setup[]): Setup =>
  async (h) => {
    for (const s of steps) await s(h);
  };
const ENABLED = '# mine\n[[capabilities]]\nref = "ext:plain"\nkeep = 1\n';
const BROKEN_SETTINGS = '[[capabilities]\nref = ';

beforeAll(() => {
  shared = realpathSync(mkdtempSync(join(tmpdir(), 'yep-fastcmd-src-')));
  writePackage(join(shared, 'plain'), { name: 'plain', version: '1.2.0' });
  writePackage(join(shared, 'cfg'), { name: 'cfg', yolop: { config_schema: LOGFIRE_SCHEMA } });
  const future = writePackage(join(shared, 'future'), { name: 'future' });
  const m = JSON.parse(readFileSync(join(future, 'plugin.json'), 'utf8'));
  writeFileSync(join(future, 'plugin.json'), JSON.stringify({ ...m, engines: { yolop: '>=9' } }));
});
afterAll(() => {
  for (const h of homes) h.cleanup();
  rmSync(shared, { recursive: true, force: true });
});

describe('enable: same bytes and same state as oclif', () => {
  it.each([[['enable', 'plain']], [['enable', 'yolop-extension-plain', '--json']], [['enable', 'plain', '--ignore-engines']]])('%j', async (args) => {
    const r = await same(args, installed('plain'));
    expect(r.code).toBe(0);
  });

  it('setup incomplete (exit 10), with --config / -c / --config= values, and --json', async () => {
    for (const args of [
      ['enable', 'cfg', '--config', 'endpoint=https://e.example', '-c', 'mode=fast'],
      ['enable', '--config=mode=slow', 'cfg', '--json'],
      ['enable', 'cfg'],
    ]) {
      const r = await same(args, installed('cfg'));
      expect(r.code, args.join(' ')).toBe(10);
    }
  });

  it('a value the schema refuses, a field that does not exist, and a secret given as --config', async () => {
    for (const args of [
      ['enable', 'cfg', '-c', 'mode=bogus'],
      ['enable', 'cfg', '-c', 'nosuch=1', '--json'],
      ['enable', 'cfg', '-c', 'token=abcd'],
    ]) {
      const r = await same(args, installed('cfg'));
      expect(r.code, args.join(' ')).not.toBe(0);
    }
  });

  it('not installed (with a suggestion), a bad name, a corrupt settings.toml, and engines refused (exit 4)', async () => {
    expect((await same(['enable', 'plian'], installed('plain'))).stderr).toMatch(/plain/);
    expect((await same(['enable', 'nosuch', '--json'])).code).toBe(3);
    expect((await same(['enable', '../evil'])).code).not.toBe(0);
    expect((await same(['enable', 'plain'], then(installed('plain'), settings(BROKEN_SETTINGS)))).code).not.toBe(0);
    const agentDir = join(shared, 'agent');
    if (!existsSync(agentDir)) fakeAgent(agentDir, '0.12.1');
    const env = { PATH: `${agentDir}:${pathWithoutAgent()}` };
    expect((await same(['enable', 'future'], installed('future'), { env })).code).toBe(4);
    expect((await same(['enable', 'future', '--ignore-engines', '--json'], installed('future'), { env })).code).toBe(0);
  });
});

describe('a manifest the generated check rejects (judged by the zod schemas, manifest-schema.cjs, loaded lazily)', () => {
  /** A linked install whose plugin.json was then edited into one the generated check refuses (one path for both sides: the lock names it). */
  const broken: Setup = async (h) => {
    const dir = writePackage(join(shared, 'bent'), { name: 'bent' });
    await setupInstall({ ...h.env, PATH: pathWithoutAgent() }, [dir]);
    const m = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'));
    writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ ...m, yolop: { ...m.yolop, tools: 'nope' } }));
  };
  it.each([[['enable', 'bent']], [['enable', 'bent', '--json']], [['verify', '--json']]])('%j', async (args) => {
    const r = await same(args, broken);
    expect(`${r.stdout}${r.stderr}`).toMatch(/tools/);
  });
});

describe('disable: same bytes and same state as oclif', () => {
  it('enabled, already disabled, --json, not installed, corrupt settings', async () => {
    expect((await same(['disable', 'plain'], then(installed('plain'), settings(ENABLED)))).code).toBe(0);
    expect((await same(['disable', 'plain', '--json'], then(installed('plain'), settings(ENABLED)))).code).toBe(0);
    expect((await same(['disable', 'plain'], installed('plain'))).code).toBe(0);
    expect((await same(['disable', 'nosuch'])).code).toBe(3);
    expect((await same(['disable', 'plain', '--json'], then(installed('plain'), settings(BROKEN_SETTINGS)))).code).not.toBe(0);
  });
});

describe('remove (and its aliases): same bytes and same state as oclif', () => {
  it('installed, with settings and a secret; by each name; --json', async () => {
    const full = then(installed('plain', 'cfg'), settings(`${ENABLED}\n[[capabilities]]\nref = "ext:cfg"\nmode = "fast"\n`), (h) =>
      writeFileSync(join(h.configDir, 'connections.toml'), '["ext:cfg"]\ntoken = "abcd1234"\n', { mode: 0o600 }),
    );
    for (const args of [
      ['remove', 'cfg'],
      ['rm', 'plain', '--json'],
      ['uninstall', 'yolop-extension-cfg'],
    ]) {
      const r = await same(args, full);
      expect(r.code, args.join(' ')).toBe(0);
    }
  });

  it('not installed (exit 3), with and without --json, and what a name left behind', async () => {
    expect((await same(['remove', 'nosuch'])).code).toBe(3);
    expect((await same(['remove', 'nosuch', '--json'], installed('plain'))).code).toBe(3);
    const r = await same(['remove', 'ghost'], settings('[[capabilities]]\nref = "ext:ghost"\n'));
    expect(r.stdout).toMatch(/left behind/);
    // A settings.toml nobody can parse (yolop neither): the package goes, the file is left with a warning.
    const broken = await same(['remove', 'plain'], then(installed('plain'), settings(BROKEN_SETTINGS)));
    expect(broken.code, broken.stderr).toBe(0);
    expect(broken.stderr).toContain('Left settings.toml unchanged');
  });
});

describe('set-secret: same bytes and same state as oclif', () => {
  it('--stdin, --json, --unset, and the refusals', async () => {
    const input = { input: 'abcd-secret-1\n' };
    expect((await same(['set-secret', 'cfg', 'token', '--stdin'], installed('cfg'), input)).code).toBe(0);
    expect((await same(['set-secret', 'yolop-extension-cfg', 'token', '--stdin', '--json'], installed('cfg'), input)).code).toBe(0);
    const withSecret: Setup = then(installed('cfg'), (h) =>
      writeFileSync(join(h.configDir, 'connections.toml'), '["ext:cfg"]\ntoken = "abcd1234"\n', { mode: 0o600 }),
    );
    expect((await same(['set-secret', 'cfg', 'token', '--unset'], withSecret)).code).toBe(0);
    // Not a secret field; too short for the schema; no terminal and no --stdin; the value as an argument; not installed.
    for (const [args, i] of [
      [['set-secret', 'cfg', 'endpoint', '--stdin'], input],
      [['set-secret', 'cfg', 'token', '--stdin'], { input: 'ab' }],
      [['set-secret', 'cfg', 'token'], {}],
      [['set-secret', 'cfg', 'token', 'hunter2', '--json'], {}],
      [['set-secret', 'nosuch', 'token', '--stdin'], input],
    ] as Array<[string[], { input?: string }]>) {
      const r = await same(args, installed('cfg'), i);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stdout + r.stderr).not.toContain('hunter2');
    }
  });
});

describe('verify: same bytes and same state as oclif', () => {
  it('all, by name, --json, not installed, hash drift (exit 5), an unlocked package', async () => {
    const two = installed('plain', 'cfg');
    expect((await same(['verify'], two)).code).toBe(0);
    expect((await same(['verify', '--json'], two)).code).toBe(0);
    expect((await same(['verify', 'cfg', 'plain'], two)).code).toBe(0);
    expect((await same(['verify', 'nosuch'], two)).code).not.toBe(0);
    const drift: Setup = then(installed('plain'), (h) => {
      mkdirSync(join(h.configDir, 'extensions', 'byhand'), { recursive: true });
      writeFileSync(
        join(h.configDir, 'extensions', 'byhand', 'plugin.json'),
        readFileSync(join(shared, 'plain', 'plugin.json'), 'utf8').replace('"plain"', '"byhand"'),
      );
    });
    expect((await same(['verify'], drift)).code).toBe(5);
    expect((await same(['verify', '--json'], drift)).code).toBe(5);
  });
});

describe.skipIf(SKIP_PTY)('in a real terminal (script), in colour: the same bytes', () => {
  it.each([
    [['enable', 'plain'], installed('plain')],
    [['disable', 'plain'], then(installed('plain'), settings(ENABLED))],
    [['verify'], installed('plain', 'cfg')],
    [['rm', 'plain'], installed('plain')],
    [['remove', 'nosuch'], installed('plain')],
  ] as Array<[string[], Setup]>)('%j', async (args, setup) => {
    const run = async (oclif: boolean) => {
      const h = makeTempHome('yep-fastcmd-pty-');
      homes.push(h);
      await setup(h);
      const { NO_COLOR: _noColor, ...env } = h.env;
      const mark = join(h.root, 'mark');
      const r = await runCliInPty(args, {
        env: { ...env, PATH: pathWithoutAgent(), TERM: 'xterm-256color', YEP_EXT_TEST_FAST_PATH_MARK: mark, ...(oclif ? { YEP_EXT_NO_FAST_PATH: '1' } : {}) },
        cols: 100,
      });
      return {
        code: r.code,
        output: r.output.split(h.root).join('<home>'),
        state: homeState(h.configDir).files.map((f) => f.split(h.root).join('<home>')),
        took: existsSync(mark),
      };
    };
    const fast = await run(false);
    const oclif = await run(true);
    expect(fast.took).toBe(true);
    expect(oclif.took).toBe(false);
    expect({ code: fast.code, output: fast.output, state: fast.state }).toEqual({ code: oclif.code, output: oclif.output, state: oclif.state });
    // The ✔ lines are green on a terminal: the comparison covers colour.
    if (args[0] === 'verify' || args[0] === 'rm') expect(fast.output).toContain('\u001b[32m');
  });
});

describe('declines what it cannot match exactly (oclif runs)', () => {
  it.each([
    [['enable']],
    [['enable', 'plain', '--help']],
    [['enable', 'plain', '-h']],
    [['enable', 'plain', '--bogus']],
    [['enable', 'plain', 'extra']],
    [['enable', 'plain', '-c']],
    [['enable', 'plain', '-cmode=fast']],
    [['enable', 'plain', '--config', '--json']],
    [['enable', 'plain', '--ignore-engines=true']],
    [['disable', 'plain', '--json', '--json']],
    [['remove', '--', 'plain']],
    [['remove', '']],
    [['set-secret', 'cfg', 'token', '--unset', '--stdin']],
    [['set-secret', 'cfg', 'token', '--stdin=x']],
    [['verify', '--', 'x']],
    [['verify', '-x']],
  ])('%j', async (args) => {
    const h = makeTempHome('yep-fastcmd-decline-');
    homes.push(h);
    const mark = join(h.root, 'mark');
    await runCli(args, { env: { ...h.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
    expect(existsSync(mark)).toBe(false);
  });

  it.each([[{ YEP_EXT_DEBUG: '1' }], [{ DEBUG: '*' }], [{ YEP_EXT_CONTENT_TYPE: 'json' }], [{ NODE_ENV: 'development' }], [{ YEP_EXT_REDIRECTED: '1' }]])(
    'in an environment oclif reacts to: %j',
    async (env) => {
      const h = makeTempHome('yep-fastcmd-decline-');
      homes.push(h);
      const mark = join(h.root, 'mark');
      await runCli(['disable', 'nosuch'], { env: { ...h.env, YEP_EXT_TEST_FAST_PATH_MARK: mark, ...env } });
      expect(existsSync(mark)).toBe(false);
    },
  );
});

describe('what the fast path loads', () => {
  it('an accepted shape loads fast-cmd.cjs, fast-cmd-run.cjs (from its code cache) and only its own libraries, never cli.cjs; a declined one loads cli.cjs', async () => {
    const h = makeTempHome('yep-fastcmd-load-');
    homes.push(h);
    await installed('cfg')(h);
    // The modules loaded by the exit, and every vm.Script given cached data (and whether V8 took it).
    const loads = loadRecorder(h.root);
    const bundle = join(REPO_ROOT, 'dist', 'bundle');
    const nodeHasCompileCache = typeof ((await import('node:module')).default as { enableCompileCache?: unknown }).enableCompileCache === 'function';
    const ours = async (args: string[]): Promise<string[]> => {
      await runCli(args, { env: { ...h.env, ...loads.env } });
      const { modules, seen } = loads.read();
      const files = modules.filter((f) => f.startsWith(bundle)).map((f) => relative(bundle, f));
      // Node 20: the runner compiles from the code cache the build wrote (Node 22+: its own compile cache).
      if (files.includes('fast-cmd-run.cjs')) expect(seen).toEqual(nodeHasCompileCache ? [] : [{ file: join(bundle, 'fast-cmd-run.cjs'), rejected: false }]);
      return files;
    };
    // disable's body needs no schema validator: the bodies are evaluated one at a time.
    expect(await ours(['disable', 'cfg'])).toEqual(['fast-cmd.cjs', 'fast-cmd-run.cjs']);
    expect(await ours(['enable', 'cfg', '--json'])).toEqual(['fast-cmd.cjs', 'fast-cmd-run.cjs', join('lib', 'ajv.cjs')]);
    for (const args of [['verify'], ['rm', 'nosuch']]) expect(await ours(args), args.join(' ')).toEqual(['fast-cmd.cjs', 'fast-cmd-run.cjs']);
    const declined = await ours(['disable', 'cfg', '--help']);
    expect(declined).toContain('cli.cjs');
    expect(declined).not.toContain('fast-cmd-run.cjs');
  });
});
