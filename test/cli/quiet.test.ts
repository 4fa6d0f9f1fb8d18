import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempHome, REPO_ROOT, runCli, runCliProcess, type TempHome } from '../helpers/home.js';
import { writePackage } from '../helpers/packages.js';
import { agentView } from '../helpers/agent-view.js';

// -q as cargo's: at most the one result line on success; warnings, errors and what consent is asked for still shown.
let home: TempHome;
const run = (args: string[]) => runCli(args, { env: home.env, cwd: home.root });
const ECHO = join(REPO_ROOT, 'examples', 'echo-node');
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

beforeEach(() => {
  home = makeTempHome();
});
afterEach(() => home.cleanup());

describe('-q', () => {
  it('install -q prints the one result line (no contribution summary, no next-step hint); without -q the summary is there', async () => {
    const quiet = await run(['install', '-q', ECHO]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(lines(quiet.stdout)).toEqual([expect.stringMatching(/^✔ Installed echo-node 0\.1\.0 \(/)]);
    expect(quiet.stderr).toBe('');
    const again = await run(['install', '--quiet', ECHO]);
    expect(lines(again.stdout)).toEqual([expect.stringMatching(/^✔ Already installed: echo-node/)]);
    await run(['remove', 'echo-node']);
    const loud = await run(['install', ECHO]);
    expect(loud.stdout).toContain('echo-node contributes:');
    expect(loud.stdout).toContain('Run `yep-ext enable echo-node`');
  });

  it('install -q still shows what a widened grant asks consent for, and the refusal', async () => {
    const dir = writePackage(join(home.root, 'src', 'widen'), { name: 'widen', yolop: { tools: [{ name: 'a' }] } });
    expect((await run(['install', '-q', dir])).code).toBe(0);
    writePackage(dir, { name: 'widen', version: '0.2.0', yolop: { tools: [{ name: 'a' }, { name: 'b' }] } });
    const r = await run(['install', '-q', dir]);
    expect(r.code).toBe(8);
    expect(r.stdout).toContain('widen contributes:');
    expect(r.stderr).toMatch(/error: /);
  });

  it('doctor -q: one line when every check passes; the failing checks and the line when one fails', async () => {
    const ok = await run(['doctor', '-q', ECHO]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(lines(ok.stdout)).toEqual([expect.stringMatching(/^doctor echo-node: no failures, 0 warnings, \d+ passed in /)]);
    const dir = writePackage(join(home.root, 'src', 'broken'), { name: 'broken' });
    // Its server reads stdin and never answers: the handshake fails.
    const bad = await run(['doctor', '-q', '--timeout', '1', dir]);
    expect(bad.code).toBe(9);
    const out = lines(bad.stdout);
    expect(out.every((l) => !/^\s+pass\s/.test(l))).toBe(true);
    expect(out.some((l) => /^\s+fail\s/.test(l))).toBe(true);
    expect(out.at(-1)).toMatch(/^doctor broken: \d+ failed/);
  });
});

describe('-q and -v on every command', () => {
  it('every command in the table takes -q, --quiet, -v and --verbose, lists them in its help under GLOBAL FLAGS and completes them after Tab', async () => {
    const { COMMANDS } = await import('../../src/cli/command-table.js');
    for (const id of Object.keys(COMMANDS)) {
      const words = id.split(':');
      // `help --help` is the root help, which lists no flags.
      if (id !== 'help') {
        const help = await run([...words, '--help']);
        expect(help.code, id).toBe(0);
        const global = help.stdout.slice(help.stdout.indexOf('GLOBAL FLAGS'));
        expect(global, id).toMatch(/-q, --quiet +Print at most the result line/);
        expect(global, id).toMatch(/-v, --verbose +Show each request/);
      }
      // Parsed by every command: a usage error would be exit 2.
      expect((await run([...words, '-q', '--help'])).code, id).toBe(0);
      const tab = await run(['__complete', ...words, '--']);
      expect(tab.stdout, id).toContain('--quiet');
      expect(tab.stdout, id).toContain('--verbose');
    }
  });

  it('new -q, enable -q, config set -q, disable -q, remove -q: the one result line each, and the state they promise', async () => {
    const made = await run(['new', 'qq', '-q']);
    expect(made.code, made.stderr).toBe(0);
    expect(lines(made.stdout)).toEqual([expect.stringMatching(/^Created \.\/qq: qq, /)]);
    expect(existsSync(join(home.root, 'qq', 'plugin.json'))).toBe(true);
    const dir = writePackage(join(home.root, 'src', 'cfg'), {
      name: 'cfg',
      yolop: { config_schema: { type: 'object', properties: { mode: { type: 'string' } } } },
    });
    expect((await run(['install', '-q', dir])).code).toBe(0);
    const enable = await run(['enable', 'cfg', '-q', '--config', 'mode=fast']);
    expect(enable.code, enable.stderr).toBe(0);
    expect(lines(enable.stdout)).toEqual(['Enabled cfg.']);
    expect(agentView(home.configDir).cfg?.config).toEqual({ mode: 'fast' });
    const set = await run(['config', 'set', 'cfg', 'mode=slow', '--quiet']);
    expect(set.code, set.stderr).toBe(0);
    expect(lines(set.stdout)).toEqual([expect.stringMatching(/^Saved mode for cfg in settings\.toml\.$/)]);
    expect(agentView(home.configDir).cfg?.config).toEqual({ mode: 'slow' });
    const disable = await run(['disable', 'cfg', '-q']);
    expect(disable.code, disable.stderr).toBe(0);
    expect(lines(disable.stdout)).toHaveLength(1);
    expect(agentView(home.configDir).cfg).toBeUndefined();
    const remove = await run(['remove', '-q', 'cfg']);
    expect(remove.code, remove.stderr).toBe(0);
    expect(lines(remove.stdout)).toHaveLength(1);
    expect(existsSync(join(home.configDir, 'extensions', 'cfg'))).toBe(false);
    // An error is still shown under -q.
    const missing = await run(['enable', 'cfg', '-q']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/^error: /);
  });
});

describe('-v and -V', () => {
  it('-v after a command is --verbose (as in cargo): the same step lines on stderr; before one, -v and -V print the version', async () => {
    const verbose = await run(['install', '-v', ECHO]);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(lines(verbose.stderr).length).toBeGreaterThan(0);
    await run(['remove', 'echo-node']);
    const long = await run(['install', '--verbose', ECHO]);
    const steps = (text: string) => lines(text).map((l) => l.replace(/\d+(\.\d+)?\s*m?s\b/g, 'T'));
    expect(steps(verbose.stderr)).toEqual(steps(long.stderr));
    await run(['remove', 'echo-node']);
    expect((await run(['install', ECHO])).stderr).toBe('');
    for (const flag of ['-v', '-V', '--version']) {
      const r = await runCliProcess([flag], { env: home.env });
      expect(r.code, flag).toBe(0);
      expect(r.stdout, flag).toMatch(/^yep-ext\/\d+\.\d+\.\d+ /);
      expect((await run([flag])).stdout, flag).toBe(r.stdout);
    }
  });
});

describe('verify -q', () => {
  it('prints only the result line when everything holds (no line per extension); a problem is still reported, exit 5', async () => {
    const dir = writePackage(join(home.root, 'src', 'other'), { name: 'other' });
    expect((await run(['install', ECHO])).code).toBe(0);
    expect((await run(['install', dir])).code).toBe(0);
    const loud = await run(['verify']);
    expect(loud.code, loud.stderr).toBe(0);
    expect(lines(loud.stdout)).toEqual(['✔ echo-node', '✔ other', '2 verified.']);
    const quiet = await run(['verify', '-q']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(lines(quiet.stdout)).toEqual(['2 verified.']);
    expect(lines((await run(['verify', 'other', '--quiet'])).stdout)).toEqual(['1 verified.']);
    writePackage(dir, { name: 'other', version: '0.2.0' });
    const bad = await run(['verify', '-q']);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/^error: 1 of 2 extensions do not match/m);
    expect(bad.stderr).toContain('other');
  });
});
