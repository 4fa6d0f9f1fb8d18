/**
 * vitest globalSetup: a directory for what the files of one run share (the one tsc build of
 * ./helpers/ts-builds.ts), named to the workers by YEP_EXT_SUITE_SCRATCH (they inherit this
 * process's environment) and removed after the run, so no run sees another's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'yep-suite-scratch-'));
  process.env.YEP_EXT_SUITE_SCRATCH = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
