/**
 * What every oclif-free runner (fast-path.ts for `list`, fast-doctor.ts, fast-net.ts for
 * `install` and `update`, fast-cmd.ts for enable, disable, remove, set-secret, verify) needs before and after it runs: whether oclif would
 * print something of its own in this environment (then the runner declines),
 * and a stdout write that does not build process.stdout. Small on purpose:
 * fast-net.cjs holds this and its argument check only.
 */
import { existsSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * True when oclif would add output of its own (debug logs, a JSON theme, warnings) or
 * change the environment (it deletes YEP_EXT_REDIRECTED before a command runs, so the
 * processes a command starts would not see it), or we are told not to.
 */
export function oclifWouldDiffer(env: NodeJS.ProcessEnv, json: boolean): boolean {
  const set = (k: string): boolean => env[k] !== undefined && env[k] !== '';
  if (['YEP_EXT_NO_FAST_PATH', 'DEBUG', 'YEP_EXT_DEBUG', 'YEP_EXT_CONTENT_TYPE', 'CLI_FLAGS_DEBUG', 'YEP_EXT_REDIRECTED'].some(set)) return true;
  if (env.NODE_ENV === 'development' || env.NODE_ENV === 'test') return true;
  // oclif's engine warning (package.json engines: node >=20.18.1).
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 18)) return true;
  if (json && !['1', 'true'].includes(env.YEP_EXT_DISABLE_THEME ?? '')) {
    // oclif colours --json output with a user theme file: <oclif config dir>/theme.json.
    const home = env.HOME || homedir() || tmpdir();
    const configDir = env.YEP_EXT_CONFIG_DIR || join(env.XDG_CONFIG_HOME || join(home, '.config'), 'yep-ext');
    if (existsSync(join(configDir, 'theme.json'))) return true;
  }
  return false;
}

/**
 * Write to fd 1 directly: touching process.stdout loads Node's stream stack
 * (~7 ms here). Handles partial writes and a non-blocking pipe (EAGAIN: wait and
 * retry); a closed pipe (EPIPE) is ignored, as Node ignores it for console.log.
 */
export function writeStdout(text: string): void {
  let buf = Buffer.from(text, 'utf8');
  while (buf.length > 0) {
    try {
      buf = buf.subarray(writeSync(1, buf));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
}
