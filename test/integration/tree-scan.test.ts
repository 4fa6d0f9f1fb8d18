/** scanPackageTree on real directories: the lstat policy applied after checkout. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { scanPackageTree } from '../../src/core/sources/tree-scan.js';

let root: string;
const LIMITS = { maxFiles: 100, maxBytes: 1024 * 1024 };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'yep-scan-'));
  mkdirSync(join(root, 'bin'));
  writeFileSync(join(root, 'plugin.json'), '{}');
  writeFileSync(join(root, 'bin/server'), '#!/bin/sh\n', { mode: 0o755 });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('scanPackageTree', () => {
  test('regular files and directories pass, with counts', async () => {
    expect(await scanPackageTree(root, LIMITS)).toEqual({ files: 2, dirs: 1, bytes: 12 });
  });

  test('a symlinked plugin.json is named as the manifest', async () => {
    rmSync(join(root, 'plugin.json'));
    symlinkSync('/etc/passwd', join(root, 'plugin.json'));
    await expect(scanPackageTree(root, LIMITS)).rejects.toMatchObject({
      code: 'E_UNSAFE_PACKAGE',
      message: /manifest plugin\.json is a symbolic link -> "\/etc\/passwd"/,
    });
  });

  test.each([
    ['a link leaving the tree', '/usr/bin'],
    ['a link inside the tree', '../plugin.json'],
    ['a dangling link', 'nowhere'],
  ])('%s is refused', async (_label, target) => {
    symlinkSync(target, join(root, 'bin/link'));
    await expect(scanPackageTree(root, LIMITS)).rejects.toMatchObject({ code: 'E_UNSAFE_PACKAGE', message: /"bin\/link" is a symbolic link/ });
  });

  test('a fifo is refused as a special file', async () => {
    execFileSync('mkfifo', [join(root, 'bin/pipe')]);
    await expect(scanPackageTree(root, LIMITS)).rejects.toMatchObject({ code: 'E_UNSAFE_PACKAGE', message: /special file/ });
  });

  test('caps on files and bytes', async () => {
    await expect(scanPackageTree(root, { maxFiles: 1, maxBytes: 1000 })).rejects.toMatchObject({ message: /more than 1 files/ });
    await expect(scanPackageTree(root, { maxFiles: 10, maxBytes: 5 })).rejects.toMatchObject({ message: /more than 5 bytes/ });
  });

  test('a root that is a link is refused', async () => {
    const link = join(tmpdir(), `yep-scan-link-${process.pid}`);
    rmSync(link, { force: true });
    symlinkSync(root, link);
    try {
      await expect(scanPackageTree(link, LIMITS)).rejects.toMatchObject({ message: /root is not a directory/ });
    } finally {
      rmSync(link, { force: true });
    }
  });
});
