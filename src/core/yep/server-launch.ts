/**
 * How the host starts a capability server (host-compat §7): `command` + `args`
 * as argv (no shell), cwd = the workspace root, PATH = `<package>/bin:` + the
 * inherited PATH, secrets and env-mapped config added to the environment.
 */
import type { SpawnOptions } from 'node:child_process';
import { delimiter, join } from 'node:path';

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
