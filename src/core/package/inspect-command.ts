/**
 * The one inspection of `capabilityServer.command`, used by install (to say when
 * the server cannot start yet, and whether to fetch a prebuilt binary) and by
 * doctor. Finds the program the way the host's spawn would
 * (host-compat §7: a bare name is looked up on `PATH` with `<package>/bin`
 * first), and says clearly why it would not start: missing, a directory, a
 * dangling symlink, not executable, built for another machine, a `#!`
 * interpreter that is not there, or a path leaving the package (hardening D27,
 * F39). Never runs anything.
 */
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { errnoCode } from '../errors.js';
import { isFileKindRefusal, readRegularFileSync } from '../fs/read-regular-file.js';

export type CommandInspection =
  | {
      ok: true;
      /** Absolute path of the program to spawn. */
      path: string;
      /** 'path': found outside the package (on PATH, or through a symlink in it that leads out). */
      where: 'package-bin' | 'package' | 'path';
      /** With where 'path' through a link in the package: the link and where it leads (`bin/srv -> /usr/bin/sh`). */
      link?: string;
      detail: string;
      /** Works, but not the way it should (shown as a warning). */
      warning?: string;
    }
  | { ok: false; detail: string };

/**
 * What install, repair and "already installed" report about the server command: where it
 * was found, in the package's own terms (`bin/echo-node (executable)`) and never as an
 * absolute path, which for a fresh install would name the staging directory it was
 * inspected in (removed by then), not the store.
 */
export function commandFinding(c: CommandInspection): { found: boolean; detail: string } {
  return c.ok ? { found: true, detail: c.warning ? `${c.detail} (${c.warning})` : c.detail } : { found: false, detail: c.detail };
}

const inside = (root: string, p: string): boolean => {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * Why `file` cannot be executed, or undefined when it can. Synchronous calls, as in
 * formatProblem: each is one cheap syscall on a path already in the kernel's cache, and
 * an inspection makes a dozen or more of them (the package's bin/, the #! interpreter,
 * PATH's directories), one after the other. Through libuv's pool each cost a round trip
 * of two thread hand-offs: a warm `install --frozen` of 20 entries, which inspects every
 * server, was ~400 such round trips, most of its run spent idle (docs/performance.md,
 * round nine).
 */
function executableProblem(file: string, shown: string): string | undefined {
  let l;
  try {
    l = lstatSync(file);
  } catch (e) {
    return errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR' ? 'missing' : `cannot be read (${errnoCode(e) ?? String(e)})`;
  }
  let s;
  try {
    s = statSync(file);
  } catch {
    let target = '?';
    if (l.isSymbolicLink()) {
      try {
        target = readlinkSync(file);
      } catch {
        target = '?';
      }
    }
    return `${shown} is a dangling symlink (-> ${target})`;
  }
  if (s.isDirectory()) return `${shown} is a directory, not a program`;
  if (!s.isFile()) return `${shown} is not a regular file`;
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return `${shown} is not executable (run \`chmod +x ${shown}\`)`;
  }
  return undefined;
}

const ELF_MACHINES: Record<number, string> = {
  3: 'ia32',
  40: 'arm',
  62: 'x64',
  183: 'arm64',
  243: 'riscv64',
  8: 'mips',
  21: 'ppc64',
  22: 's390x',
};

/** Problems visible in the first bytes: wrong architecture, foreign format, a missing interpreter. */
function formatProblem(file: string, shown: string, searchPath: string[]): { problem?: string; warning?: string } {
  let head: Buffer;
  try {
    // Through the regular-file guard: a FIFO swapped in after executableProblem's stat is refused, never read.
    const got = readRegularFileSync(file, 'The server command', { head: 256 });
    if (!got) return {};
    head = got;
  } catch (e) {
    if (isFileKindRefusal(e)) return { problem: `${shown} is not a regular file` };
    return {};
  }
  if (head.length >= 20 && head[0] === 0x7f && head.toString('latin1', 1, 4) === 'ELF') {
    if (process.platform !== 'linux' && process.platform !== 'freebsd') return { problem: `${shown} is a Linux (ELF) executable; this is ${process.platform}` };
    const machine = head[5] === 2 ? head.readUInt16BE(18) : head.readUInt16LE(18);
    const arch = ELF_MACHINES[machine];
    if (arch !== process.arch) return { problem: `${shown} is built for ${arch ?? `machine 0x${machine.toString(16)}`}; this machine is ${process.arch}` };
    return {};
  }
  const magic = head.length >= 4 ? head.readUInt32BE(0) : 0;
  if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic) && process.platform !== 'darwin') {
    return { problem: `${shown} is a macOS (Mach-O) executable; this is ${process.platform}` };
  }
  if (head.length >= 2 && head.toString('latin1', 0, 2) === 'MZ' && process.platform !== 'win32') {
    return { problem: `${shown} is a Windows executable; this is ${process.platform}` };
  }
  if (head.toString('latin1', 0, 2) === '#!') {
    const line = head.toString('utf8').split('\n')[0]!.slice(2).trim();
    const [interp, ...rest] = line.split(/\s+/);
    if (!interp) return { problem: `${shown} has an empty #! line` };
    if (executableProblem(interp, interp) !== undefined) return { problem: `${shown} needs the interpreter ${interp}, which is not there or not executable` };
    if (interp.endsWith('/env')) {
      const prog = rest.find((a) => !a.startsWith('-'));
      if (prog && !prog.includes('=') && !findOnPath(prog, searchPath))
        return { problem: `${shown} runs \`${prog}\` (#!${line}), which is not on the server's PATH` };
    }
    return {};
  }
  return { warning: `${shown} has no #! line and is not a known binary format: it would run as a /bin/sh script` };
}

