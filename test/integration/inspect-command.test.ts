import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

describe('inspectServerCommand: the host\'s resolution (docs/formats.md "The server command")', () => {
  // [command, ok, where it resolves (or the outside-the-package kind of a failure), detail]
  it.each([
    ['srv', true, 'package-bin', undefined, 'bin/srv'],
    ['linked', true, 'outside', 'symlink', 'bin/linked'],
    ['on-path', true, 'outside', 'PATH', 'found on PATH'],
    ['needs-env-prog', false, undefined, undefined, "not on the server's PATH"],
    // A bare name the package's bin/ lacks is outside it, found on PATH or not: the host looks it up there when it starts the server.
    ['tool.sh', false, undefined, 'PATH', 'neither in the package'],
    // A path is the file itself, relative to the package directory, `..` allowed (as the host allows it).
    ['./tool.sh', true, 'package', undefined, 'tool.sh in the package'],
    ['bin/../../elsewhere/on-path', true, 'outside', 'climbs', 'climbs out of the package'],
    [join(other, 'on-path'), true, 'outside', 'absolute', 'outside the package'],
    [join(other, 'not-there'), false, undefined, 'absolute', 'does not exist'],
    ['../../nowhere/srv', false, undefined, 'climbs', 'does not exist'],
    ['', false, undefined, undefined, 'empty'],
    // A trailing "/" names a directory: the host's is_file fails, nothing starts (found as a file by name alone before).
    ['bin/srv/', false, undefined, undefined, 'ends with "/"'],
    ['/bin/sh/', false, undefined, 'absolute', 'ends with "/"'],
  ])('%j -> ok=%s, %s %s', async (command, ok, where, via, text) => {
    const r = await inspectServerCommand(pkg, command, `${other}:/usr/bin:/bin`);
    expect(r.ok).toBe(ok);
    if (r.ok) expect(r.where).toBe(where);
    expect(r.outside?.via).toBe(via);
    expect(r.detail).toContain(text);
  });

  it('resolves a relative path from the package, warning that older hosts start it from the workspace; warns for a missing #!', async () => {
    const slash = await inspectServerCommand(pkg, './tool.sh', '/usr/bin:/bin');
    expect(slash.ok && slash.path).toBe(join(realpathSync(pkg), 'tool.sh'));
    expect(slash.ok && slash.warning).toContain('only on hosts that resolve it from the package');
    const bare = await inspectServerCommand(pkg, 'no-shebang', '/usr/bin:/bin');
    expect(bare.ok && bare.warning).toContain('no #! line');
  });

  it('takes the first PATH directory holding a file of that name, as the host does, even when it cannot run', async () => {
    const first = join(root, 'first');
    mkdirSync(first, { recursive: true });
    writeFileSync(join(first, 'on-path'), '#!/bin/sh\n'); // not executable
    const r = await inspectServerCommand(pkg, 'on-path', `${first}:${other}`);
    expect(r.ok).toBe(false);
    expect(r.detail).toContain(`${join(first, 'on-path')} is not executable`);
    expect(r.outside).toMatchObject({ via: 'PATH', target: join(first, 'on-path') });
  });

  it('never searches relative or empty PATH entries (execvp would use the cwd)', async () => {
    const r = await inspectServerCommand(pkg, 'on-path', `::.:elsewhere`);
    expect(r.ok).toBe(false);
  });
});
