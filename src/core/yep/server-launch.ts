/**
 * How the host starts a capability server (host-compat §7): `command` + `args`
 * as argv (no shell), cwd = the workspace root, PATH = `<package>/bin:` + the
 * inherited PATH, secrets and env-mapped config added to the environment, and a
 * spawn that exec refused with ETXTBSY retried as the host retries it.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { errnoCode } from '../errors.js';

export interface ServerLaunch {
  /** `capabilityServer.command`: a bare name (looked up on the server's PATH) or a path. */
  command: string;
  args?: string[];
  /**
   * The package directory; its `bin/` goes first on PATH. Absent for a server the
   * host does not start as a capability server (an MCP server an extension
   * contributes goes to the host's MCP client as declared: PATH is left as inherited).
   */
  packageDir?: string;
  /** The server's cwd (the host uses the workspace root). */
  workspaceRoot: string;
  /** Environment to inherit (default process.env). */
  env?: Record<string, string | undefined>;
  /** Secrets and env-mapped config, added on top of `env`. */
  injectedEnv?: Record<string, string>;
}

/** The environment a server runs with. PATH is prefixed last so config cannot displace `<package>/bin`. */
export function buildServerEnv(launch: ServerLaunch): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(launch.env ?? process.env)) if (v !== undefined) out[k] = v;
  Object.assign(out, launch.injectedEnv ?? {});
  if (launch.packageDir === undefined) return out;
  const bin = join(launch.packageDir, 'bin');
  out.PATH = out.PATH ? `${bin}${delimiter}${out.PATH}` : bin;
  return out;
}

/**
 * The one spawn call a server gets: command, argv, and the options (cwd = the
 * workspace root, the environment above plus the run's tag, piped stdio, its own
 * session and process group). ServerProcess and doctor's early start
 * (early-server.ts) both spawn from this, so the two cannot drift apart.
 */
export function serverSpawnArgs(
  launch: ServerLaunch,
  tag: { name: string; value: string } | undefined,
): { command: string; args: string[]; options: SpawnOptions & { env: Record<string, string> } } {
  const env = buildServerEnv(launch);
  if (tag) env[tag.name] = tag.value;
  return {
    command: launch.command,
    args: launch.args ?? [],
    options: {
      cwd: launch.workspaceRoot,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // own session and process group: signals reach the server's children too
      windowsHide: true,
    },
  };
}

/** The host's retry of a spawn refused with ETXTBSY (src/extensions/manager.rs, host 0.18): this many tries in all. */
const ETXTBSY_ATTEMPTS = 10;
/** ... sleeping this long times the attempt number between them. */
const ETXTBSY_STEP_MS = 20;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Start a server from `serverSpawnArgs`, as the host does: exec refuses a program
 * that some process still holds open for writing (a binary just written or
 * built) with ETXTBSY, and the host tries again up to ETXTBSY_ATTEMPTS times,
 * sleeping ETXTBSY_STEP_MS x attempt. Node reports ETXTBSY by throwing from
 * spawn(), and a server's pid and pipes are handed out by its constructor, so
 * the waits here block: at most 0.9 s in all, and only after exec said ETXTBSY.
 * Any other failure, or the last ETXTBSY, is thrown as spawn threw it.
 */
export function spawnServer(
  spawn: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess,
  s: ReturnType<typeof serverSpawnArgs>,
): ChildProcess {
  for (let attempt = 1; ; attempt++) {
    try {
      return spawn(s.command, s.args, s.options);
    } catch (e) {
      if (errnoCode(e) !== 'ETXTBSY' || attempt >= ETXTBSY_ATTEMPTS) throw e;
      Atomics.wait(pause, 0, 0, ETXTBSY_STEP_MS * attempt);
    }
  }
}
