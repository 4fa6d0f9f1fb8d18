/**
 * Why the system refuses to run a file whose mode lets this process run it: access(X_OK)
 * fails with EACCES although the execute bit that applies to us is set. On Linux that is a
 * file system mounted `noexec` (hardened machines mount /home, /var or /tmp so), or a
 * security policy (SELinux, AppArmor, an ACL). Copying the file again cannot help: the copy
 * lands on the same mount, under the same policy. The mount is read from
 * /proc/self/mountinfo, so the message can name it; where that is not readable (not Linux)
 * the refusal is still told apart from a missing execute bit.
 */
import { readFileSync, realpathSync, type Stats } from 'node:fs';
import { isInside } from './path-inside.js';

export interface ExecRefusal {
  /** The mount point of the file system that holds the file, when it is mounted noexec. */
  noexecMount?: string;
}

/** Whether the mode's execute bit that applies to this process (owner, group or other) is set; root needs any. */
function modeLetsRun(s: Stats): boolean {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return (s.mode & 0o111) !== 0;
  if (s.uid === uid) return (s.mode & 0o100) !== 0;
  const groups = new Set([process.getgid?.(), ...(process.getgroups?.() ?? [])]);
  if (groups.has(s.gid)) return (s.mode & 0o010) !== 0;
  return (s.mode & 0o001) !== 0;
}

/** A mountinfo path field: spaces, tabs, newlines and backslashes come as octal escapes. */
function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/**
 * The mount that holds `file` (the deepest mount point above its real path; of mounts
 * stacked on one point the last, which hides the others) and whether it is noexec.
 * Undefined when mountinfo cannot be read.
 */
function mountOf(file: string): { point: string; noexec: boolean } | undefined {
  let text: string;
  let real: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
    // The directory's real path: the file itself may be a symlink to elsewhere, which access() followed.
    real = realpathSync.native(file);
  } catch {
    return undefined;
  }
  let best: { point: string; noexec: boolean } | undefined;
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point mount-options ...
    const fields = line.split(' ');
    if (fields.length < 6) continue;
    const point = unescapeMountPath(fields[4]!);
    if (!isInside(point, real)) continue;
    if (best && point.length < best.point.length) continue;
    best = { point, noexec: fields[5]!.split(',').includes('noexec') };
  }
  return best;
}

/**
 * Undefined unless the mode lets us run `file` and access(X_OK) said EACCES (`code`): then
 * the refusal, with the noexec mount when that is the cause.
 */
export function execRefusal(file: string, s: Stats, code: string | undefined): ExecRefusal | undefined {
  if (code !== 'EACCES' || !modeLetsRun(s)) return undefined;
  const mount = mountOf(file);
  return mount?.noexec ? { noexecMount: mount.point } : {};
}

/** The words for a refusal of `shown`: the mount named when it is noexec, and why copying it again would not help. */
export function describeRefusal(shown: string, refusal: ExecRefusal): string {
  if (refusal.noexecMount !== undefined)
    return `${shown} cannot start: the file system at ${refusal.noexecMount} is mounted noexec, which forbids running programs from it (its mode lets it run, and a copy on the same mount would not either). Remount it without noexec, or keep the program on a file system that allows running programs (for installed extensions: the yolop config directory, YOLOP_CONFIG_DIR)`;
  return `${shown} cannot start: its mode lets it run, but the system refuses to (EACCES: a file system mounted noexec, or a security policy such as SELinux, AppArmor or an ACL, forbids it; a copy in the same place would not run either)`;
}