/**
 * Where a program in the package really is when a symlink takes it out of the package
 * (`bin/srv -> /usr/bin/python3`, a `bin -> /usr/bin` directory link): a path install may hold
 * such links (crates and git trees may not: tree-scan.ts), and the content hash skips them, so
 * what runs is neither shipped in the package nor pinned by its hash. Undefined when it stays inside.
 */
function leavesPackage(pkgReal: string, file: string): string | undefined {
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch {
    return undefined;
  }
  return inside(pkgReal, real) ? undefined : real;
}

function findOnPath(name: string, dirs: string[]): string | undefined {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (executableProblem(candidate, candidate) === undefined) return candidate;
  }
  return undefined;
}

/**
 * Resolve `command` for a package at `packageDir`, with `inheritedPath` the PATH
 * the server inherits (before `<package>/bin` is prepended).
 */
export async function inspectServerCommand(packageDir: string, command: string, inheritedPath: string): Promise<CommandInspection> {
  if (command.trim() === '') return { ok: false, detail: 'capabilityServer.command is empty' };
  if (command.includes('\0')) return { ok: false, detail: 'capabilityServer.command contains a NUL byte' };
  let pkgReal: string;
  try {
    // The native realpath(3), as fs/promises' realpath is (not the JS walk of realpathSync).
    pkgReal = realpathSync.native(packageDir);
  } catch {
    pkgReal = resolve(packageDir);
  }
  const bin = join(pkgReal, 'bin');
  // Empty PATH entries mean "the current directory" to execvp: never search those.
  const searchPath = [bin, ...inheritedPath.split(delimiter).filter((d) => d !== '' && isAbsolute(d))];
  const shownCmd = JSON.stringify(command);

  if (command.includes('/')) {
    if (isAbsolute(command)) {
      // Inside the package as named or as resolved (an owned store entry is a symlink to its version directory).
      if (!inside(pkgReal, normalize(command)) && !inside(resolve(packageDir), normalize(command)))
        return { ok: false, detail: `command ${shownCmd} is an absolute path outside the package; ship the server in bin/ and name it without a path` };
    } else if (!inside(pkgReal, resolve(pkgReal, command))) {
      return { ok: false, detail: `command ${shownCmd} leaves the package (../); ship the server in bin/ and name it without a path` };
    }
    if (!isAbsolute(command)) {
      // The host (host-compat §7) runs argv[0] with cwd = the workspace: "bin/srv" would be
      // <workspace>/bin/srv, not the package's file. Never spawn what the host would not.
      return {
        ok: false,
        detail: `command ${shownCmd} contains "/": the host runs it relative to the workspace, not the package, so it would not start there; name it \`${command.split('/').pop()}\` and keep it in bin/`,
      };
    }
    const file = command;
    const shown = relative(pkgReal, file) || file;
    const problem = executableProblem(file, shown);
    if (problem) return { ok: false, detail: problem === 'missing' ? `${shown} does not exist in the package` : problem };
    const fmt = formatProblem(file, shown, searchPath);
    if (fmt.problem) return { ok: false, detail: fmt.problem };
    const warning = fmt.warning;
    const real = leavesPackage(pkgReal, file);
    if (real)
      return {
        ok: true,
        path: file,
        where: 'path',
        link: `${shown} -> ${real}`,
        detail: `${shown} is a symlink to ${real}, outside the package (not shipped in it, not covered by its content hash)`,
        ...(warning ? { warning } : {}),
      };
    return { ok: true, path: file, where: 'package', detail: `${shown} in the package`, ...(warning ? { warning } : {}) };
  }

  const inBin = join(bin, command);
  const binProblem = executableProblem(inBin, `bin/${command}`);
  if (binProblem === undefined) {
    const fmt = formatProblem(inBin, `bin/${command}`, searchPath);
    if (fmt.problem) return { ok: false, detail: fmt.problem };
    const real = leavesPackage(pkgReal, inBin);
    if (real)
      return {
        ok: true,
        path: inBin,
        where: 'path',
        link: `bin/${command} -> ${real}`,
        detail: `bin/${command} is a symlink to ${real}, outside the package (not shipped in it, not covered by its content hash)`,
        ...(fmt.warning ? { warning: fmt.warning } : {}),
      };
    return { ok: true, path: inBin, where: 'package-bin', detail: `bin/${command} (executable)`, ...(fmt.warning ? { warning: fmt.warning } : {}) };
  }
  // Something named like the command in bin/ that cannot run is the author's bug, even if PATH has another.
  if (binProblem !== 'missing') return { ok: false, detail: binProblem };
  const found = findOnPath(command, searchPath.slice(1));
  if (!found) return { ok: false, detail: `${shownCmd} is neither in the package's bin/ nor on PATH` };
  const fmt = formatProblem(found, found, searchPath);
  if (fmt.problem) return { ok: false, detail: fmt.problem };
  return {
    ok: true,
    path: found,
    where: 'path',
    detail: `${command} found on PATH at ${found} (not shipped in the package)`,
    ...(fmt.warning ? { warning: fmt.warning } : {}),
  };
}
