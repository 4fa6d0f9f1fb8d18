/**
 * Real tmpfs mounts for the tests that need a file system with a property of its own (a
 * small size to fill, `noexec`): the tests run as root, which file modes do not stop, so only
 * a mount does (needs root).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mount a tmpfs with `options` (mount's -o, e.g. `size=2m,mode=0755`) at `at`. */
export function mountTmpfs(at: string, options: string): { status: number | null; stderr: string; error?: Error } {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', at], { encoding: 'utf8' });
}

/**
 * Whether this process can mount such a tmpfs, and why not. Probed when a file is collected
 * (the skip is decided then), mounted for real in its beforeAll: a file whose tests are all
 * filtered out (vitest -t) runs no hooks and must leave nothing mounted.
 */
export function tmpfsMountable(options: string): { ok: boolean; why: string } {
  const at = mkdtempSync(join(tmpdir(), 'yep-tmpfs-probe-'));
  const probe = mountTmpfs(at, options);
  if (probe.status === 0) spawnSync('umount', [at]);
  rmSync(at, { recursive: true, force: true });
  return { ok: probe.status === 0, why: (probe.stderr || probe.error?.message || '').trim() };
}
