/**
 * Process-group helpers. A server is spawned detached (its own group, pgid =
 * its pid), so a signal to `-pgid` reaches the server and every child it forked
 * that stayed in the group (hardening: killing only the child leaves its
 * children running).
 */
import { readdirSync } from 'node:fs';
import { errnoCode } from '../errors.js';
import { readProcStat } from './process-tree.js';

/** Send `signal` to every process in group `pgid`; false when the group is empty or gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!(pgid > 1)) return false; // never -0 (our own group) or -1 (everything we may signal)
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ESRCH') return false;
    if (errnoCode(e) === 'EPERM') return true; // something is there we may not signal
    throw e;
  }
}

/**
 * Pids of the live (non-zombie) members of group `pgid`. On Linux this reads
 * /proc, because a zombie nobody has reaped still answers kill(-pgid, 0); in a
 * container whose init does not reap, that would report a dead group as alive.
 * Elsewhere it falls back to kill(-pgid, 0) and returns `[pgid]` when it answers.
 */
export function listGroup(pgid: number): number[] {
  if (!(pgid > 1)) return [];
  // No process in the group at all, not even a zombie: /proc has none to list either, and
  // one kill(2) costs far less than reading every process's stat.
  const probed = probeGroup(pgid);
  if (probed.length === 0) return probed;
  if (process.platform === 'linux') {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      return probed;
    }
    const pids: number[] = [];
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      // The one /proc/<pid>/stat parser (process-tree.ts); undefined: it exited while we looked.
      const stat = readProcStat(Number(entry));
      if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') pids.push(stat.pid);
    }
    return pids;
  }
  return probed;
}

function probeGroup(pgid: number): number[] {
  try {
    process.kill(-pgid, 0);
    return [pgid];
  } catch (e) {
    return errnoCode(e) === 'EPERM' ? [pgid] : [];
  }
}

/** True while any live process remains in group `pgid`. */
export function isGroupAlive(pgid: number): boolean {
  return listGroup(pgid).length > 0;
}

/** Resolve true once group `pgid` is empty, false after `timeoutMs`. Polls. */
export async function waitGroupGone(pgid: number, timeoutMs: number, intervalMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
