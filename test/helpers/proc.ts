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

/**
 * Live processes whose environment holds `entry` (`NAME=value`): everything a CLI run
 * started, and what those started in turn (git's transport helpers, cargo, servers),
 * since each inherits the run's environment, whoever its parent is now. Linux only.
 */
function procsWithEnv(entry: string): { pid: number; command: string }[] {
  const out: { pid: number; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    if ((env.startsWith(`${entry}\0`) || env.includes(`\0${entry}\0`)) && procAlive(pid)) out.push({ pid, command: procCommand(pid) });
  }
  return out;
}

/** Wait until no process holds `entry` in its environment (the list is empty) or `ms` passed (what is left). */
export async function waitNoneWithEnv(entry: string, ms = 3000): Promise<{ pid: number; command: string }[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = procsWithEnv(entry);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}
