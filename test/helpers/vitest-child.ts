/**
 * Run a fixture suite (a directory under test/fixtures with its own vitest config,
 * outside the normal run) in a child vitest on the Node under test, without this
 * run's own VITEST_* variables, and hand back its exit code and output lines.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './home.js';

export function runFixtureSuite(
  config: string,
  args: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'TEST' && k !== 'NODE_ENV' && k !== 'YEP_EXT_REQUIRE_ALL'),
  );
  const child = spawn(process.execPath, [join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(REPO_ROOT, config), ...args], {
    cwd: REPO_ROOT,
    env: { ...env, NO_COLOR: '1', CI: '1', ...extraEnv },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((r) => child.on('close', (code) => r({ code, lines: out.trimEnd().split('\n'), stderr: err })));
}
