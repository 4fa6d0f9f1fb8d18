/**
 * The suite's own leftover check (test/global-leftovers.ts, a globalSetup of
 * vitest.config.ts) fails the run when a process the suite started is still
 * alive at the end, names it, and kills it; and passes a suite that cleans up.
 * Proved on nested vitest runs of test/fixtures/leftover-suite: one whose tests leave
 * one leftover of each kind (each must be named and killed, whichever the other is),
 * and one that cleans up.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/home.js';
import { procAlive } from '../helpers/proc.js';

const work = mkdtempSync(join(tmpdir(), 'yep-leftovers-'));
const pids: number[] = [];
let n = 0;
afterAll(() => {
  for (const pid of pids.splice(0)) if (procAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

interface NestedRun {
  code: number | null;
  output: string;
  /** The sleep each mode's test left (or killed), by mode. */
  pids: Map<string, number>;
}

/** One nested run whose tests leave what `modes` say, one test per mode. */
function nestedSuite(modes: string[]): Promise<NestedRun> {
  const pidFile = join(work, `${modes.join('-')}-${++n}.pid`);
  // Far apart per run (each mode adds its index): no two sleeps of the suite share a command line.
  const sleep = 600 + n * 10 + (process.pid % 1000) * 100;
  const env = { ...process.env, LEFTOVER_MODE: modes.join(','), LEFTOVER_PID_FILE: pidFile, LEFTOVER_SLEEP: String(sleep) };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(REPO_ROOT, 'test/fixtures/leftover-suite/vitest.config.ts')],
      { env, cwd: REPO_ROOT, timeout: 60_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const byMode = new Map<string, number>();
        const lines = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split('\n') : [];
        for (const line of lines) {
          const [mode, pid] = line.split(' ');
          byMode.set(mode as string, Number(pid));
          pids.push(Number(pid));
        }
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}\n${stderr}`, pids: byMode });
      },
    );
  });
}

describe('the suite fails when it leaves a process running', () => {
  const LEAVING = ['daemon', 'chain'];
  let leaving: Promise<NestedRun> | undefined;
  for (const mode of LEAVING) {
    it(`${mode}: exit code 1, the leftover named, and killed`, async () => {
      leaving ??= nestedSuite(LEAVING);
      const r = await leaving;
      expect(r.output).toContain(`${LEAVING.length} passed`);
      expect(r.code, r.output).toBe(1);
      expect(r.output).toContain('process(es) started by the suite are still alive');
      const pid = r.pids.get(mode);
      expect(pid, r.output).toBeDefined();
      expect(r.output).toMatch(new RegExp(`pid ${pid}: /usr/bin/sleep \\d+`));
      expect(procAlive(pid as number)).toBe(false);
    });
  }

  it('clean: a suite that cleans up passes (control)', async () => {
    const r = await nestedSuite(['clean']);
    expect(r.pids.has('clean')).toBe(true);
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toContain('still alive');
  });
});
