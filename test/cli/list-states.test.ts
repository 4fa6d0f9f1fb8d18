/**
 * What `list` reports about the store as the host reads it: every problem kind in
 * its row, a settings.toml that does not parse (enabled unknown, the listing goes
 * on), a manifest the generated check rejects (judged by the zod schemas, loaded
 * lazily), several entries per extension, engines.yolop verdicts against the
 * installed agent (probed once, then cached), a corrupt lock, and a stdout that
 * fails under it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/core/package/content-hash.js';
import { loadLock, saveLock } from '../../src/core/store/lockfile.js';
import { BIN, makeTempHome, runCli, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { fakeAgent, pathWithoutAgent } from '../helpers/fake-agent.js';

let home: TempHome;
const store = () => join(home.configDir, 'extensions');
beforeAll(async () => {
  home = makeTempHome('yep-list-states-');
  // A store with something in every list column and problem kind:
  // a path install, one whose linked directory is gone, a non-ASCII source path
  // (the table measures it with string-width), a crate entry with hash drift, a
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

describe('list', () => {
  it('shows every problem kind', async () => {
    const r = await runCli(['list', '--json'], { env: home.env });
    expect(r.code, r.stderr).toBe(0);
    const problems = (JSON.parse(r.stdout) as { extensions: { name: string; problems: string[] }[] }).extensions.map(
      (e) => `${e.name}: ${e.problems.join('; ')}`,
    );
    expect(problems.join('\n')).toMatch(/gone: missing: the linked directory/);
    expect(problems.join('\n')).toMatch(/drift: hash drift/);
    expect(problems.join('\n')).toMatch(/missing: missing: not in the store/);
    expect(problems.join('\n')).toMatch(/byhand: not in extensions.lock/);
    expect((await runCli(['list'], { env: home.env })).stdout).toContain('日本');
  });

  it('a settings.toml that is not TOML makes `enabled` unknown, not the listing fatal', async () => {
    const broken = makeTempHome('yep-list-settings-');
    try {
      const pkg = writePackage(join(broken.root, 'src', 'alpha'), { name: 'alpha' });
      expect((await runCli(['install', pkg], { env: broken.env })).code).toBe(0);
      writeFileSync(join(broken.configDir, 'settings.toml'), '[[capabilities]\nref = ');
      const r = await runCli(['list'], { env: broken.env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('enabled state unknown');
      const json = await runCli(['list', '--json'], { env: broken.env });
      expect(json.code).toBe(0);
      expect((JSON.parse(json.stdout) as { extensions: { enabled: boolean | null }[] }).extensions[0]!.enabled).toBeNull();
    } finally {
      broken.cleanup();
    }
  });

  it('a manifest the generated check rejects is judged by the zod schemas', async () => {
    const bad = makeTempHome('yep-list-manifest-');
    try {
      const dir = writePackage(join(bad.root, 'src', 'alpha'), { name: 'alpha' });
      expect((await runCli(['install', dir], { env: bad.env })).code).toBe(0);
      // A linked install: list reads the user's plugin.json again.
      const manifest = JSON.parse(readFileSync(join(dir, 'plugin.json'), 'utf8'));
      writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ ...manifest, name: 42 }));
      for (const args of [['list'], ['list', '--json']]) {
        const r = await runCli(args, { env: bad.env });
        expect(r.code).toBe(0);
        expect(`${r.stdout}${r.stderr}`).toMatch(/name/);
      }
    } finally {
      bad.cleanup();
    }
  });
  it('several entries per extension: enabled, set and kept config as the host reads them', async () => {
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

  it('engines.yolop against a fake agent: a verdict per extension, the agent probed once, then cached', async () => {
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
      for (const args of [['list'], ['list', '--json']]) expect((await runCli(args, { env })).code).toBe(0);
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

  it('a corrupt lock fails, with and without --json', async () => {
    const broken = makeTempHome('yep-list-broken-');
    try {
      mkdirSync(join(broken.configDir, 'extensions'), { recursive: true });
      writeFileSync(join(broken.configDir, 'extensions', 'extensions.lock'), '[[extensions]\nname = ');
      const human = await runCli(['list'], { env: broken.env });
      expect(human.code).toBe(7);
      expect(human.stderr).toMatch(/^error: .*extensions\.lock/);
      const json = await runCli(['list', '--json'], { env: broken.env });
      expect(json.code).toBe(7);
      expect((JSON.parse(json.stdout) as { error: { code: string } }).error.code).toBe('E_STATE');
    } finally {
      broken.cleanup();
    }
  });
});

describe('list: stdout failures', () => {
  it('a reader that went away (EPIPE): exit 0 and nothing on stderr', () => {
    // The reader exits at once; the CLI writes later, into a pipe with no reader.
    const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${BIN}" list | true; echo "status=\${PIPESTATUS[0]}"`], {
      env: home.env,
      encoding: 'utf8',
    });
    expect(r.stdout.trim()).toBe('status=0');
    expect(r.stderr).toBe('');
  });

  it('a full disk (ENOSPC) is a crash with status 1 (docs/exit-codes.md), not a yep-ext error', () => {
    const r = spawnSync('bash', ['-c', `exec >/dev/full; "${process.execPath}" "${BIN}" list`], { env: home.env, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('ENOSPC');
    expect(r.stderr).not.toContain('internal error');
  });
});
