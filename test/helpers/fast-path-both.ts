/**
 * Run one CLI argument list twice, once as it comes (an oclif-free runner may take it)
 * and once with YEP_EXT_NO_FAST_PATH=1 (oclif), and say whether the first took the
 * runner: the test seam writes `mark` when a runner starts (src/cli/test-seams.ts).
 * The differential tests of the runners (fast-path, fast-doctor) compare the two.
 */
import { existsSync, rmSync } from 'node:fs';
import { expect } from 'vitest';
import { runCli, type RunResult } from './home.js';

/** One side of a differential run in a fresh home: what it printed, the home it left, and whether a runner took it. */
export interface FastPathSide {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The home's state after the run (home-state.ts), its path made comparable. */
  state: string[];
  /** The oclif-free runner ran it (the test seam's mark). */
  took: boolean;
}

export async function runBothWays(
  args: string[],
  env: Record<string, string>,
  mark: string,
): Promise<{ fast: RunResult; oclif: RunResult; tookFastPath: boolean }> {
  rmSync(mark, { force: true });
  const fast = await runCli(args, { env: { ...env, YEP_EXT_TEST_FAST_PATH_MARK: mark } });
  const tookFastPath = existsSync(mark);
  rmSync(mark, { force: true });
  const oclif = await runCli(args, { env: { ...env, YEP_EXT_TEST_FAST_PATH_MARK: mark, YEP_EXT_NO_FAST_PATH: '1' } });
  expect(existsSync(mark), 'YEP_EXT_NO_FAST_PATH=1 must force oclif').toBe(false);
  return { fast, oclif, tookFastPath };
}
