/**
 * Real read-only bind mounts for the tests that need a read-only file system: the tests run
 * as root, which file modes do not stop, so only a mount does (`mount --bind`, then
 * `mount -o remount,bind,ro`; needs root).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mount `from` read-only at `at` (the same directory to make it read-only in place). */
export function bindReadOnly(from: string, at: string): { status: number | null; stderr: string } {
  const b = spawnSync('mount', ['--bind', from, at], { encoding: 'utf8' });
  if (b.status !== 0) return b;
  const ro = spawnSync('mount', ['-o', 'remount,bind,ro', at], { encoding: 'utf8' });
  if (ro.status !== 0) spawnSync('umount', [at]);
  return ro;
}

/** Whether this process can make one (probed once, while collecting: the skip is decided then), and why not. */
export function readOnlyMountable(): { ok: boolean; why: string } {
  const base = mkdtempSync(join(tmpdir(), 'yep-ro-probe-'));
  mkdirSync(join(base, 'a'));
  mkdirSync(join(base, 'b'));
  const probe = bindReadOnly(join(base, 'a'), join(base, 'b'));
  if (probe.status === 0) spawnSync('umount', [join(base, 'b')]);
  rmSync(base, { recursive: true, force: true });
  return { ok: probe.status === 0, why: (probe.stderr || '').trim() };
}
