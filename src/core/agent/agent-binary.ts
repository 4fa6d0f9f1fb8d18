/**
 * Where the installed agent is: the binary `YOLOP_BIN` names, else `yolop` on
 * PATH. Only absolute PATH entries are searched: an empty or relative entry means
 * "the current directory", and running whatever `./yolop` a cloned repository
 * ships just to learn a version would be running untrusted code.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export type AgentBinary = { found: true; path: string; realPath: string } | { found: false; reason: string };

type Env = Record<string, string | undefined>;

function executableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function names(platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? ['yolop.exe'] : ['yolop'];
}

function onPath(command: string[], env: Env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    for (const name of command) {
      const file = join(dir, name);
      if (executableFile(file)) return file;
    }
  }
  return undefined;
}

function found(path: string): AgentBinary {
  let realPath = path;
  try {
    realPath = realpathSync(path);
  } catch {
    // Raced away: the probe will say so.
  }
  return { found: true, path, realPath };
}

/** Find the agent binary. Never throws: "not found" is an answer (the agent may come later). */
export function findAgentBinary(env: Env, cwd = process.cwd(), platform: NodeJS.Platform = process.platform): AgentBinary {
  const named = env.YOLOP_BIN;
  if (named !== undefined && named !== '') {
    // A bare name is looked up on PATH; anything with a separator is a path.
    if (!named.includes('/') && !named.includes('\\')) {
      const hit = onPath([named], env);
      return hit ? found(hit) : { found: false, reason: `YOLOP_BIN=${named} is not on PATH` };
    }
    const file = resolve(cwd, named);
    return executableFile(file) ? found(file) : { found: false, reason: `YOLOP_BIN=${named} is not an executable file` };
  }
  const hit = onPath(names(platform), env);
  return hit ? found(hit) : { found: false, reason: 'no yolop on PATH' };
}
