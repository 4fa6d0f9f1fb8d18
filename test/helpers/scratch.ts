import { accessSync, constants, statSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * Where a file makes many short-lived files and trees (a home per example, thousands of unpacked files): a memory
 * filesystem where the machine has one (Linux's /dev/shm), else the temp dir. Creating and
 * removing files and directories there costs the kernel a small part of what it costs on a
 * disk filesystem, whose journal every mkdir, unlink and rmdir goes through.
 */
export const SCRATCH_DIR: string = (() => {
  try {
    if (statSync('/dev/shm').isDirectory()) {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    }
  } catch {
    // no /dev/shm (not Linux, or a container without it): the temp dir
  }
  return tmpdir();
})();
