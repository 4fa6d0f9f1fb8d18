/**
 * The oclif-free `list` fast path (src/cli/fast-path.ts) must be invisible: for
 * every argument shape it accepts, stdout, stderr and the exit status are
 * byte-identical to the oclif path (YEP_EXT_NO_FAST_PATH=1), and every shape or
 * environment it cannot match exactly is left to oclif.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { loadLock, saveLock } from '../../src/core/store/lockfile.js';
import { BIN, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { fakeAgent, pathWithoutAgent } from '../helpers/fake-agent.js';
import { SKIP_PTY, runCliInPty } from '../helpers/pty.js';
import { runBothWays } from '../helpers/fast-path-both.js';

let home: TempHome;
let mark: string;
const store = () => join(home.configDir, 'extensions');

function both(args: string[], env: Record<string, string> = {}): Promise<{ fast: RunResult; oclif: RunResult; tookFastPath: boolean }> {
  return runBothWays(args, { ...home.env, ...env }, mark);
}

function expectSame(r: { fast: RunResult; oclif: RunResult }): void {
  expect({ code: r.fast.code, stdout: r.fast.stdout, stderr: r.fast.stderr }).toEqual({ code: r.oclif.code, stdout: r.oclif.stdout, stderr: r.oclif.stderr });
}

beforeAll(async () => {
  home = makeTempHome('yep-fast-');
  mark = join(home.root, 'fast-path-taken');
  // A store with something in every list column and problem kind:
  // a path install, one whose linked directory is gone, a non-ASCII source path
  // (the table falls back to cli-table3), a crate entry with hash drift, a
  // missing crate entry, and a directory placed by hand.
  const ok = writePackage(join(home.root, 'src', 'alpha'), { name: 'alpha', version: '1.2.3' });
  const gone = writePackage(join(home.root, 'src', 'gone'), { name: 'gone' });
  const wide = writePackage(join(home.root, 'src', 'ünïcödé-日本'), { name: 'wide' });
  for (const dir of [ok, gone, wide]) {
    const r = await runCli(['install', dir], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
  }
  rmSync(gone, { recursive: true });
  const drift = writePackage(join(store(), 'drift'), { name: 'drift', version: '0.3.0' });
  const lock = await loadLock(join(store(), 'extensions.lock'));
  lock.entries.push(
    {
      name: 'drift',
      version: '0.3.0',
      content_hash: `sha256:${'0'.repeat(64)}`,
      source: { type: 'crate', crate_name: 'yolop-extension-drift', version: '0.3.0' },
    },
    {
      name: 'missing',
      version: '2.0.0',
      content_hash: await contentHash(drift),
      source: { type: 'crate', crate_name: 'yolop-extension-missing', version: '2.0.0' },
    },
  );
  await saveLock(join(store(), 'extensions.lock'), lock);
  writePackage(join(store(), 'byhand'), { name: 'byhand' });
});
afterAll(() => home.cleanup());

describe('list fast path: same bytes as oclif', () => {
  const shapes = [
    ['list'],
    ['list', '--json'],
    ['list', '--no-verify'],
    ['list', '--verify'],
    ['list', '--json', '--no-verify'],
    ['list', '--no-verify', '--json'],
  ];
  it.each(shapes.map((a) => [a.join(' '), a] as const))('%s', async (_name, args) => {
    const r = await both(args);
    expect(r.tookFastPath).toBe(true);
    expect(r.fast.code).toBe(0);
    expectSame(r);
  });

  it('shows every problem kind (so the comparison above covers them)', async () => {
    const r = await both(['list', '--json']);
    const problems = (JSON.parse(r.fast.stdout) as { extensions: { name: string; problems: string[] }[] }).extensions.map(
      (e) => `${e.name}: ${e.problems.join('; ')}`,
    );
    expect(problems.join('\n')).toMatch(/gone: missing: the linked directory/);
    expect(problems.join('\n')).toMatch(/drift: hash drift/);
    expect(problems.join('\n')).toMatch(/missing: missing: not in the store/);
    expect(problems.join('\n')).toMatch(/byhand: not in extensions.lock/);
    expect((await both(['list'])).fast.stdout).toContain('日本');
  });

  it('an empty home', async () => {
    const empty = makeTempHome('yep-fast-empty-');
    try {
      for (const args of [['list'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCli(args, { env: { ...empty.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
        expect(existsSync(mark)).toBe(true);
        const oclif = await runCli(args, { env: { ...empty.env, YEP_EXT_NO_FAST_PATH: '1' } });
        expect([fast.code, fast.stdout, fast.stderr]).toEqual([oclif.code, oclif.stdout, oclif.stderr]);
      }
    } finally {
      empty.cleanup();
    }
  });

  it('a settings.toml that is not TOML makes `enabled` unknown, not the listing fatal (both paths)', async () => {
    const broken = makeTempHome('yep-fast-settings-');
    try {
      const pkg = writePackage(join(broken.root, 'src', 'alpha'), { name: 'alpha' });
      expect((await runCli(['install', pkg], { env: broken.env })).code).toBe(0);
      writeFileSync(join(broken.configDir, 'settings.toml'), '[[capabilities]\nref = ');
      for (const args of [['list'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCli(args, { env: { ...broken.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
        expect(existsSync(mark)).toBe(true);
        const oclif = await runCli(args, { env: { ...broken.env, YEP_EXT_NO_FAST_PATH: '1' } });
        expect(fast.code).toBe(0);
        expect(fast.stdout).toContain('enabled state unknown');
        expect([fast.code, fast.stdout, fast.stderr]).toEqual([oclif.code, oclif.stdout, oclif.stderr]);
      }
    } finally {
      broken.cleanup();
    }
  });

  it('a manifest the generated check rejects is judged by the zod schemas, loaded from manifest-schema.cjs (both paths)', async () => {
    const bad = makeTempHome('yep-fast-manifest-');
    try {
      const dir = writePackage(join(bad.root, 'src', 'alpha'), { name: 'alpha' });
      expect((await runCli(['install', dir], { env: bad.env })).code).toBe(0);
      // A linked install: list reads the user's plugin.json again.
      const manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'));
      writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ ...manifest, name: 42 }));
      const fastText = readFileSync(join(BIN, '..', '..', 'dist', 'bundle', 'fast-path.cjs'), 'utf8');
      expect(fastText).not.toMatch(/\bzod\b|require_zod|ZodError/);
      expect(fastText).toContain('./manifest-schema.cjs');
      for (const args of [['list'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCli(args, { env: { ...bad.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
        expect(existsSync(mark)).toBe(true);
        const oclif = await runCli(args, { env: { ...bad.env, YEP_EXT_NO_FAST_PATH: '1' } });
        expect(`${fast.stdout}${fast.stderr}`).toMatch(/name/);
        expect([fast.code, fast.stdout, fast.stderr]).toEqual([oclif.code, oclif.stdout, oclif.stderr]);
      }
    } finally {
      bad.cleanup();
    }
  });

  it('several entries per extension: enabled, set and kept config as the host reads them (both paths)', async () => {
    const multi = makeTempHome('yep-fast-multi-');
    try {
      const schema = { type: 'object', properties: { endpoint: { type: 'string' }, port: { type: 'integer' } } };
      for (const name of ['kept', 'off', 'on']) {
        const pkg = writePackage(join(multi.root, 'src', name), { name, yolop: { config_schema: schema } });
        expect((await runCli(['install', pkg], { env: multi.env })).code).toBe(0);
      }
      writeFileSync(
        join(multi.configDir, 'settings.toml'),
        [
          '[[capabilities]]\nref = "ext:kept"\nenabled = false\nendpoint = "e"\n', // then the host's bare enable
          '[[capabilities]]\nref = "ext:on"\nenabled = false\n',
          "[[capabilities]]\nid = 'ext:off'\nport = 1\n",
          '[[capabilities]]\nref = "ext:kept"\n',
          '[[capabilities]]\nref = "ext:on"\nport = 2\n',
          '[[capabilities]]\nref = "ext:off"\nenabled = false\n',
        ].join('\n'),
      );
      for (const args of [['list'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCli(args, { env: { ...multi.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
        expect(existsSync(mark)).toBe(true);
        const oclif = await runCli(args, { env: { ...multi.env, YEP_EXT_NO_FAST_PATH: '1' } });
        expect(fast.code).toBe(0);
        expect([fast.code, fast.stdout, fast.stderr]).toEqual([oclif.code, oclif.stdout, oclif.stderr]);
      }
      const doc = JSON.parse((await runCli(['list', '--json'], { env: multi.env })).stdout) as {
        extensions: { name: string; enabled: boolean; config: { key: string; set: boolean; kept?: boolean }[] }[];
      };
      const state = Object.fromEntries(
        doc.extensions.map((e) => [
          e.name,
          { enabled: e.enabled, set: e.config.filter((f) => f.set).map((f) => f.key), kept: e.config.filter((f) => f.kept).map((f) => f.key) },
        ]),
      );
      expect(state).toEqual({
        kept: { enabled: true, set: [], kept: ['endpoint'] },
        off: { enabled: false, set: [], kept: ['port'] },
        on: { enabled: true, set: ['port'], kept: [] },
      });
      expect((await runCli(['list'], { env: multi.env })).stdout).toContain('endpoint: kept, not in effect');
    } finally {
      multi.cleanup();
    }
  });

  it('engines.yolop against a fake agent: the same verdicts and problems on both paths (probed once, then cached)', async () => {
    const eng = makeTempHome('yep-fast-engines-');
    try {
      for (const [name, range] of [
        ['old', '>=0.1'],
        ['new', '>=9'],
        ['odd', 'not a range'],
        ['plain', undefined],
      ] as const) {
        const pkg = writePackage(join(eng.root, 'src', name), { name });
        if (range !== undefined) {
          const m = JSON.parse(readFileSync(join(pkg, 'plugin.json'), 'utf8'));
          writeFileSync(join(pkg, 'plugin.json'), JSON.stringify({ ...m, engines: { yolop: range } }));
        }
        expect((await runCli(['install', pkg, '--ignore-engines'], { env: eng.env })).code).toBe(0);
      }
      const agent = fakeAgent(join(eng.root, 'agent'), '0.12.1');
      const env = { ...eng.env, PATH: `${agent.dir}:${pathWithoutAgent()}` };
      for (const args of [['list'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCli(args, { env: { ...env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
        expect(existsSync(mark)).toBe(true);
        const oclif = await runCli(args, { env: { ...env, YEP_EXT_NO_FAST_PATH: '1' } });
        expect(fast.code).toBe(0);
        expect([fast.code, fast.stdout, fast.stderr]).toEqual([oclif.code, oclif.stdout, oclif.stderr]);
      }
      expect(agent.runs()).toBe(1);
      const doc = JSON.parse((await runCli(['list', '--json'], { env })).stdout) as { extensions: { name: string; engines: { status: string } }[] };
      expect(Object.fromEntries(doc.extensions.map((e) => [e.name, e.engines.status]))).toEqual({
        new: 'excludes',
        odd: 'malformed',
        old: 'admits',
        plain: 'none',
      });
    } finally {
      eng.cleanup();
    }
  });

  it('errors: a corrupt lock fails the same way, with and without --json', async () => {
    const broken = makeTempHome('yep-fast-broken-');
    try {
      mkdirSync(join(broken.configDir, 'extensions'), { recursive: true });
      writeFileSync(join(broken.configDir, 'extensions', 'extensions.lock'), '[[extensions]\nname = ');
      for (const args of [['list'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCli(args, { env: { ...broken.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
        expect(existsSync(mark)).toBe(true);
        const oclif = await runCli(args, { env: { ...broken.env, YEP_EXT_NO_FAST_PATH: '1' } });
        expect(fast.code).not.toBe(0);
        expect([fast.code, fast.stdout, fast.stderr]).toEqual([oclif.code, oclif.stdout, oclif.stderr]);
      }
    } finally {
      broken.cleanup();
    }
  });
});

describe('list fast path: piped and in a terminal', () => {
  it('piped, both paths print the tab-separated form (a header, no box characters)', async () => {
    const r = await both(['list']);
    expect(r.tookFastPath).toBe(true);
    expectSame(r);
    expect(r.fast.stdout.split('\n')[0]).toBe('name\tversion\tenabled\tsource\tconfig\tproblems');
    expect(r.fast.stdout).not.toMatch(/[│─┌┐└┘]/);
  });

  describe.skipIf(SKIP_PTY)('in a real terminal (script)', () => {
    it.each([60, 200])('at %i columns: the same bytes as oclif, fitted boxes', async (cols) => {
      for (const args of [['list'], ['list', '--no-verify'], ['list', '--json']]) {
        rmSync(mark, { force: true });
        const fast = await runCliInPty(args, { env: { ...home.env, YEP_EXT_TEST_FAST_PATH_MARK: mark }, cols });
        expect(existsSync(mark), `${args.join(' ')}: the fast path must serve a terminal too`).toBe(true);
        rmSync(mark, { force: true });
        const oclif = await runCliInPty(args, { env: { ...home.env, YEP_EXT_TEST_FAST_PATH_MARK: mark, YEP_EXT_NO_FAST_PATH: '1' }, cols });
        expect(existsSync(mark)).toBe(false);
        expect(fast).toEqual(oclif);
        if (args.includes('--json')) continue;
        expect(fast.output).toMatch(/^┌─/);
        for (const line of fast.output.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(cols);
      }
    });
  });
});

describe('list fast path: declines what it cannot match exactly', () => {
  const declined = [
    ['list', '--help'],
    ['list', '-h'],
    ['list', '--bogus'],
    ['list', 'extra-argument'],
    ['list', '--json', '--json'],
    ['list', '--verify', '--no-verify'],
    // list has no --index (it never reads a registry): oclif reports the unknown flag.
    ['list', '--index', 'http://127.0.0.1:1/index/'],
    ['list', '--index=sparse+http://127.0.0.1:1/index/', '--json'],
    ['list', '--index'],
    ['list', '--index='],
    ['list', '--index', '--json'],
    ['list', '--verify=false'],
    ['list', '--', '--json'],
  ];
  it.each(declined.map((a) => [a.join(' '), a] as const))('%s', async (_name, args) => {
    const r = await both(args);
    expect(r.tookFastPath).toBe(false);
    expectSame(r);
  });

  it.each([[{ YEP_EXT_DEBUG: '1' }], [{ DEBUG: '*' }], [{ YEP_EXT_CONTENT_TYPE: 'json' }], [{ NODE_ENV: 'development' }]])(
    'in an environment oclif reacts to: %o',
    async (env) => {
      const r = await both(['list'], env);
      expect(r.tookFastPath).toBe(false);
    },
  );

  it('with an oclif JSON theme file (it colours --json output)', async () => {
    const oclifConfig = join(home.root, 'oclif-config');
    mkdirSync(oclifConfig, { recursive: true });
    writeFileSync(join(oclifConfig, 'theme.json'), JSON.stringify({ json: { key: 'red' } }));
    const env = { YEP_EXT_CONFIG_DIR: oclifConfig };
    expect((await both(['list', '--json'], env)).tookFastPath).toBe(false);
    // The theme does not touch the table: the fast path still serves it.
    expect((await both(['list'], env)).tookFastPath).toBe(true);
  });
});

describe('list fast path: stdout failures', () => {
  /** Run `list` with stdout set up by `shell` (bash), both ways; return exit statuses and stderr. */
  function withStdout(shell: string, extra: Record<string, string>): { status: number | null; stderr: string } {
    const r = spawnSync('bash', ['-c', `${shell} "${process.execPath}" "${BIN}" list`], { env: { ...home.env, ...extra }, encoding: 'utf8' });
    return { status: r.status, stderr: r.stderr };
  }

  it('a reader that went away (EPIPE): exit 0 and nothing on stderr, like oclif', () => {
    // The reader exits at once; the CLI writes ~50 ms later, into a pipe with no reader.
    for (const extra of [{}, { YEP_EXT_NO_FAST_PATH: '1' }]) {
      const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${BIN}" list | true; echo "status=\${PIPESTATUS[0]}"`], {
        env: { ...home.env, ...extra },
        encoding: 'utf8',
      });
      expect(r.stdout.trim(), JSON.stringify(extra)).toBe('status=0');
      expect(r.stderr).toBe('');
    }
  });

  it('a full disk (ENOSPC) is a crash with status 1 on both paths', () => {
    const fast = withStdout('exec >/dev/full;', {});
    const oclif = withStdout('exec >/dev/full;', { YEP_EXT_NO_FAST_PATH: '1' });
    expect(fast.status).toBe(1);
    expect(oclif.status).toBe(1);
    expect(fast.stderr).toContain('ENOSPC');
  });
});
