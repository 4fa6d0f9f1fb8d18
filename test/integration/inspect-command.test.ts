import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectServerCommand } from '../../src/core/package/inspect-command.js';

const root = mkdtempSync(join(tmpdir(), 'yep-inspect-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const pkg = join(root, 'pkg');
const other = join(root, 'elsewhere');
mkdirSync(join(pkg, 'bin'), { recursive: true });
mkdirSync(other);
const exe = (file: string, text: string): void => {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
};
exe(join(pkg, 'bin', 'srv'), '#!/bin/sh\n');
exe(join(pkg, 'bin', 'needs-env-prog'), '#!/usr/bin/env definitely-not-installed-xyz\n');
exe(join(pkg, 'bin', 'no-shebang'), 'echo hi\n');
exe(join(pkg, 'tool.sh'), '#!/bin/sh\n');
exe(join(other, 'on-path'), '#!/bin/sh\n');
symlinkSync('/bin/sh', join(pkg, 'bin', 'linked'));

describe('inspectServerCommand', () => {
  it.each([
    ['srv', true, 'bin/srv'],
    ['linked', true, 'bin/linked'],
    ['on-path', true, 'found on PATH'],
    ['needs-env-prog', false, "not on the server's PATH"],
    ['tool.sh', false, 'neither in the package'],
    ['./tool.sh', false, 'relative to the workspace'],
    ['bin/../../elsewhere/on-path', false, 'leaves the package'],
    [join(other, 'on-path'), false, 'outside the package'],
    ['', false, 'empty'],
  ])('%j -> ok=%s (%s)', async (command, ok, text) => {
    const r = await inspectServerCommand(pkg, command, `${other}:/usr/bin:/bin`);
    expect(r.ok).toBe(ok);
    expect(r.detail).toContain(text);
  });

  it('fails a path with a slash (the host resolves it against the workspace) and warns for a missing #!', async () => {
    const slash = await inspectServerCommand(pkg, './tool.sh', '/usr/bin:/bin');
    expect(slash.ok).toBe(false);
    expect(slash.detail).toContain('would not start there');
    const bare = await inspectServerCommand(pkg, 'no-shebang', '/usr/bin:/bin');
    expect(bare.ok && bare.warning).toContain('no #! line');
  });

  it('never searches relative or empty PATH entries (execvp would use the cwd)', async () => {
    const r = await inspectServerCommand(pkg, 'on-path', `::.:elsewhere`);
    expect(r.ok).toBe(false);
  });
});
