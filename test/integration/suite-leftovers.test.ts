/**
 * The suite's own leftover check (test/global-leftovers.ts, a globalSetup of
 * vitest.config.ts) fails the run when a process the suite started is still
 * alive at the end, names it, and kills it; and passes a suite that cleans up.
 * Proved on a nested vitest run of test/fixtures/leftover-suite.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/home.js';
import { procAlive } from '../helpers/proc.js';

const work = mkdtempSync(join(tmpdir(), 'yep-leftovers-'));
const pids: number[] = [];
let n = 0;
afterEach(() => {
  for (const pid of pids.splice(0)) if (procAlive(pid)) process.kill(pid, 'SIGKILL');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function nestedSuite(mode: string): Promise<{ code: number | null; output: string; pid: number }> {
  const pidFile = join(work, `${mode}-${++n}.pid`);
  const env = { ...process.env, LEFTOVER_MODE: mode, LEFTOVER_PID_FILE: pidFile, LEFTOVER_SLEEP: String(600 + n + (process.pid % 1000) * 10) };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(REPO_ROOT, 'test/fixtures/leftover-suite/vitest.config.ts')],
      { env, cwd: REPO_ROOT, timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const pid = Number(readFileSync(pidFile, 'utf8').trim());
        pids.push(pid);
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}\n${stderr}`, pid });
      },
    );
  });
}

describe('the suite fails when it leaves a process running', () => {
  for (const mode of ['daemon', 'chain']) {
    it(`${mode}: exit code 1, the leftover named, and killed`, async () => {
      const r = await nestedSuite(mode);
      expect(r.output).toContain('1 passed');
      expect(r.code, r.output).toBe(1);
      expect(r.output).toContain('process(es) started by the suite are still alive');
      expect(r.output).toMatch(new RegExp(`pid ${r.pid}: /usr/bin/sleep \\d+`));
      expect(procAlive(r.pid)).toBe(false);
    });
  }

  it('clean: a suite that cleans up passes (control)', async () => {
    const r = await nestedSuite('clean');
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toContain('still alive');
  });
});
