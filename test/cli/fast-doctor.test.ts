/**
 * The oclif-free `doctor` runner (src/cli/fast-doctor.ts) must be invisible: for
 * passing and failing servers, in --json and human output, stdout, stderr and
 * the exit status are byte-identical to the oclif path (YEP_EXT_NO_FAST_PATH=1)
 * once the inherently variable parts (durations, pids) are masked; every shape it
 * cannot match exactly is left to oclif. Needs `npm run build`.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePackage } from '../helpers/ext-package.js';
import { REPO_ROOT, makeTempHome, runCli, type RunResult, type TempHome } from '../helpers/home.js';
import { runBothWays } from '../helpers/fast-path-both.js';

let home: TempHome;
let mark: string;
let pkgs: string;

/**
 * Durations and pids differ from run to run, and so does whether a server that
 * answered shutdown had exited before its stdin was closed or only once it was
 * (a race inside the server: check-stop.ts reports both as a pass); nothing else may.
 */
function masked(text: string): string {
  return text
    .replace(/answered shutdown and exited once stdin closed after/g, 'answered shutdown and exited after')
    .replace(/(?<!limit )\b\d+(\.\d+)? (ms|s)\b/g, '<t>')
    .replace(/: done \(\d+(\.\d+)?m?s\)/g, ': done (<t>)')
    .replace(/\bpid \d+/g, 'pid <n>')
    .replace(/"duration_ms": \d+/g, '"duration_ms": <t>')
    .replace(/"server_pids": \[[\d,\s]*\]/g, '"server_pids": [<n>]');
}

function both(args: string[], env: Record<string, string> = {}): Promise<{ fast: RunResult; oclif: RunResult; tookFastPath: boolean }> {
  return runBothWays(args, { ...home.env, ...env }, mark);
}

function expectSame(r: { fast: RunResult; oclif: RunResult }): void {
  const shape = (x: RunResult) => ({ code: x.code, stdout: masked(x.stdout), stderr: masked(x.stderr) });
  expect(shape(r.fast)).toEqual(shape(r.oclif));
}

beforeAll(() => {
  home = makeTempHome('yep-fast-doctor-');
  mark = join(home.root, 'fast-path-taken');
  pkgs = join(home.root, 'pkgs');
  mkdirSync(pkgs);
  makePackage(join(home.configDir, 'extensions'), 'inst', { args: ['--name', 'inst'] });
});
afterAll(() => home.cleanup());

describe('doctor fast path: same bytes as oclif', () => {
  const echo = join(REPO_ROOT, 'examples', 'echo-node');
  const cases: [string, () => string[], number][] = [
    ['echo-node --json', () => ['doctor', echo, '--json'], 0],
    ['echo-node, human', () => ['doctor', echo], 0],
    ['echo-node --no-config --timeout 5 -q', () => ['doctor', '--no-config', echo, '--timeout', '5', '-q'], 0],
    ['an installed name', () => ['doctor', 'inst', '--verbose'], 0],
    ['a failing tools check --json', () => ['doctor', makePackage(pkgs, 'widened', { args: ['--name', 'widened', '--tools', 'echo,extra'] }), '--json', '--timeout', '5'], 9],
    ['a failing tools check, human', () => ['doctor', makePackage(pkgs, 'widened', { args: ['--name', 'widened', '--tools', 'echo,extra'] })], 9],
    ['a server that exits at once, human', () => ['doctor', makePackage(pkgs, 'crashes', { server: 'exit-at-once.mjs' })], 9],
    ['a server that exits at once --json', () => ['doctor', makePackage(pkgs, 'crashes', { server: 'exit-at-once.mjs' }), '--json'], 9],
    ['a server that writes garbage --json', () => ['doctor', makePackage(pkgs, 'garbage', { server: 'garbage.mjs' }), '--json', '--timeout', '3'], 9],
    ['a command that is missing', () => ['doctor', makePackage(pkgs, 'nocmd', { command: 'bin/not-there' })], 9],
    ['a bad --timeout', () => ['doctor', echo, '--timeout', 'soon'], 2],
    ['a bad --timeout --json', () => ['doctor', echo, '--json', '--timeout', '0'], 2],
    ['a directory that does not exist', () => ['doctor', join(pkgs, 'nope')], 3],
    ['a bad name --json', () => ['doctor', 'bad name!', '--json'], 2],
  ];
  it.each(cases)('%s', async (_name, args, code) => {
    const r = await both(args());
    expect(r.tookFastPath).toBe(true);
    expect(r.oclif.code).toBe(code);
    expectSame(r);
  });

  it('declines the shapes it does not fully understand (oclif answers them)', async () => {
    const declined = [
      ['doctor', 'nothere'], // not installed: oclif adds "did you mean"
      ['doctor', 'inst', '--call', 'echo'],
      ['doctor', 'inst', '--timeout=5'],
      ['doctor', 'inst', '--json', '--json'],
      ['doctor', 'inst', '-q', '--verbose'],
      ['doctor', 'inst', 'other'],
      ['doctor', '--help'],
      ['doctor'],
    ];
    for (const args of declined) {
      rmSync(mark, { force: true });
      await runCli(args, { env: { ...home.env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
      expect(existsSync(mark), args.join(' ')).toBe(false);
    }
  });
});
