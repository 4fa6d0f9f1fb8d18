/** /proc checks for tests: is a process (still) alive, and what is it. Linux only. */
import { readFileSync, readdirSync } from 'node:fs';

/** True while `pid` is a live, non-zombie process. */
export function procAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The command line of `pid` ('' when gone). */
export function procCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/** Wait until `pid` is gone (true) or `ms` passed (false). */
export async function waitGone(pid: number, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (procAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** Live (non-zombie) processes whose command line contains `marker`: what a test tagged its servers with. */
export function procsWith(marker: string): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    if (procCommand(Number(e)).includes(marker) && procAlive(Number(e))) found.push(Number(e));
  }
  return found;
}
