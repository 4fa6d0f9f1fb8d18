/**
 * Where the server command resolves, the way the host resolves it (host-compat §7):
 * argv[0] looked up on `<package>/bin` + PATH. Pure lookup, no execution.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export type CommandResolution =
  | { found: true; path: string; via: 'package-bin' | 'PATH' | 'absolute' }
  | { found: false; reason: string };

function isExecutableFile(p: string): 'ok' | 'missing' | 'not-executable' | 'directory' {
  try {
    const st = statSync(p);
    if (st.isDirectory()) return 'directory';
    accessSync(p, constants.X_OK);
    return 'ok';
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EACCES' ? 'not-executable' : 'missing';
  }
}

/** Resolve `command` for a package at `pkgDir` with the given PATH value. */
export function resolveServerCommand(pkgDir: string, command: string, pathEnv: string | undefined): CommandResolution {
  if (isAbsolute(command)) {
    const s = isExecutableFile(command);
    return s === 'ok' ? { found: true, path: command, via: 'absolute' } : { found: false, reason: `${command} is ${s.replace('-', ' ')}` };
  }
  if (command.includes('/') || command.includes('\\')) {
    return { found: false, reason: `"${command}" contains a path separator; the host runs it relative to the workspace, not the package (put the server in bin/ and name it bare)` };
  }
  const dirs = [join(pkgDir, 'bin'), ...(pathEnv ?? '').split(delimiter).filter(Boolean)];
  let lastProblem: string | undefined;
  for (const [i, dir] of dirs.entries()) {
    const candidate = join(dir, command);
    const s = isExecutableFile(candidate);
    if (s === 'ok') return { found: true, path: candidate, via: i === 0 ? 'package-bin' : 'PATH' };
    if (s !== 'missing' && i === 0) lastProblem = `${candidate} is ${s === 'directory' ? 'a directory' : 'not executable (chmod +x it)'}`;
  }
  return { found: false, reason: lastProblem ?? `"${command}" is not in the package's bin/ nor on PATH` };
}
