/**
 * CI runs the suite once per Node line by putting that Node first on PATH (.ci/run).
 * Everything a test starts must then run on it: the CLI (spawned as process.execPath),
 * and every `node` found on PATH (extension servers with `#!/usr/bin/env node`, the
 * examples). A run on "Node 24" whose children ran on Node 20 would prove nothing.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/home.js';

describe('the Node under test', () => {
  it('is the `node` on PATH, which extension servers and examples run on', () => {
    const r = spawnSync('node', ['-p', 'process.version'], { encoding: 'utf8', env: process.env });
    expect(r.stdout.trim(), `PATH finds a different node than ${process.execPath}: put its directory first`).toBe(process.version);
  });

  it('runs the built CLI', () => {
    const r = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    expect(r.stdout).toContain(`node-${process.version}`);
  });
});
